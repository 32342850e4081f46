#!/usr/bin/env python3
"""Compare two builds of one program on the same command, in pairs of runs.

    compare_builds.py [--runs N] [--side-by-side] [--read-first FILE] OLD NEW -- ARGS...

Each pair runs OLD and NEW with ARGS and takes each child's wall time and CPU
time (user + system, from wait4). A machine shared with other work changes
speed from minute to minute, so a ratio of two medians taken at different
moments can say more about the machine than about the builds; the ratio of
each pair, taken close together, says less about it. Printed: each build's
median and fastest time, and the median of the per-pair ratios NEW / OLD
with how many pairs NEW was faster.

  (default)       the pair runs in turns, OLD first in even pairs and NEW
                  first in odd ones; the ratio is of wall times. For
                  programs with threads of their own (rdmapcap).
  --side-by-side  the pair runs at the same time, one build on each of CPUs
                  0 and 1, swapping CPUs every pair; the ratio is of CPU
                  times. For single-threaded programs (bench_fabric,
                  bench_sim): both see the same moment of the machine.
  --read-first F  read F to the end before every run (a capture larger than
                  the page cache can hold for all runs: each run then reads
                  it from the cache, not from the disk).

Not a test: run it on Release builds and read the figures.
"""

import argparse
import os
import statistics
import subprocess
import sys
import time


def start(cmd, cpu):
    if cpu is not None:
        cmd = ["taskset", "-c", str(cpu)] + cmd
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL), time.perf_counter()


def finish(proc, t0):
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"compare_builds: {proc.args} exited with {proc.returncode}")
    return wall, usage.ru_utime + usage.ru_stime


def read_through(path):
    with open(path, "rb") as f:
        while f.read(1 << 20):
            pass


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=10, help="pairs of runs (10)")
    p.add_argument("--side-by-side", action="store_true")
    p.add_argument("--read-first", metavar="FILE")
    p.add_argument("old")
    p.add_argument("new")
    p.add_argument("args", nargs=argparse.REMAINDER)
    a = p.parse_args()
    if a.runs < 1:
        p.error("--runs must be at least 1")
    args = a.args[1:] if a.args[:1] == ["--"] else a.args
    # By position, not by path: a build compared with itself (the noise
    # alone) keeps two lists of times.
    builds = (a.old, a.new)
    times = ([], [])
    for i in range(a.runs):
        if a.side_by_side:
            if a.read_first:
                read_through(a.read_first)
            running = [start([b] + args, (i + k) % 2) for k, b in enumerate(builds)]
            for k, (proc, t0) in enumerate(running):
                times[k].append(finish(proc, t0))
        else:
            for k in (0, 1) if i % 2 == 0 else (1, 0):
                if a.read_first:
                    read_through(a.read_first)
                times[k].append(finish(*start([builds[k]] + args, None)))
    which = 1 if a.side_by_side else 0  # CPU time side by side, wall time in turns
    for b, t in zip(builds, times):
        walls = [w for w, _ in t]
        cpus = [c for _, c in t]
        print(f"{b}: wall median {statistics.median(walls):.3f} s (fastest {min(walls):.3f}), "
              f"CPU median {statistics.median(cpus):.3f} s (fastest {min(cpus):.3f})")
    ratios = [n[which] / o[which] for o, n in zip(*times)]
    print(f"new / old, {'CPU' if a.side_by_side else 'wall'} time: median ratio "
          f"{statistics.median(ratios):.3f}, new faster in {sum(r < 1 for r in ratios)} of {a.runs} pairs")


if __name__ == "__main__":
    main()
