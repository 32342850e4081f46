#!/usr/bin/env python3
"""The Wireshark plugin inside tshark agrees with rdmapcap.

For every capture in tests/data, tshark with the plugin loaded marks the same
frames with the same events as `rdmapcap decode --json` reports (compared as
sets of frame numbers per event type), display filters on the plugin's fields
select exactly those frames, and a capture whose ICRC was corrupted here is
flagged on the corrupted frame only. On the congestion capture, the IP ECN
field, CNPs and pause frames (802.1Qbb vector and quanta, 802.3x time) agree
with Wireshark's own fields (ip.dsfield.ecn, macc.cbfc.*, macc.pause_time)
and rdmapcap's, and the PFC storm expert item follows its preference.

Usage: tshark_plugin_test.py CHECK --rdmapcap PATH --plugin-dir DIR
                             --data DIR --work DIR [--preload LIBS]

CHECK is one of: events, single_pass, filters, icrc, language, congestion, dcqcn.

tshark only loads plugins from WIRESHARK_PLUGIN_DIR or the personal plugin
folder when it does not run with "special privileges", and it counts root as
such. As root the test therefore runs tshark in a new user namespace
(`unshare --user`), where it is an ordinary user.
"""

import argparse
import collections
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

NAK_EVENTS = {"nak_psn_sequence", "nak_fatal", "rnr_nak"}


class Env:
    def __init__(self, args):
        self.rdmapcap = args.rdmapcap
        self.data = args.data
        self.work = args.work
        os.makedirs(self.work, exist_ok=True)
        # An empty home: no personal preferences, no other copy of the plugin.
        self.home = tempfile.mkdtemp(prefix="home-", dir=self.work)
        os.chmod(self.home, 0o755)
        # No extcap helpers: tshark would start each one at start-up (slow,
        # and under a sanitizer preload they hang).
        self.extcap = os.path.join(self.home, "extcap")
        os.makedirs(self.extcap)
        self.env = dict(os.environ)
        self.env.update({
            "HOME": self.home,
            "XDG_CONFIG_HOME": os.path.join(self.home, ".config"),
            "WIRESHARK_PLUGIN_DIR": args.plugin_dir,
            "WIRESHARK_EXTCAP_DIR": self.extcap,
            "LC_ALL": "C.UTF-8",
            "LANGUAGE": "",
        })
        for var in ("WIRESHARK_CONFIG_DIR", "LANG", "LC_MESSAGES"):
            self.env.pop(var, None)
        if args.preload:
            # A sanitizer build: the plugin needs the sanitizer runtimes,
            # which must be loaded before tshark's own libraries.
            self.env["LD_PRELOAD"] = args.preload
            self.env["ASAN_OPTIONS"] = "detect_leaks=0"
        self.prefix = ["unshare", "--user"] if os.geteuid() == 0 else []

    def tshark(self, capture, *extra):
        cmd = self.prefix + ["tshark", "-n", "-r", capture] + list(extra)
        res = subprocess.run(cmd, env=self.env, capture_output=True, text=True, check=False)
        if res.returncode != 0:
            fail(f"tshark failed ({res.returncode}): {' '.join(cmd)}\n{res.stderr}")
        return res.stdout

    def check_plugin_loaded(self):
        cmd = self.prefix + ["tshark", "-G", "plugins"]
        res = subprocess.run(cmd, env=self.env, capture_output=True, text=True, check=False)
        if "rdmalab" not in res.stdout:
            fail("tshark did not load the rdmalab plugin from WIRESHARK_PLUGIN_DIR="
                 f"{self.env['WIRESHARK_PLUGIN_DIR']}\n{res.stdout}{res.stderr}")

    def captures(self):
        names = sorted(n for n in os.listdir(self.data) if n.endswith((".pcap", ".pcapng")))
        if not names:
            fail(f"no captures in {self.data}")
        return [os.path.join(self.data, n) for n in names]

    def rdmapcap_json(self, capture):
        # --all: pause frames too (not RoCE), which the plugin marks as well.
        res = subprocess.run([self.rdmapcap, "decode", "--json", "--all", "--lang", "en", capture],
                             capture_output=True, text=True, check=False)
        # Exit code 1 means "the capture holds protocol errors": still valid output.
        if res.returncode not in (0, 1):
            fail(f"rdmapcap failed ({res.returncode}) on {capture}\n{res.stderr}")
        return [json.loads(line) for line in res.stdout.splitlines() if line.strip()]


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def rdmapcap_events(env, capture, end_of_capture=True):
    """{event type: {frames}} from rdmapcap."""
    out = collections.defaultdict(set)
    for obj in env.rdmapcap_json(capture):
        if obj.get("end_of_capture"):
            if end_of_capture:
                out[obj["event"]["type"]].add(obj["event"]["frame"])
            continue
        for e in obj.get("events", []):
            out[e["type"]].add(e["frame"])
    return dict(out)


def tshark_events(env, capture, two_pass):
    """{event type: {frames}} from the plugin's rdmalab.event field."""
    args = ["-T", "fields", "-e", "frame.number", "-e", "rdmalab.event",
            "-E", "occurrence=a", "-E", "aggregator=,"]
    if two_pass:
        args.insert(0, "-2")
    out = collections.defaultdict(set)
    for line in env.tshark(capture, *args).splitlines():
        frame, _, events = line.partition("\t")
        for name in filter(None, events.split(",")):
            out[name].add(int(frame))
    return dict(out)


def filtered_frames(env, capture, display_filter, two_pass=True):
    args = ["-Y", display_filter, "-T", "fields", "-e", "frame.number"]
    if two_pass:
        args.insert(0, "-2")
    return {int(x) for x in env.tshark(capture, *args).split()}


def compare(what, got, expected):
    if got != expected:
        lines = [f"{what}: plugin and rdmapcap disagree"]
        for t in sorted(set(got) | set(expected)):
            g, e = got.get(t, set()), expected.get(t, set())
            if g != e:
                lines.append(f"  {t}: plugin only {sorted(g - e)}, rdmapcap only {sorted(e - g)}")
        fail("\n".join(lines))


def check_events(env):
    """Two-pass tshark marks every frame with the events rdmapcap reports."""
    total = 0
    for capture in env.captures():
        expected = rdmapcap_events(env, capture)
        compare(os.path.basename(capture) + " (-2)", tshark_events(env, capture, True), expected)
        total += sum(len(v) for v in expected.values())
    if total == 0:
        fail("no events at all: the comparison proved nothing")
    print(f"events: {len(env.captures())} captures, {total} (event, frame) pairs agree")


def check_single_pass(env):
    """One pass shows every per-packet event; end-of-capture ones need -2."""
    for capture in env.captures():
        expected = rdmapcap_events(env, capture, end_of_capture=False)
        compare(os.path.basename(capture) + " (one pass)", tshark_events(env, capture, False),
                expected)
    print("single_pass: per-packet events agree without -2")


# Captures for the filter checks: between them every filter selects some
# frames, and one clean capture where most select none. (tshark takes about a
# second to start, so the filters are not run on every capture; the events
# check covers all of them through the same fields.)
FILTER_CAPTURES = ["loss_drop_one_nak.pcap", "loss_tail_drop_timeout.pcap",
                   "dead_peer_retry_exceeded.pcap", "reorder_gap5_write.pcap",
                   "read_bw_s512.pcap", "atomic_fetch_add.pcap", "sim_rnr_nak.pcap"]


def check_filters(env):
    """A display filter on a plugin field selects exactly the frames rdmapcap names."""
    seen = collections.Counter()
    for capture in (os.path.join(env.data, n) for n in FILTER_CAPTURES):
        name = os.path.basename(capture)
        records = env.rdmapcap_json(capture)
        ev = rdmapcap_events(env, capture)

        def frames_of(*types):
            return set().union(*(ev.get(t, set()) for t in types))

        timeout_retx = set()
        rnr_retx = set()
        timeout_exp = {}
        for obj in records:
            for e in obj.get("events", []):
                if e["type"] == "retransmission" and e.get("cause") == "timeout":
                    timeout_retx.add(e["frame"])
                if e["type"] == "retransmission" and e.get("cause") == "rnr":
                    rnr_retx.add(e["frame"])
                if e["type"] == "timeout" and "timeout" in e:
                    timeout_exp[e["frame"]] = e["timeout"]
        checks = {
            "rdmalab.retransmission": frames_of("retransmission"),
            "rdmalab.nak": frames_of(*NAK_EVENTS),
            'rdmalab.icrc.status == "bad"': frames_of("icrc_mismatch"),
            "rdmalab.ooo": frames_of("out_of_order"),
            'rdmalab.retrans_cause == "timeout"': timeout_retx,
            'rdmalab.retrans_cause == "rnr"': rnr_retx,
            "rdmalab.rnr_timer": frames_of("rnr_nak"),
            'rdmalab.expert.rnr_nak && _ws.expert.severity == "Warning"': frames_of("rnr_nak"),
            'rdmalab.expert.retransmission && _ws.expert.severity == "Warning"':
                frames_of("retransmission"),
            'rdmalab.expert.still_retrying && _ws.expert.severity == "Warning"':
                frames_of("still_retrying"),
        }
        for flt, expected in checks.items():
            got = filtered_frames(env, capture, flt)
            if got != expected:
                fail(f"{name}: -Y '{flt}' selects {sorted(got)}, rdmapcap says {sorted(expected)}")
            seen[flt] += len(expected)
        # READ responses and atomic ACKs name their request. (Every packet of
        # a multi-packet READ response does; rdmapcap names it on the last
        # one: these captures hold single-packet responses.)
        matched = {e["frame"]: e["related_frame"] for obj in records
                   for e in obj.get("events", []) if e["type"] in ("read_response", "atomic_ack")}
        out = env.tshark(capture, "-2", "-Y", "rdmalab.request_frame", "-T", "fields",
                         "-e", "frame.number", "-e", "rdmalab.request_frame")
        got = {int(f): int(r) for f, r in (line.split("\t") for line in out.splitlines())}
        if got != matched:
            fail(f"{name}: rdmalab.request_frame {got}, rdmapcap says {matched}")
        seen["rdmalab.request_frame"] += len(matched)
        # The inferred timeout exponent, frame by frame.
        out = env.tshark(capture, "-2", "-Y", "rdmalab.timeout", "-T", "fields",
                         "-e", "frame.number", "-e", "rdmalab.timeout")
        got = {int(f): int(t) for f, t in (line.split("\t") for line in out.splitlines())}
        if got != timeout_exp:
            fail(f"{name}: rdmalab.timeout {got}, rdmapcap says {timeout_exp}")
        seen["rdmalab.timeout"] += len(timeout_exp)
        # The ICRC verdict of every frame equals rdmapcap's.
        good = {obj["frame"] for obj in records if obj.get("icrc", {}).get("ok") is True}
        got = filtered_frames(env, capture, 'rdmalab.icrc.status == "good"')
        if got != good:
            fail(f"{name}: ICRC good on {sorted(got)}, rdmapcap says {sorted(good)}")
        seen['rdmalab.icrc.status == "good"'] += len(good)
    empty = [flt for flt, n in seen.items()
             if n == 0 and "icrc" not in flt]  # bad ICRCs: see the icrc check
    if empty:
        fail(f"no capture exercises {empty}: the filter checks proved nothing")
    print("filters: " + ", ".join(f"{k} ({v})" for k, v in seen.items()))


def corrupt_copy(src, dst):
    """Copies a classic pcap and flips one payload byte of the first frame
    long enough to carry a payload; returns that frame's number."""
    with open(src, "rb") as f:
        blob = bytearray(f.read())
    magic = struct.unpack_from("<I", blob, 0)[0]
    endian = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
    offset, frame = 24, 0
    while offset + 16 <= len(blob):
        caplen = struct.unpack_from(endian + "I", blob, offset + 8)[0]
        frame += 1
        data = offset + 16
        # Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + RETH 16 = 70: anything
        # past 100 bytes and before the 4-byte ICRC is payload.
        if caplen > 200:
            blob[data + caplen - 20] ^= 0x01
            with open(dst, "wb") as f:
                f.write(blob)
            return frame
        offset = data + caplen
    fail(f"no frame with a payload in {src}")
    return 0


def check_icrc(env):
    """A corrupted payload byte: rdmapcap and the plugin flag that frame only."""
    src = os.path.join(env.data, "write_bw_s512.pcap")
    dst = os.path.join(env.work, "write_bw_s512_bad_icrc.pcap")
    frame = corrupt_copy(src, dst)
    expected = rdmapcap_events(env, dst)
    if expected.get("icrc_mismatch") != {frame}:
        fail(f"rdmapcap reports ICRC mismatches on {expected.get('icrc_mismatch')}, "
             f"expected frame {frame} only")
    compare("corrupted ICRC (-2)", tshark_events(env, dst, True), expected)
    for flt in ('rdmalab.icrc.status == "bad"', "rdmalab.icrc.status == 2",
                "rdmalab.expert.icrc_mismatch",
                'rdmalab.expert.icrc_mismatch && _ws.expert.severity == "Error"'):
        got = filtered_frames(env, dst, flt)
        if got != {frame}:
            fail(f"-Y '{flt}' selects {sorted(got)}, expected [{frame}]")
    # The computed value is shown next to the verdict.
    out = env.tshark(dst, "-Y", f"frame.number == {frame}", "-T", "fields",
                     "-e", "rdmalab.icrc.computed")
    if not out.strip().startswith("0x"):
        fail(f"rdmalab.icrc.computed missing on frame {frame}: {out!r}")
    shutil.copyfile(src, dst)  # the unmodified copy passes again
    if filtered_frames(env, dst, 'rdmalab.icrc.status == "bad"'):
        fail("the unmodified capture has a bad ICRC")
    print(f"icrc: frame {frame} flagged, nothing else")

    # Native InfiniBand (ibdump's ERF records): frame 11 of ib_erf_rc.pcap
    # had a VL bit flipped after it was sealed (tests/dissect/
    # dissect_ib_capture_test.cpp). The VCRC covers the VL, the ICRC does
    # not: the VCRC alone is bad, on that frame alone, in both tools.
    ib = os.path.join(env.data, "ib_erf_rc.pcap")
    expected = rdmapcap_events(env, ib)
    if expected.get("vcrc_mismatch") != {11} or expected.get("icrc_mismatch"):
        fail(f"rdmapcap on {ib}: VCRC mismatches {expected.get('vcrc_mismatch')}, "
             f"ICRC mismatches {expected.get('icrc_mismatch')}; expected frame 11 and none")
    for flt, want in (('rdmalab.vcrc.status == "bad"', {11}),
                      ("rdmalab.expert.vcrc_mismatch", {11}),
                      ('rdmalab.icrc.status == "bad"', set()),
                      ('rdmalab.vcrc.status == "good"', set(range(1, 16)) - {11})):
        got = filtered_frames(env, ib, flt)
        if got != want:
            fail(f"{ib}: -Y '{flt}' selects {sorted(got)}, expected {sorted(want)}")
    out = env.tshark(ib, "-Y", "frame.number == 11", "-T", "fields", "-e", "rdmalab.vcrc.computed")
    if not out.strip().startswith("0x"):
        fail(f"rdmalab.vcrc.computed missing on frame 11: {out!r}")
    print("icrc: the InfiniBand capture's one damaged VCRC flagged, nothing else")


def check_language(env):
    """The language preference switches explanations between English and Chinese."""
    capture = os.path.join(env.data, "loss_drop_one_nak.pcap")
    texts = {}
    for lang in ("en", "zh"):
        out = env.tshark(capture, "-2", "-o", f"rdmalab.language:{lang}", "-Y",
                         "rdmalab.retransmission", "-T", "fields", "-e", "rdmalab.explanation")
        texts[lang] = out
    def has_han(text):
        return any("\u4e00" <= ch <= "\u9fff" for ch in text)

    if not texts["en"].strip() or has_han(texts["en"]):
        fail(f"English explanations expected: {texts['en']!r}")
    if not has_han(texts["zh"]):
        fail(f"Chinese explanations expected: {texts['zh']!r}")
    if len(texts["en"].splitlines()) != len(texts["zh"].splitlines()):
        fail("the language changed which frames carry explanations")
    print("language: en and zh explanations on the same frames")


# Pause quanta are 512 bit times (IEEE 802.3 annex 31B): at the plugin's
# default port speed, 100 Gb/s, one quantum lasts 512 / 100e9 s = 5.12 ns.
QUANTUM_NS_AT_100G = 512 / 100e9 * 1e9


def fields_by_frame(out):
    """tshark -T fields output (frame number first) as {frame: [fields]}."""
    rows = {}
    for line in out.splitlines():
        cols = line.split("\t")
        rows[int(cols[0])] = cols[1:]
    return rows


def numbers(text):
    return [float(x) for x in text.split(",") if x != ""]


def check_congestion(env):
    """ECN, CNPs and pause frames: Wireshark's own fields, the plugin's and
    rdmapcap's agree frame by frame on the congestion capture; the PFC storm
    expert item follows the threshold preference as rdmapcap follows
    --pfc-storm-ms."""
    capture = os.path.join(env.data, "congestion_pfc.pcap")
    res = subprocess.run([env.rdmapcap, "decode", "--json", "--all", "--link-speed", "100G",
                          "--lang", "en", capture], capture_output=True, text=True, check=False)
    if res.returncode not in (0, 1):
        fail(f"rdmapcap failed ({res.returncode}) on {capture}\n{res.stderr}")
    records = [json.loads(line) for line in res.stdout.splitlines() if line.strip()]
    records = [r for r in records if not r.get("end_of_capture")]
    cbfc = [f"macc.cbfc.pause_time.c{p}" for p in range(8)]
    names = (["ip.dsfield.ecn", "rdmalab.ecn", "rdmalab.cnp", "macc.cbfc.enbv", "macc.pause_time"]
             + cbfc + ["rdmalab.pfc.link_speed", "rdmalab.pfc.priority", "rdmalab.pfc.quanta",
                       "rdmalab.pfc.pause_us", "rdmalab.pfc.xon"])
    args = ["-2", "-T", "fields", "-e", "frame.number"]
    for n in names:
        args += ["-e", n]
    args += ["-E", "occurrence=a", "-E", "aggregator=,"]
    rows = fields_by_frame(env.tshark(capture, *args))
    col = {n: i for i, n in enumerate(names)}
    seen = collections.Counter()
    for r in records:
        frame = r["frame"]
        got = rows.get(frame)
        if got is None:
            fail(f"tshark shows no frame {frame}")
        if "pause" not in r:
            # RoCE: the IP ECN field, as Wireshark decodes it and as the plugin stores it.
            ecn = str(r["ecn"])
            if got[col["ip.dsfield.ecn"]] != ecn or got[col["rdmalab.ecn"]] != ecn:
                fail(f"frame {frame}: ip.dsfield.ecn {got[col['ip.dsfield.ecn']]!r}, "
                     f"rdmalab.ecn {got[col['rdmalab.ecn']]!r}, rdmapcap ecn {ecn}")
            seen["ce" if r["ecn"] == 3 else "ecn"] += 1
            is_cnp = r["opcode"] == 0x81
            if (got[col["rdmalab.cnp"]] != "") != is_cnp:
                fail(f"frame {frame}: rdmalab.cnp {got[col['rdmalab.cnp']]!r}, opcode "
                     f"{r['opcode']:#x}")
            seen["cnp"] += is_cnp
            continue
        p = r["pause"]
        if got[col["rdmalab.pfc.link_speed"]] != "100000":
            fail(f"frame {frame}: rdmalab.pfc.link_speed {got[col['rdmalab.pfc.link_speed']]!r},"
                 " the default preference is 100 Gb/s = 100000 Mb/s")
        if p["opcode"] == 0x0101:
            # 802.1Qbb: Wireshark's vector and quanta, the plugin's per priority.
            enbv = int(got[col["macc.cbfc.enbv"]], 16)
            wire_quanta = [int(got[col[c]]) for c in cbfc]
            if enbv != p["class_enable"] or wire_quanta != p["quanta"]:
                fail(f"frame {frame}: macc.cbfc {enbv:#x} {wire_quanta}, rdmapcap "
                     f"{p['class_enable']:#x} {p['quanta']}")
            prios = [q for q in range(8) if p["class_enable"] >> q & 1]
            quanta = [p["quanta"][q] for q in prios]
            if numbers(got[col["rdmalab.pfc.priority"]]) != prios:
                fail(f"frame {frame}: rdmalab.pfc.priority {got[col['rdmalab.pfc.priority']]!r}"
                     f", enabled {prios}")
            seen["pfc"] += 1
        else:
            # 802.3x: one pause_time for the whole link.
            quanta = p["quanta"][:1]
            if numbers(got[col["macc.pause_time"]]) != quanta:
                fail(f"frame {frame}: macc.pause_time {got[col['macc.pause_time']]!r}, "
                     f"rdmapcap {quanta}")
            seen["pause"] += 1
        if numbers(got[col["rdmalab.pfc.quanta"]]) != quanta:
            fail(f"frame {frame}: rdmalab.pfc.quanta {got[col['rdmalab.pfc.quanta']]!r}, "
                 f"rdmapcap {quanta}")
        us = numbers(got[col["rdmalab.pfc.pause_us"]])
        want = [q * QUANTUM_NS_AT_100G / 1e3 for q in quanta]
        if len(us) != len(want) or any(abs(a - b) > 1e-3 for a, b in zip(us, want)):
            fail(f"frame {frame}: rdmalab.pfc.pause_us {us}, {quanta} quanta at 100 Gb/s "
                 f"are {want}")
        # rdmapcap's pause event names the largest time, in ns.
        largest = [e["delta_ns"] for e in r["events"] if e["type"] == "pfc_pause"]
        if largest and abs(max(us) * 1e3 - largest[0]) > 1:
            fail(f"frame {frame}: the plugin's longest pause {max(us)} µs, rdmapcap "
                 f"{largest[0]} ns")
        xon = len(numbers(got[col["rdmalab.pfc.xon"]]) if got[col["rdmalab.pfc.xon"]] else [])
        if xon != quanta.count(0):
            fail(f"frame {frame}: {xon} rdmalab.pfc.xon, {quanta.count(0)} XON quanta")
        seen["xon"] += quanta.count(0)
    # The capture has all of these; a check that met none proved nothing.
    for what in ("ecn", "ce", "cnp", "pfc", "pause", "xon"):
        if seen[what] == 0:
            fail(f"congestion_pfc.pcap: no {what} frame checked")

    # The storm: priority 3 stays paused 400 µs (frames 500..), under the
    # default 100 ms, over 300 µs. The plugin's threshold (µs) against
    # rdmapcap's --pfc-storm-ms.
    for storm_us in (100_000, 300):
        res = subprocess.run([env.rdmapcap, "decode", "--json", "--all", "--pfc-storm-ms",
                              str(storm_us / 1000), capture],
                             capture_output=True, text=True, check=False)
        expected = set()
        for line in res.stdout.splitlines():
            obj = json.loads(line)
            if obj.get("end_of_capture") and obj["event"]["type"] == "pfc_storm":
                expected.add(obj["event"]["frame"])
        args = ["-2", "-o", f"rdmalab.pfc_storm_us:{storm_us}", "-Y",
                'rdmalab.expert.pfc_storm && _ws.expert.severity == "Error"', "-T", "fields",
                "-e", "frame.number"]
        got = {int(x) for x in env.tshark(capture, *args).split()}
        if got != expected:
            fail(f"storm threshold {storm_us} µs: the plugin marks {sorted(got)}, rdmapcap "
                 f"{sorted(expected)}")
        seen[f"storm frames at {storm_us} µs"] = len(got)
    if seen["storm frames at 300 µs"] == 0:
        fail("no storm past 300 µs: the storm check proved nothing")
    print("congestion: " + ", ".join(f"{k} {v}" for k, v in seen.items()))


def check_dcqcn(env):
    """The simulator's DCQCN on the wire (sim_dcqcn_cnp.pcap, written by
    tests/sim/sim_dcqcn_test.cpp): Wireshark decodes the CNP as opcode 129
    with DSCP 48, the WRITE packets as ECN-capable (ECT(0), 2) and the one
    the link marked as CE (3), the ACKs as not ECN-capable; the plugin flags
    the CNP and finds every ICRC good. Wireshark 4.0 has no field for the
    BTH's BECN bit: the CNP's BTH byte 4 (frame offset 14 + 20 + 8 + 4 = 46,
    IPv4 without VLAN) must be 0x40, BECN alone."""
    capture = os.path.join(env.data, "sim_dcqcn_cnp.pcap")
    names = ["ip.dsfield.ecn", "ip.dsfield.dscp", "infiniband.bth.opcode", "infiniband.bth.psn",
             "rdmalab.cnp", "rdmalab.icrc.status", "_ws.malformed"]
    args = ["-2", "-T", "fields", "-e", "frame.number"]
    for n in names:
        args += ["-e", n]
    rows = fields_by_frame(env.tshark(capture, *args))
    becn = {int(x) for x in env.tshark(capture, "-Y", "frame[46:1] == 40", "-T", "fields",
                                       "-e", "frame.number").split()}
    col = {n: i for i, n in enumerate(names)}
    seen = collections.Counter()
    for frame, got in sorted(rows.items()):
        if got[col["_ws.malformed"]] != "":
            fail(f"frame {frame}: malformed")
        if got[col["rdmalab.icrc.status"]] not in ("good", "1"):
            fail(f"frame {frame}: rdmalab.icrc.status {got[col['rdmalab.icrc.status']]!r}")
        opcode = int(got[col["infiniband.bth.opcode"]], 0)
        ecn = int(got[col["ip.dsfield.ecn"]], 0)
        if opcode == 129:
            if (frame not in becn or int(got[col["ip.dsfield.dscp"]], 0) != 48
                    or ecn != 0 or got[col["rdmalab.cnp"]] == ""):
                fail(f"frame {frame}: CNP with BECN {frame in becn}, dscp "
                     f"{got[col['ip.dsfield.dscp']]!r}, ecn {ecn}, rdmalab.cnp "
                     f"{got[col['rdmalab.cnp']]!r}")
            seen["cnp"] += 1
        elif 6 <= opcode <= 8:  # RDMA WRITE First, Middle, Last
            want = 3 if int(got[col["infiniband.bth.psn"]]) == 3 else 2
            if ecn != want:
                fail(f"frame {frame}: WRITE PSN {got[col['infiniband.bth.psn']]} ecn {ecn}, "
                     f"want {want}")
            seen["ce" if ecn == 3 else "ect0"] += 1
        elif ecn != 0:
            fail(f"frame {frame}: opcode {opcode} ecn {ecn}, want 0 (not ECN-capable)")
    # The run: 32 WRITE packets, PSN 3 marked, one CNP.
    if (seen["cnp"], seen["ce"], seen["ect0"]) != (1, 1, 31):
        fail(f"sim_dcqcn_cnp.pcap: {dict(seen)}, want 1 CNP, 1 CE, 31 ECT(0)")
    print("dcqcn: " + ", ".join(f"{k} {v}" for k, v in seen.items()))


def check_switch(env):
    """The simulator's switches on the wire (sim_switch_pfc.pcap, written by
    tests/sim/sim_switch_test.cpp: a 3:1 incast with PFC and ECN, captured at
    the hosts' ports). Wireshark decodes every pause frame as 802.1Qbb for
    priority 3 alone (macc.cbfc.enbv 0x0008) with 0xFFFF quanta (XOFF) or
    0 (XON); its pause frames, XONs and CE marks are as many as rdmapcap
    counts; no frame is malformed and the plugin finds every ICRC good."""
    capture = os.path.join(env.data, "sim_switch_pfc.pcap")
    names = ["macc.cbfc.enbv", "macc.cbfc.pause_time.c3", "ip.dsfield.ecn", "infiniband.bth.opcode",
             "rdmalab.icrc.status", "_ws.malformed"]
    args = ["-2", "-T", "fields", "-e", "frame.number"]
    for n in names:
        args += ["-e", n]
    rows = fields_by_frame(env.tshark(capture, *args))
    col = {n: i for i, n in enumerate(names)}
    seen = collections.Counter()
    for frame, got in sorted(rows.items()):
        if got[col["_ws.malformed"]] != "":
            fail(f"frame {frame}: malformed")
        if got[col["macc.cbfc.enbv"]] != "":
            if int(got[col["macc.cbfc.enbv"]], 0) != 0x08:
                fail(f"frame {frame}: class-enable vector {got[col['macc.cbfc.enbv']]}, want 0x0008")
            quanta = int(got[col["macc.cbfc.pause_time.c3"]], 0)
            if quanta not in (0, 0xFFFF):
                fail(f"frame {frame}: priority 3 quanta {quanta}, want 65535 or 0")
            seen["xon" if quanta == 0 else "xoff"] += 1
            continue
        if got[col["rdmalab.icrc.status"]] not in ("good", "1"):
            fail(f"frame {frame}: rdmalab.icrc.status {got[col['rdmalab.icrc.status']]!r}")
        seen["ce"] += int(got[col["ip.dsfield.ecn"]], 0) == 3
    res = subprocess.run([env.rdmapcap, "summary", "--json", "--link-speed", "100G", "--lang", "en",
                          capture], capture_output=True, text=True, check=False)
    if res.returncode not in (0, 1):
        fail(f"rdmapcap failed ({res.returncode}) on {capture}\n{res.stderr}")
    summary = json.loads(res.stdout)
    frames = sum(p["frames"] for p in summary["pfc"])
    xon = sum(p["xon_frames"] for p in summary["pfc"])
    ce = sum(ch.get("ecn_ce", 0) for c in summary["conversations"] for ch in c["channels"])
    if seen["xoff"] == 0 or seen["ce"] == 0:
        fail(f"sim_switch_pfc.pcap: {dict(seen)}, want pause frames and CE marks")
    if (seen["xoff"] + seen["xon"], seen["xon"], seen["ce"]) != (frames, xon, ce):
        fail(f"tshark {dict(seen)}; rdmapcap pause frames {frames}, XON {xon}, CE {ce}")
    print("switch: " + ", ".join(f"{k} {v}" for k, v in seen.items()))


CHECKS = {
    "congestion": check_congestion,
    "dcqcn": check_dcqcn,
    "switch": check_switch,
    "events": check_events,
    "single_pass": check_single_pass,
    "filters": check_filters,
    "icrc": check_icrc,
    "language": check_language,
}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("check", choices=sorted(CHECKS))
    p.add_argument("--rdmapcap", required=True)
    p.add_argument("--plugin-dir", required=True)
    p.add_argument("--data", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--preload", default="")
    args = p.parse_args()
    env = Env(args)
    try:
        env.check_plugin_loaded()
        CHECKS[args.check](env)
    finally:
        shutil.rmtree(env.home, ignore_errors=True)


if __name__ == "__main__":
    main()
