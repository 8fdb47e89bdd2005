#!/usr/bin/env python3
"""`pnmerge sync` on two folders of many notebooks: how its time grows with their number.

For each size in --notebooks, builds folder A and folder B of that many notebooks (each made
with `peernote new` and copied, then given one note in A and another in B, so that every
copy lacks a change and sync writes all of them), then runs `pnmerge sync A B` on fresh
copies of the two folders, each tool folder in turn, and prints per build and size the median
wall time, CPU time (user + system), the time per notebook and the growth from the smallest
size divided by the growth of n log2 n (at or below 1: no faster than n log n).

    python3 Benchmarks/scripts/sync-scale.py --notebooks 400,1600 --runs 3 .build/release

Each folder must hold `peernote` and `pnmerge`; the notebooks are made with the first
folder's `peernote`. Building 1,600 notebooks takes about a minute (four runs of the tools each).
"""
import argparse
import math
import os
import shutil
import statistics
import subprocess
import tempfile
import time


def build(peernote, folder, count):
    a, b = os.path.join(folder, "A"), os.path.join(folder, "B")
    os.makedirs(a)
    os.makedirs(b)
    quiet = {"check": True, "stdout": subprocess.DEVNULL}
    for i in range(count):
        name = f"n{i:05d}.peernote"
        subprocess.run([peernote, "new", os.path.join(a, name), "--title", f"Notebook {i}"], **quiet)
        shutil.copyfile(os.path.join(a, name), os.path.join(b, name))
        subprocess.run([peernote, "add", os.path.join(a, name), "--title", "on A", "--body", "a", "--author", "bench"], **quiet)
        subprocess.run([peernote, "add", os.path.join(b, name), "--title", "on B", "--body", "b", "--author", "bench"], **quiet)
    return a, b


def run_sync(pnmerge, a, b, work):
    fa, fb = os.path.join(work, "A"), os.path.join(work, "B")
    for f in (fa, fb):
        shutil.rmtree(f, ignore_errors=True)
    shutil.copytree(a, fa)
    shutil.copytree(b, fb)
    start = time.perf_counter()
    p = subprocess.Popen([pnmerge, "sync", fa, fb], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    wall = (time.perf_counter() - start) * 1000
    err = p.stderr.read().decode()
    p.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{pnmerge} sync failed: {err.strip()}")
    return wall, (usage.ru_utime + usage.ru_stime) * 1000


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--notebooks", default="400,1600", help="comma-separated numbers of notebooks per folder")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("tools", nargs="+", help="folders holding peernote and pnmerge")
    args = p.parse_args()
    sizes = [int(s) for s in args.notebooks.split(",")]
    tools = [os.path.abspath(t) for t in args.tools]
    results = {}
    with tempfile.TemporaryDirectory() as work:
        for n in sizes:
            made = os.path.join(work, f"made-{n}")
            a, b = build(os.path.join(tools[0], "peernote"), made, n)
            times = {t: [] for t in tools}
            for _ in range(args.runs):
                for t in tools:
                    times[t].append(run_sync(os.path.join(t, "pnmerge"), a, b, os.path.join(work, "run")))
            for t in tools:
                results[(t, n)] = (statistics.median(w for w, _ in times[t]), statistics.median(c for _, c in times[t]))
            shutil.rmtree(made)
    print("| build | notebooks per folder | `pnmerge sync A B` | CPU | per notebook | growth / n log n |")
    print("|---|---|---|---|---|---|")
    first = sizes[0]
    for t in tools:
        for n in sizes:
            wall, cpu = results[(t, n)]
            growth = ""
            if n != first:
                growth = f"{(wall / results[(t, first)][0]) / ((n * math.log2(n)) / (first * math.log2(first))):.2f}"
            print(f"| {t} | {n:,} | {wall:,.0f} ms | {cpu:,.0f} ms | {wall / n:.2f} ms | {growth} |")


if __name__ == "__main__":
    main()
