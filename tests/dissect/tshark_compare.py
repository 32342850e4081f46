#!/usr/bin/env python3
"""Compare rdmapcap's decode with Wireshark's, field by field, packet by packet.

usage: tshark_compare.py RDMAPCAP DATA_DIR

For every capture in DATA_DIR, runs
  tshark -r F -T fields -e frame.number -e infiniband.bth.opcode ...
and
  rdmapcap decode --json F
and requires every InfiniBand header field of every RoCE packet to be equal;
then the IP ECN field (ip.dsfield.ecn) and the 802.3x / 802.1Qbb pause
frames' fields (macc.*) against rdmapcap decode --json --all.

Known differences, where rdmapcap keeps its own answer:
  * ICRC and VCRC: Wireshark shows the CRC's bytes as a big-endian number;
    both CRCs are stored least significant byte first (IBTA 7.8: the ICRC a
    CRC-32, the VCRC a CRC-16, as a native capture's VCRCs show), and
    rdmapcap reports the CRC value. The script compares byte-swapped.
  * AtomicETH: Wireshark puts its VA and R_Key in infiniband.reth.* fields.
  * ImmDt: Wireshark prints the four bytes as hex text; rdmapcap a number.
  * RoCEv2 with UDP source port 69 is dissected by Wireshark as TFTP (the
    source port is flow entropy), and Wireshark 4.0 calls opcode 128 "CNP"
    while the RoCEv2 annex A17 defines CNP as 0x81. Frames Wireshark does not
    decode as InfiniBand are reported, not failed.
"""
import json
import pathlib
import subprocess
import sys

SCHEMA = pathlib.Path(__file__).resolve().parents[2] / "docs" / "schema" / "decode.schema.json"


def header_fields():
    """[(Wireshark field, [JSON paths])] for the InfiniBand header fields, from
    the x-wireshark annotations of the decode schema (the one list of which
    JSON field is which Wireshark field). Addresses and CM fields (named per
    message type in Wireshark) are compared elsewhere."""
    packet = json.loads(SCHEMA.read_text())["$defs"]["packet"]["properties"]
    fields = {}

    def walk(props, path):
        for key, node in props.items():
            ws = node.get("x-wireshark", "")
            if ws.startswith("infiniband.") and not ws.startswith(("infiniband.cm.", "infiniband.grh.")):
                fields.setdefault(ws, []).append(path + (key,))
            walk(node.get("properties", {}), path + (key,))

    walk(packet, ())
    # The BTH opcode comes first: a frame without one is not InfiniBand to Wireshark.
    opcode = "infiniband.bth.opcode"
    return [("frame.number", None), (opcode, fields.pop(opcode))] + sorted(fields.items())


FIELDS = header_fields()


def to_int(field, text):
    if field == "infiniband.immdt":
        return int(text.replace(":", ""), 16)
    if field == "infiniband.invariant.crc":
        return int.from_bytes(int(text, 16).to_bytes(4, "big"), "little")
    if field == "infiniband.variant.crc":
        return int.from_bytes(int(text, 16).to_bytes(2, "big"), "little")
    if text in ("True", "False"):
        return int(text == "True")
    return int(text, 0)


def ours(obj, path):
    for key in path:
        if not isinstance(obj, dict) or key not in obj:
            return None
        obj = obj[key]
    if isinstance(obj, bool):
        return int(obj)
    return obj


def compare(rdmapcap, pcap):
    cmd = ["tshark", "-r", str(pcap), "-T", "fields", "-E", "separator=,", "-E", "occurrence=f"]
    for f, _ in FIELDS:
        cmd += ["-e", f]
    theirs = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.splitlines()
    mine = {}
    out = subprocess.run([rdmapcap, "decode", "--json", str(pcap)], capture_output=True, text=True)
    if out.returncode not in (0, 1):
        return [f"{pcap.name}: rdmapcap exited {out.returncode}: {out.stderr.strip()}"]
    for line in out.stdout.splitlines():
        obj = json.loads(line)
        if "frame" in obj:
            mine[obj["frame"]] = obj
    errors, checked = [], 0
    for line in theirs:
        cols = line.split(",")
        frame = int(cols[0])
        if cols[1] == "":
            if frame in mine:
                print(f"  note: {pcap.name} frame {frame}: Wireshark does not decode it as InfiniBand")
            continue
        if frame not in mine:
            errors.append(f"{pcap.name} frame {frame}: Wireshark decodes it, rdmapcap does not")
            continue
        for (field, paths), text in zip(FIELDS[1:], cols[1:]):
            # A Wireshark field may show one of several of ours (the RETH's
            # VA and the AtomicETH's): whichever this packet has.
            got = next((v for v in (ours(mine[frame], p) for p in paths) if v is not None), None)
            if text == "":
                # Wireshark does not know opcode 0x81 as the CNP (above) and
                # shows no ICRC for it; rdmapcap checks the CNP's ICRC.
                if field == "infiniband.invariant.crc" and mine[frame].get("opcode") == 0x81:
                    continue
                if got is not None:
                    errors.append(f"{pcap.name} frame {frame}: {field}: Wireshark has none, we have {got}")
                continue
            want = to_int(field, text)
            checked += 1
            if got != want:
                errors.append(f"{pcap.name} frame {frame}: {field}: Wireshark {want}, rdmapcap {got}")
    extra = set(mine) - {int(l.split(",")[0]) for l in theirs if l.split(",")[1] != ""}
    for frame in sorted(extra):
        print(f"  note: {pcap.name} frame {frame}: rdmapcap decodes RoCE where Wireshark does not")
    print(f"{pcap.name}: {len(mine)} packets, {checked} fields compared, {len(errors)} differences")
    return errors + compare_ecn_and_pause(rdmapcap, pcap)


PAUSE_FIELDS = ["macc.opcode", "macc.cbfc.enbv", "macc.pause_time"] + [
    f"macc.cbfc.pause_time.c{i}" for i in range(8)]


def compare_ecn_and_pause(rdmapcap, pcap):
    """The IP ECN field of every RoCEv2 packet (ip.dsfield.ecn) and every
    field of every 802.3x / 802.1Qbb pause frame (macc.*), from
    rdmapcap decode --json --all."""
    cmd = ["tshark", "-r", str(pcap), "-T", "fields", "-E", "separator=,", "-E", "occurrence=f",
           "-e", "frame.number", "-e", "ip.dsfield.ecn"]
    for f in PAUSE_FIELDS:
        cmd += ["-e", f]
    theirs = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.splitlines()
    out = subprocess.run([rdmapcap, "decode", "--json", "--all", str(pcap)], capture_output=True,
                         text=True)
    mine = {}
    for line in out.stdout.splitlines():
        obj = json.loads(line)
        if "frame" in obj:
            mine[obj["frame"]] = obj
    errors, checked = [], 0
    for line in theirs:
        cols = line.split(",")
        frame = int(cols[0])
        obj = mine.get(frame)
        ecn, macc = cols[1], dict(zip(PAUSE_FIELDS, cols[2:]))
        if obj is not None and "ecn" in obj and ecn != "":
            checked += 1
            if int(ecn, 0) != obj["ecn"]:
                errors.append(f"{pcap.name} frame {frame}: ip.dsfield.ecn: Wireshark {ecn}, rdmapcap {obj['ecn']}")
        if macc["macc.opcode"] == "":
            if obj is not None and "pause" in obj:
                errors.append(f"{pcap.name} frame {frame}: rdmapcap decodes a pause frame, Wireshark does not")
            continue
        if obj is None or "pause" not in obj:
            errors.append(f"{pcap.name} frame {frame}: Wireshark decodes a pause frame, rdmapcap does not")
            continue
        p = obj["pause"]
        want = {"macc.opcode": p["opcode"]}
        if p["opcode"] == 0x0101:
            want["macc.cbfc.enbv"] = p["class_enable"]
            for i in range(8):
                want[f"macc.cbfc.pause_time.c{i}"] = p["quanta"][i]
        else:
            want["macc.pause_time"] = p["quanta"][0]
        for field, value in want.items():
            checked += 1
            if macc[field] == "" or int(macc[field], 0) != value:
                errors.append(f"{pcap.name} frame {frame}: {field}: Wireshark {macc[field]!r}, rdmapcap {value}")
    print(f"{pcap.name}: {checked} ECN and pause fields compared")
    return errors


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    rdmapcap, data = sys.argv[1], pathlib.Path(sys.argv[2])
    captures = sorted(list(data.glob("*.pcap")) + list(data.glob("*.pcapng")))
    if not captures:
        print(f"no captures in {data}")
        return 1
    errors = []
    for pcap in captures:
        errors += compare(rdmapcap, pcap)
    for e in errors:
        print("DIFF", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
