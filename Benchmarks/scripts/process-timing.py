#!/usr/bin/env python3
"""Whole-process timings of pnmerge on two diverged copies (issue 6's "under 20 ms" figure).

Runs each pnmerge binary in turn (alternating, so that the shared machine's swings hit every
binary alike; each as a fresh copy made in the work folder) on the copies `pnbench diverge` writes, and prints per binary and kind the median
wall time (with quartiles), CPU time (user, system), minor page faults and peak memory, all from
os.wait4.

    swift run -c release --package-path Benchmarks pnbench diverge automerge-paper -a /tmp/A.peernote -b /tmp/B.peernote
    make release && cp .build/release/pnmerge /tmp/pnmerge-new
    python3 Benchmarks/scripts/process-timing.py --a /tmp/A.peernote --b /tmp/B.peernote \
        --runs 25 --kinds AB,BA,IN,VAL,VER /tmp/pnmerge-old /tmp/pnmerge-new

Kinds: AB = merge A B -o OUT; BA = merge B A -o OUT; IN = merge A B in place (on a fresh copy
of A each run); INB = merge B A in place (the stale copy takes the other's changes, on a fresh
copy of B each run); VAL = validate A; VER = --version (startup alone).
"""
import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time


def command(binary, kind, a, b, work):
    out = os.path.join(work, "out.peernote")
    if os.path.exists(out):
        os.remove(out)
    if kind == "AB":
        return [binary, "merge", a, b, "-o", out]
    if kind == "BA":
        return [binary, "merge", b, a, "-o", out]
    if kind == "IN":
        mine = os.path.join(work, "in-place.peernote")
        shutil.copyfile(a, mine)
        return [binary, "merge", mine, b]
    if kind == "INB":
        mine = os.path.join(work, "in-place-b.peernote")
        shutil.copyfile(b, mine)
        return [binary, "merge", mine, a]
    if kind == "VAL":
        return [binary, "validate", a]
    if kind == "VER":
        return [binary, "--version"]
    raise SystemExit(f"unknown kind {kind!r} (AB, BA, IN, INB, VAL, VER)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binaries", nargs="+", help="pnmerge binaries to compare")
    parser.add_argument("--a", required=True, help="copy A (pnbench diverge -a)")
    parser.add_argument("--b", required=True, help="copy B (pnbench diverge -b)")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--kinds", default="AB,IN,VAL,VER")
    args = parser.parse_args()
    kinds = args.kinds.split(",")
    results = {}
    with tempfile.TemporaryDirectory() as work:
        # Each binary is timed as a fresh copy made here, all made alike: two copies of one
        # binary, one of them read by other tools since it was written, once started 0.2 ms
        # apart (3.4 against 3.2 ms for --version, 480 against 460 page faults).
        copies = {}
        for k, binary in enumerate(args.binaries):
            copies[binary] = os.path.join(work, f"binary-{k}-{os.path.basename(binary)}")
            shutil.copy2(binary, copies[binary])
        for _ in range(args.runs):
            for binary in args.binaries:
                for kind in kinds:
                    argv = command(copies[binary], kind, args.a, args.b, work)
                    start = time.perf_counter()
                    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    _, status, usage = os.wait4(process.pid, 0)
                    wall = (time.perf_counter() - start) * 1000
                    if status != 0:
                        raise SystemExit(f"{' '.join(argv)}: exit status {os.waitstatus_to_exitcode(status)}")
                    r = results.setdefault((kind, binary), {"wall": [], "user": [], "sys": [], "faults": [], "rss": []})
                    r["wall"].append(wall)
                    r["user"].append(usage.ru_utime * 1000)
                    r["sys"].append(usage.ru_stime * 1000)
                    r["faults"].append(usage.ru_minflt)
                    r["rss"].append(usage.ru_maxrss / 1024)
    for kind in kinds:
        for binary in args.binaries:
            r = results[(kind, binary)]
            wall = sorted(r["wall"])
            q = len(wall) // 4
            print(f"{kind:3} {binary}: wall median {statistics.median(wall):.1f} ms "
                  f"(quartiles {wall[q]:.1f}-{wall[-q - 1]:.1f}), "
                  f"user {statistics.median(r['user']):.1f} ms, sys {statistics.median(r['sys']):.1f} ms, "
                  f"{statistics.median(r['faults']):.0f} faults, peak {statistics.median(r['rss']):.1f} MB, n={len(wall)}")


if __name__ == "__main__":
    main()
