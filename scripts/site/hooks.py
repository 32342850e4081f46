"""MkDocs hooks that turn one language of the course (docs/en or docs/zh) into
its half of the site. scripts/build-site.sh runs MkDocs once per language with
a configuration that names this file; config.extra.rdmalab says which
language is being built (lang), the other one (other), where the other
language's pages are relative to this language's site root (other_root) and
the repository's root (repo).

What happens here and nowhere else:
- the navigation is the order in which the language's README.md links its
  chapters, then every chapter it does not link, by file name: a new chapter
  appears without anyone editing a list;
- both languages must have the same chapter files, so that the language
  switch of every page leads to the same chapter in the other language;
- links that leave docs/<lang> (the figures in docs/figures, the screenshots,
  the labs' sources) are copied into the site and the links rewritten to the
  copies, a Chinese page showing a figure's .zh.svg where there is one;
- a paragraph that is only a link to the other language's version of the
  page is dropped (every page's header has the language switch); any other
  link to the other language's chapter leads to that chapter's page there;
- <details> blocks (the exercises' answers) are rendered as Markdown;
- the theme's 404.html (it works only at a server's root) and the sitemap
  (it needs the site's public URL) are left out;
- the Chinese search index gets a zero-width space around every Han
  character, so that each character is a search term of its own (see
  overrides/main.html for the query side).
"""

import json
import os
import posixpath
import re

import jinja2
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File

_LINK = re.compile(r"(!?\[[^\]]*\])\(([^)\s]+)\)")
_FENCE = re.compile(r"^\s*(```|~~~)")
_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_HAN_BOUNDARY = re.compile(f"(?<=[{_HAN}])(?=\\S)|(?<=\\S)(?=[{_HAN}])")
_ZWSP = "\u200b"
_OTHER_MARK = "data-rdmalab-other-language"

# Files copied from outside docs/<lang>: repository path -> site path.
_extra_files = {}


def _settings(config):
    return config["extra"]["rdmalab"]


def _is_local(target):
    return not re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) and not target.startswith(("#", "/"))


def _outside_target(settings, target):
    """The repository path of a link that leaves docs/<lang>, else None. A
    Chinese page gets a figure's Chinese version (docs/figures/X.zh.svg) when
    there is one."""
    if not _is_local(target):
        return None
    path = target.split("#", 1)[0]
    if not path:
        return None
    resolved = posixpath.normpath(posixpath.join("docs", settings["lang"], path))
    if resolved.startswith(f"docs/{settings['lang']}/"):
        return None
    stem, ext = posixpath.splitext(resolved)
    localised = f"{stem}.{settings['lang']}{ext}"
    if (resolved.startswith("docs/figures/") and settings["lang"] != "en"
            and not stem.endswith(f".{settings['lang']}")
            and os.path.isfile(os.path.join(settings["repo"], localised))):
        return localised
    return resolved


def _site_path(repo_path):
    # docs/figures/lab01.svg -> figures/lab01.svg; labs/... stays labs/...
    return repo_path[len("docs/"):] if repo_path.startswith("docs/") else repo_path


def _rewrite(markdown, settings):
    other_dir = f"docs/{settings['other']}/"
    out = []
    in_fence = False
    for line in markdown.split("\n"):
        if _FENCE.match(line):
            in_fence = not in_fence
        if in_fence:
            out.append(line)
            continue
        links = _LINK.findall(line)
        if (len(links) == 1 and _LINK.fullmatch(line.strip())
                and (_outside_target(settings, links[0][1]) or "").startswith(other_dir)):
            continue  # "[中文](../zh/README.md)": the header's language switch replaces it

        def replace(match):
            label, target = match.group(1), match.group(2)
            repo_path = _outside_target(settings, target)
            if repo_path is None:
                return match.group(0)
            if repo_path.startswith(other_dir):
                # Linked as this language's chapter of the same name (so MkDocs
                # checks it), marked, and sent to the other language's page in
                # on_page_content.
                fragment = "#" + target.split("#", 1)[1] if "#" in target else ""
                return f'{label}({repo_path[len(other_dir):]}{fragment}){{: {_OTHER_MARK}="1" }}'
            if repo_path not in _extra_files:
                return match.group(0)  # no such file: MkDocs reports the link as written
            fragment = "#" + target.split("#", 1)[1] if "#" in target else ""
            return f"{label}({_extra_files[repo_path]}{fragment})"

        line = _LINK.sub(replace, line)
        if line.strip() == "<details>":
            line = line.replace("<details>", '<details markdown="1">')
        out.append(line)
    return "\n".join(out)


def _chapters(docs_dir):
    return sorted(f for f in os.listdir(docs_dir) if f.endswith(".md"))


def on_config(config):
    settings = _settings(config)
    docs_dir = config["docs_dir"]
    other_dir = os.path.join(settings["repo"], "docs", settings["other"])
    mine, theirs = set(_chapters(docs_dir)), set(_chapters(other_dir))
    if mine != theirs:
        raise PluginError(
            f"docs/{settings['lang']} and docs/{settings['other']} must hold the same chapters; "
            f"only in docs/{settings['lang']}: {sorted(mine - theirs)}, "
            f"only in docs/{settings['other']}: {sorted(theirs - mine)}")
    # The navigation: README first, then the chapters in the order README
    # links them, then the chapters it does not link.
    with open(os.path.join(docs_dir, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    nav = ["README.md"]
    for _, target in _LINK.findall(readme):
        name = target.split("#", 1)[0]
        if name in mine and name not in nav:
            nav.append(name)
    nav += [name for name in sorted(mine) if name not in nav]
    config["nav"] = nav
    return config


def on_files(files, config):
    settings = _settings(config)
    _extra_files.clear()
    for page in files.documentation_pages():
        with open(page.abs_src_path, encoding="utf-8") as f:
            text = f.read()
        for _, target in _LINK.findall(text):
            repo_path = _outside_target(settings, target)
            if repo_path is None or repo_path.startswith(("docs/en/", "docs/zh/", "../")):
                continue
            if os.path.isfile(os.path.join(settings["repo"], repo_path)):
                _extra_files[repo_path] = _site_path(repo_path)
    for repo_path, site_path in sorted(_extra_files.items()):
        src_dir = os.path.join(settings["repo"], repo_path[: len(repo_path) - len(site_path)])
        files.append(File(site_path, src_dir, config["site_dir"], config["use_directory_urls"]))
    return files


def on_page_markdown(markdown, page, config, files):
    return _rewrite(markdown, _settings(config))


def on_page_content(html, page, config, files):
    other_root = _settings(config)["other_root"]

    def send_to_other(match):
        tag = match.group(0).replace(f' {_OTHER_MARK}="1"', "")
        return re.sub(r'href="(?![a-z]+:|/|#)', f'href="{other_root}', tag)

    return re.sub(f'<a [^>]*{_OTHER_MARK}="1"[^>]*>', send_to_other, html)


class _Verbatim(str):
    """A URL the theme must print as it is (the url filter would drop '..')."""


def on_env(env, config, files):
    original = env.filters["url"]

    @jinja2.pass_context
    def url(context, value):
        if isinstance(value, _Verbatim):
            return str(value)
        return original(context, value)

    env.filters["url"] = url
    return env


def on_page_context(context, page, config, nav):
    settings = _settings(config)
    here = page.file.dest_uri
    depth = here.count("/")
    up = "../" * depth
    names = {"en": "English", "zh": "中文"}
    links = {
        settings["lang"]: _Verbatim(up + here),
        settings["other"]: _Verbatim(up + settings["other_root"] + here),
    }
    config["extra"]["alternate"] = [
        {"name": names[lang], "link": links[lang], "lang": lang} for lang in ("en", "zh")
    ]
    return context


def on_post_build(config):
    # The theme's page for a missing URL loads its styles from the server's
    # root ("/assets/..."): from disk it is broken, and a site read from disk
    # or from any folder of a server has no use for it.
    # The sitemap needs the site's public URL, which a site read from disk
    # has not: without it every <loc> would say None.
    for name in ("404.html", "sitemap.xml", "sitemap.xml.gz"):
        path = os.path.join(config["site_dir"], name)
        if os.path.exists(path):
            os.remove(path)
    if _settings(config)["lang"] != "zh":
        return
    path = os.path.join(config["site_dir"], "search", "search_index.json")
    with open(path, encoding="utf-8") as f:
        index = json.load(f)
    for doc in index["docs"]:
        for key in ("title", "text"):
            doc[key] = _HAN_BOUNDARY.sub(_ZWSP, doc[key])
    with open(path, "w", encoding="utf-8") as f:
        json.dump(index, f, ensure_ascii=False, separators=(",", ":"))
