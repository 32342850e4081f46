#!/usr/bin/python3
"""Opens `rdmapcap report` pages in headless Chromium (Debian's python3-selenium
and chromium-driver, as the site test does) and checks them against rdmapcap's
own JSON.

For each capture in CAPTURES and each language (en, zh):
- the page opens from disk (file://) with no console entry of level SEVERE,
  its <html lang> is the language asked for, and its heading is in it;
- every conversation of `rdmapcap summary --json` has its section, and no
  other section exists;
- per requester QP, the timeline shows as many CE ticks and CNP ticks as the
  summary counts (ecn_ce, cnps), and so does the overview plot's lane, and the PFC table's paused time per sender
  and priority is the summary's paused_ns; the paused intervals drawn on the
  timeline add up to the same time;
- every event of `rdmapcap decode --json --all` above the info level, and
  every end-of-capture conclusion, is a row of an events table (same type,
  same frame), and nothing else is; every conclusion is also a finding;
- every link to a frame leads to an element of the page; following one to a
  frame on a later ladder page shows that page; the page buttons and the zoom
  work;
- a screenshot goes to OUT_DIR.

With --docs DIR, also writes the chapters' screenshot of the congestion
capture: DIR/en/img/report-congestion.png and DIR/zh/img/report-congestion.png
(scripts/regen-docs.sh).

    browse_report.py --rdmapcap PATH --data DIR --out OUT_DIR [--docs DIR]
"""

import argparse
import collections
import json
import os
import subprocess
import sys
import time

try:
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError as e:
    sys.exit(f"rdmalab: the report test needs Debian's python3-selenium ({e}); "
             "run scripts/install-deps.sh")

from headless import severe_logs, start_browser

# A plain RC capture, the congestion/PFC capture (CE, CNPs, pauses, a
# storm), a NAK with its go-back-N retransmission, and a timeout whose
# retries outlast the capture (end-of-capture conclusions), and rping's
# connection set-up by the CM. The congestion capture's ladders need several
# pages (698 packets, 100 a page): paging and links into later pages.
CAPTURES = ["rc_pingpong_s64.pcap", "congestion_pfc.pcap", "loss_drop_one_nak.pcap",
            "loss_tail_drop_timeout.pcap", "rping_cm.pcap"]
LANGS = ("en", "zh")
failures = []


def fail(message):
    failures.append(message)
    print(f"FAIL: {message}", flush=True)


def run(cmd):
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    # 1: the capture holds protocol errors, still a complete answer.
    if res.returncode not in (0, 1):
        fail(f"{' '.join(cmd)} exited {res.returncode}: {res.stderr}")
    return res.stdout


def expected_events(decode_lines):
    """(type, frame, end of capture) of every event rdmapcap shows above info."""
    rows = collections.Counter()
    for line in decode_lines:
        obj = json.loads(line)
        if obj.get("end_of_capture"):
            rows[(obj["event"]["type"], obj["event"]["frame"], 1)] += 1
            continue
        for e in obj.get("events", []):
            if e["severity"] != "info":
                rows[(e["type"], e["frame"], 0)] += 1
    return rows


def check_report(driver, rdmapcap, data, out_dir, capture, lang):
    where = f"{capture} ({lang})"
    path = os.path.join(data, capture)
    html = os.path.join(out_dir, f"{capture}.{lang}.html")
    run([rdmapcap, "report", path, "-o", html, "--lang", lang])
    summary = json.loads(run([rdmapcap, "summary", "--json", path]))
    decode = run([rdmapcap, "decode", "--json", "--all", path]).splitlines()

    driver.get_log("browser")
    driver.get("file://" + os.path.abspath(html))
    WebDriverWait(driver, 20, poll_frequency=0.05).until(
        lambda d: d.execute_script("return document.readyState === 'complete'"))
    time.sleep(0.05)  # let the page's script report its errors
    for message in severe_logs(driver):
        fail(f"{where}: console error: {message}")
    if driver.find_element(By.TAG_NAME, "html").get_attribute("lang") != (
            "zh-CN" if lang == "zh" else "en"):
        fail(f"{where}: <html lang> is not {lang}")
    heading = driver.find_element(By.TAG_NAME, "h1").text
    if (lang == "zh") != ("报告" in heading):
        fail(f"{where}: heading {heading!r} is not in {lang}")

    # Conversations.
    js = driver.execute_script
    sections = js("return Array.from(document.querySelectorAll('section.conv'))"
                  ".map(s => parseInt(s.dataset.conv, 10))")
    ids = [c["id"] for c in summary["conversations"]]
    if sections != ids:
        fail(f"{where}: conversation sections {sections}, summary has {ids}")
    ce_total = 0
    for conv in summary["conversations"]:
        for k, ch in enumerate(conv["channels"], start=1):
            plot = f"plot-{conv['id']}-{k}"
            got = js(f"var p = document.getElementById('{plot}'); return p ? "
                     "[p.querySelectorAll('line.ce').length, p.querySelectorAll('line.cnp').length,"
                     " p.querySelectorAll('rect.qdelay').length] : null")
            if got is None:
                fail(f"{where}: no timeline {plot}")
            elif got != [ch["ecn_ce"], ch["cnps"], ch["rtt_samples"]]:
                fail(f"{where}: {plot} shows {got[0]} CE and {got[1]} CNP ticks and {got[2]} "
                     f"queueing delays, the summary counts {ch['ecn_ce']}, {ch['cnps']} and "
                     f"{ch['rtt_samples']} RTTs")
            ce_total += ch["ecn_ce"] + ch["cnps"]

    # The overview: one lane per requester QP (16 at most), its ticks as the
    # summary counts them; no overview when there is nothing to draw.
    chans = [ch for conv in summary["conversations"] for ch in conv["channels"]][:16]
    ov = js("var p = document.getElementById('overview-plot'); return p ? "
            "[p.querySelectorAll('g.lane').length, p.querySelectorAll('line.ce').length,"
            " p.querySelectorAll('line.cnp').length, p.querySelectorAll('rect.qdelay').length]"
            " : null")
    if chans or summary.get("pfc"):
        want = [len(chans), sum(c["ecn_ce"] for c in chans), sum(c["cnps"] for c in chans),
                sum(c["rtt_samples"] for c in chans)]
        if ov != want:
            fail(f"{where}: overview shows [lanes, CE, CNP, RTT] {ov}, the summary {want}")
    elif ov is not None:
        fail(f"{where}: an overview with nothing to draw")

    # PFC: the table and the drawn intervals against the summary.
    for p in summary.get("pfc", []):
        prio = 8 if p["priority"] is None else p["priority"]
        sel = f'tr[data-src="{p["src"]}"][data-priority="{prio}"]'
        row = js(f"var r = document.querySelector('table.pfc {sel}');"
                 " return r ? parseInt(r.dataset.pausedNs, 10) : null")
        if row != p["paused_ns"]:
            fail(f"{where}: PFC row {sel} says {row} ns paused, the summary {p['paused_ns']}")
        if ids:
            drawn = js(f"return Array.from(document.querySelectorAll("
                       f"'#plot-{ids[0]}-1 rect.pfc[data-src=\"{p['src']}\"]"
                       f"[data-priority=\"{prio}\"]')).reduce((a, r) => a + "
                       "parseInt(r.dataset.ns, 10), 0)")
            if drawn != p["paused_ns"]:
                fail(f"{where}: the timeline draws {drawn} ns paused for {sel}, "
                     f"the summary {p['paused_ns']}")

    # Events: the same (type, frame) rows as rdmapcap's JSON.
    expected = expected_events(decode)
    rows = js("return Array.from(document.querySelectorAll('table.events tbody tr'))"
              ".map(r => [r.dataset.type, parseInt(r.dataset.frame, 10),"
              " parseInt(r.dataset.end, 10)])")
    got = collections.Counter(tuple(r) for r in rows)
    if got != expected:
        fail(f"{where}: events table differs from rdmapcap decode --json: only in the page "
             f"{sorted((got - expected).items())[:8]}, only in rdmapcap "
             f"{sorted((expected - got).items())[:8]}")
    findings = collections.Counter(
        tuple(f) for f in js("return Array.from(document.querySelectorAll('li.finding'))"
                             ".map(l => [l.dataset.type, parseInt(l.dataset.frame, 10), 1])"))
    conclusions = collections.Counter({k: v for k, v in expected.items() if k[2] == 1})
    if findings != conclusions:
        fail(f"{where}: findings {sorted(findings)} differ from the conclusions "
             f"{sorted(conclusions)}")

    # Links to frames resolve.
    dangling = js("return Array.from(document.querySelectorAll('a[href^=\"#\"]'))"
                  ".map(a => a.getAttribute('href').slice(1))"
                  ".filter(id => !document.getElementById(id))")
    if dangling:
        fail(f"{where}: links to missing anchors {dangling[:5]}")
    links = js("return document.querySelectorAll('a[href^=\"#f\"]').length")

    # Paging and zoom on the first ladder; a link into a later page opens it.
    pages = js("var l = document.querySelector('.ladder');"
               " return l ? l.querySelectorAll('.page').length : 0")
    if ids and pages == 0:
        fail(f"{where}: no ladder drawn")
    if pages > 1:
        js("document.querySelector('.ladder .next').click()")
        if js("return document.querySelector('.ladder .page[data-page=\"1\"]').hidden"):
            fail(f"{where}: 'next' did not show the ladder's second page")
        before = js("return document.querySelector('.ladder .page[data-page=\"1\"] svg')"
                    ".getBoundingClientRect().width")
        js("document.querySelector('.ladder .zin').click()")
        after = js("return document.querySelector('.ladder .page[data-page=\"1\"] svg')"
                   ".getBoundingClientRect().width")
        if not after > before:
            fail(f"{where}: zoom in left the ladder {before} px wide ({after})")
        js("document.querySelector('.ladder .prev').click()")
        frame = js("var g = document.querySelector('.ladder .page[data-page=\"1\"] g[id]');"
                   " return g ? g.id : null")
        if frame:
            js(f"location.hash = '#{frame}'")
            WebDriverWait(driver, 5, poll_frequency=0.05).until(
                lambda d: not d.execute_script(
                    "return document.querySelector('.ladder .page[data-page=\"1\"]').hidden"))
    for message in severe_logs(driver):
        fail(f"{where}: console error after clicking: {message}")
    driver.save_screenshot(os.path.join(out_dir, f"{capture}.{lang}.png"))
    print(f"{where}: {len(ids)} conversation(s), {sum(expected.values())} event row(s), "
          f"{ce_total} CE+CNP tick(s), {len(summary.get('pfc', []))} PFC row(s), "
          f"{links} frame link(s), {pages} ladder page(s)", flush=True)


def docs_screenshot(driver, rdmapcap, data, out_dir, docs):
    """The congestion capture's first conversation, as the chapters show it."""
    for lang in LANGS:
        html = os.path.join(out_dir, f"docs-congestion.{lang}.html")
        run([rdmapcap, "report", os.path.join(data, "congestion_pfc.pcap"), "-o", html,
             "--lang", lang, "--rows", "200"])
        driver.get("file://" + os.path.abspath(html))
        # The first requester's timeline and the top of its ladder.
        driver.set_window_size(1400, 900)
        driver.execute_script(
            "document.getElementById('plot-1-1').previousElementSibling.scrollIntoView()")
        time.sleep(0.1)
        target = os.path.join(docs, lang, "img", "report-congestion.png")
        os.makedirs(os.path.dirname(target), exist_ok=True)
        driver.save_screenshot(target)
        print(f"docs: wrote {target}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rdmapcap", required=True)
    p.add_argument("--data", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--docs")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    driver = start_browser("report", 1400, 1000)
    try:
        if args.docs:
            docs_screenshot(driver, args.rdmapcap, args.data, args.out, args.docs)
        else:
            for capture in CAPTURES:
                for lang in LANGS:
                    try:
                        check_report(driver, args.rdmapcap, args.data, args.out, capture, lang)
                    except TimeoutException:
                        fail(f"{capture} ({lang}): timed out")
    finally:
        driver.quit()
    if failures:
        print(f"{len(failures)} failure(s)")
        sys.exit(1)


if __name__ == "__main__":
    main()
