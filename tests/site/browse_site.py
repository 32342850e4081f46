#!/usr/bin/python3
"""Opens every page of the built course site (scripts/build-site.sh) in
headless Chromium, through Debian's python3-selenium and chromium-driver.

- Every page, from disk (file://): no console entry of level SEVERE, every
  <img> loaded (complete, naturalWidth > 0), and its language switch names
  the same chapter (same file name) in the other language. Followed with a
  click on two pages: it opens that page, whose <html lang> is the other
  language, and that page's switch leads back. The indexes over http too
  (there the search starts its worker and loads its index).
- From disk, the navigation works: index.html's "next" link opens the first
  chapter of its navigation.
- Search, over http (a browser lets a page from disk start no worker): the
  number of pages found is at least the number of pages whose text holds the
  term, and the first result is one of them; a term no page holds finds
  nothing. The expected pages are counted here from the site's own search
  index (the text the search sees), not written down: "ICRC" in English,
  "纪元" (epoch, lab 12's word) in Chinese, and "纪元" in English, which no
  English page holds. (Not a glossary term: the English glossary holds every
  term's Chinese rendering too. Nor one whose characters are everywhere: the
  Chinese search matches a query's characters one by one, so a term of rare
  characters is the one whose first result is predictable.)
- A Chinese page shows a figure's Chinese version (FIGURES_DIR/X.zh.svg)
  wherever there is one.
- Screenshots of a chapter and of the search results under OUT_DIR.

    browse_site.py SITE_DIR FIGURES_DIR OUT_DIR
"""

import functools
import http.server
import json
import os
import re
import sys
import threading
import time

try:
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError as e:
    sys.exit(f"rdmalab: the site test needs Debian's python3-selenium ({e}); "
             "run scripts/install-deps.sh")

from headless import severe_logs, start_browser

LANGS = ("en", "zh")
failures = []


def fail(message):
    failures.append(message)
    print(f"FAIL: {message}", flush=True)


def lang_root(site, lang):
    return site if lang == "en" else os.path.join(site, "zh")


def pages_of(site, lang):
    root = lang_root(site, lang)
    return sorted(f for f in os.listdir(root) if f.endswith(".html"))


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def start_server(site):
    handler = functools.partial(QuietHandler, directory=site)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def wait_loaded(driver):
    WebDriverWait(driver, 20, poll_frequency=0.05).until(
        lambda d: d.execute_script(
            "return document.readyState === 'complete' &&"
            " Array.from(document.images).every(i => i.complete)"))


def check_page(driver, url, where):
    driver.get_log("browser")  # drop what earlier pages left
    driver.get(url)
    try:
        wait_loaded(driver)
    except TimeoutException:
        fail(f"{where}: did not finish loading")
        return
    time.sleep(0.05)  # let scripts started by the load report their errors
    for message in severe_logs(driver):
        fail(f"{where}: console error: {message}")
    broken = driver.execute_script(
        "return Array.from(document.images)"
        ".filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src)")
    for src in broken:
        fail(f"{where}: image not loaded: {src}")


def switch_target(driver, lang):
    links = driver.find_elements(By.CSS_SELECTOR, f'a.md-select__link[hreflang="{lang}"]')
    return links[0].get_attribute("href") if links else None


def check_switch(driver, site, lang, other, page):
    here = "file://" + os.path.join(lang_root(site, lang), page)
    driver.get(here)
    target = switch_target(driver, other)
    expected = "file://" + os.path.join(lang_root(site, other), page)
    if target != expected:
        fail(f"{lang}/{page}: the switch to {other} leads to {target}, not {expected}")
        return
    # Follow it as a reader does: open the menu's link.
    driver.execute_script(
        f"document.querySelector('a.md-select__link[hreflang=\"{other}\"]').click()")
    WebDriverWait(driver, 20, poll_frequency=0.05).until(lambda d: d.current_url == expected)
    wait_loaded(driver)
    if driver.find_element(By.TAG_NAME, "html").get_attribute("lang") != other:
        fail(f"{lang}/{page}: the {other} page it leads to is not marked lang={other}")
    if switch_target(driver, lang) != here:
        fail(f"{other}/{page}: the switch back to {lang} does not lead to {here}")


def index_pages(site, lang):
    """Page file -> the text the search indexes for it (all its sections)."""
    with open(os.path.join(lang_root(site, lang), "search", "search_index.json"),
              encoding="utf-8") as f:
        docs = json.load(f)["docs"]
    text = {}
    for doc in docs:
        page = doc["location"].split("#", 1)[0] or "index.html"
        # The Chinese index has zero-width spaces around Han characters.
        text[page] = text.get(page, "") + " " + (doc["title"] + " " + doc["text"]).replace(
            "\u200b", "")
    return text


def pages_holding(site, lang, term):
    pattern = re.compile((r"\b" + re.escape(term) + r"\b") if term.isascii() else re.escape(term),
                         re.IGNORECASE)
    return {page for page, text in index_pages(site, lang).items() if pattern.search(text)}


def check_search(driver, base, site, lang, term, shot=None):
    expected = pages_holding(site, lang, term)
    driver.get(base + ("" if lang == "en" else "zh/") + "index.html")
    wait_loaded(driver)
    box = driver.find_element(By.CSS_SELECTOR, '[data-md-component="search-query"]')
    box.click()
    box.send_keys(term)
    # The result list is filled by the search worker once its index is built.
    meta = driver.find_element(By.CSS_SELECTOR, ".md-search-result__meta")
    placeholder = meta.text

    def answered(d):
        text = meta.text
        return text and text != placeholder and not text.startswith(("Initializing", "正在初始化"))

    try:
        WebDriverWait(driver, 30, poll_frequency=0.05).until(answered)
    except TimeoutException:
        fail(f"search {lang} {term!r}: no answer (result line: {meta.text!r})")
        return
    results = driver.find_elements(By.CSS_SELECTOR, ".md-search-result__item > a")
    count_text = meta.text
    numbers = re.findall(r"\d+", count_text)
    found = int(numbers[0]) if numbers else 0
    where = f"search {lang} {term!r}"
    print(f"{where}: {count_text!r}; pages whose text holds it: {len(expected)}", flush=True)
    for message in severe_logs(driver):
        fail(f"{where}: console error: {message}")
    if shot:
        driver.save_screenshot(shot)
    if not expected:
        if found or results:
            fail(f"{where}: no page holds the term, yet the search found {found}")
        return
    if found < len(expected):
        fail(f"{where}: found {found} page(s), but {len(expected)} hold the term: "
             f"{sorted(expected)}")
    if not results:
        fail(f"{where}: no result listed")
        return
    first = results[0].get_attribute("href").split("#", 1)[0].rsplit("/", 1)[-1]
    if first not in expected:
        fail(f"{where}: the first result {first} does not hold the term")


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    site, figures, out = (os.path.abspath(a) for a in sys.argv[1:4])
    os.makedirs(out, exist_ok=True)
    for lang in LANGS:
        if "index.html" not in pages_of(site, lang):
            sys.exit(f"rdmalab: {lang_root(site, lang)} has no index.html: build the site first")
    if pages_of(site, "en") != pages_of(site, "zh"):
        fail(f"the languages have different pages: {pages_of(site, 'en')} vs "
             f"{pages_of(site, 'zh')}")

    server = start_server(site)
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    driver = start_browser("site", 1280, 900)
    start = time.monotonic()
    try:
        # Every page from disk, with its language switch: the link must name
        # the same file in the other language (which this loop opens too).
        opened = 0
        for lang, other in (("en", "zh"), ("zh", "en")):
            for page in pages_of(site, lang):
                here = "file://" + os.path.join(lang_root(site, lang), page)
                check_page(driver, here, f"file {lang}/{page}")
                opened += 1
                target = switch_target(driver, other)
                expected = "file://" + os.path.join(lang_root(site, other), page)
                if target != expected:
                    fail(f"{lang}/{page}: the switch to {other} leads to {target}, not {expected}")
                if lang == "zh":
                    for src in driver.execute_script(
                            "return Array.from(document.images).map(i => i.src)"):
                        name = src.rsplit("/", 1)[-1]
                        zh_name = name[:-len(".svg")] + ".zh.svg"
                        if "/figures/" in src and not name.endswith(".zh.svg") and \
                                os.path.isfile(os.path.join(figures, zh_name)):
                            fail(f"zh/{page}: shows {name} although {zh_name} exists")
        print(f"opened {opened} pages from disk, each with a switch to its other language",
              flush=True)
        # Followed as a reader does, there and back, on the index and on a chapter.
        chapters = [p for p in pages_of(site, "en") if p != "index.html"]
        for page in ("index.html", chapters[len(chapters) // 2]):
            check_switch(driver, site, "en", "zh", page)
        # Over http, the indexes (search active: its worker and index load).
        for lang in LANGS:
            check_page(driver, base + ("" if lang == "en" else "zh/") + "index.html",
                       f"http {lang}/index.html")

        # From disk, the navigation: the index's "next" link.
        driver.get("file://" + os.path.join(site, "index.html"))
        wait_loaded(driver)
        nxt = driver.find_elements(By.CSS_SELECTOR, "a.md-footer__link--next")
        nav = driver.find_elements(By.CSS_SELECTOR, "nav.md-nav--primary a.md-nav__link")
        if not nxt or not nav:
            fail("file index.html: no navigation or no 'next' link")
        else:
            href = nxt[0].get_attribute("href")
            nxt[0].click()
            WebDriverWait(driver, 20, poll_frequency=0.05).until(lambda d: d.current_url == href)
            wait_loaded(driver)
            if not os.path.isfile(href[len("file://"):]):
                fail(f"file index.html: 'next' leads to {href}, not a file of the site")

        # A screenshot of the first Chinese chapter with a figure.
        for page in pages_of(site, "zh"):
            with open(os.path.join(site, "zh", page), encoding="utf-8") as f:
                if 'src="figures/' in f.read():
                    driver.get("file://" + os.path.join(site, "zh", page))
                    wait_loaded(driver)
                    driver.save_screenshot(os.path.join(out, "zh-chapter.png"))
                    break

        check_search(driver, base, site, "en", "ICRC", os.path.join(out, "en-search.png"))
        check_search(driver, base, site, "zh", "纪元", os.path.join(out, "zh-search.png"))
        check_search(driver, base, site, "en", "纪元")
    finally:
        driver.quit()
        server.shutdown()
    print(f"browser checks took {time.monotonic() - start:.1f} s", flush=True)
    if failures:
        print(f"rdmalab: {len(failures)} site check(s) failed", file=sys.stderr)
        return 1
    print("site: every page opened, every image loaded, the switches and the search work")
    return 0


if __name__ == "__main__":
    sys.exit(main())
