#!/usr/bin/env python3
"""Whole-process timings of the tools on a notebook of many notes (a power user's notebook, not
an editing trace).

Builds a notebook of --notes notes (each a title, one tag and a body of about 200 characters;
about 4 MB of text for 20,000) with `peernote import`, then two copies: MINE edits two notes'
bodies and adds one; THEIRS retitles one, tags one and deletes one. Then runs each tool folder in
turn (alternating, so that the shared machine's swings hit every build alike) and prints per
build and command the median wall time (quartiles), CPU time and peak memory, from os.wait4.

    make release && cp -r .build/release /tmp/pn-new
    python3 Benchmarks/scripts/many-notes.py --notes 20000 --runs 5 /tmp/pn-old /tmp/pn-new

Each folder must hold `peernote` and `pnmerge`. The notebook is built with the first folder's
`peernote`, so every build reads the same files.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time


def build(tools, work, count):
    source = os.path.join(work, "notes.json")
    notes = [{"title": f"Note {i}", "body": (f"Line of text for note {i}. " * 8).strip(),
              "tags": [f"t{i % 50}"], "priority": "normal"} for i in range(count)]
    with open(source, "w") as f:
        json.dump({"title": "Many notes", "notes": notes}, f)
    base = os.path.join(work, "base.peernote")
    pn = os.path.join(tools, "peernote")
    subprocess.run([pn, "import", source, "-o", base], check=True, stdout=subprocess.DEVNULL)
    mine, theirs = os.path.join(work, "mine.peernote"), os.path.join(work, "theirs.peernote")
    shutil.copyfile(base, mine)
    shutil.copyfile(base, theirs)
    author = ["--author", "bench"]
    for args in (["edit", mine, "Note 5", "--body", "Changed on the laptop."],
                 ["edit", mine, f"Note {count // 2}", "--body", "Also changed on the laptop."],
                 ["add", mine, "--title", "New on the laptop", "--body", "hello"],
                 ["edit", theirs, "Note 7", "--title", "Note 7, retitled on the phone"],
                 ["edit", theirs, f"Note {count - 1}", "--add-tag", "phone"],
                 ["rm", theirs, "Note 9"]):
        subprocess.run([pn] + args + author, check=True, stdout=subprocess.DEVNULL)
    return base, mine, theirs


def commands(tools, work, base, mine, theirs):
    pn, pm = os.path.join(tools, "peernote"), os.path.join(tools, "pnmerge")
    out = os.path.join(work, "out.peernote")
    fresh = os.path.join(work, "fresh.peernote")

    def copy_fresh():
        shutil.copyfile(mine, fresh)

    def remove_out():
        if os.path.exists(out):
            os.remove(out)

    return {
        "list": (None, [pn, "list", mine]),
        "show": (None, [pm, "show", mine]),
        "validate": (None, [pm, "validate", mine]),
        "add": (copy_fresh, [pn, "add", fresh, "--title", "x", "--body", "y", "--author", "bench"]),
        "edit": (copy_fresh, [pn, "edit", fresh, "Note 11", "--body", "z", "--author", "bench"]),
        "diff": (None, [pm, "diff", mine, theirs]),
        "merge -o": (remove_out, [pm, "merge", mine, theirs, "-o", out]),
        "merge in place": (copy_fresh, [pm, "merge", fresh, theirs]),
    }


def run(prepare, argv):
    if prepare:
        prepare()
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if status != 0 and os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"{' '.join(argv)}: exit {os.waitstatus_to_exitcode(status)}")
    return wall * 1000, (usage.ru_utime + usage.ru_stime) * 1000, usage.ru_maxrss / 1024


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--notes", type=int, default=20000)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--only", help="comma-separated command names to run (default: all)")
    p.add_argument("tools", nargs="+", help="folders holding peernote and pnmerge")
    a = p.parse_args()
    work = tempfile.mkdtemp(prefix="pn-many-notes.")
    try:
        base, mine, theirs = build(a.tools[0], work, a.notes)
        print(f"{a.notes} notes: {os.path.getsize(mine)} bytes (mine), {os.path.getsize(theirs)} bytes (theirs)")
        names = list(commands(a.tools[0], work, base, mine, theirs))
        if a.only:
            names = [n for n in names if n in a.only.split(",")]
        results = {(t, n): [] for t in a.tools for n in names}
        for _ in range(a.runs):
            for n in names:
                for t in a.tools:
                    prepare, argv = commands(t, work, base, mine, theirs)[n]
                    results[(t, n)].append(run(prepare, argv))
        for n in names:
            for t in a.tools:
                rs = results[(t, n)]
                walls = sorted(r[0] for r in rs)
                q = statistics.quantiles(walls, n=4) if len(walls) > 1 else [walls[0]] * 3
                cpu = statistics.median(r[1] for r in rs)
                rss = max(r[2] for r in rs)
                print(f"{n:15} {t:30} wall {statistics.median(walls):7.1f} ms ({q[0]:.1f}-{q[2]:.1f})  cpu {cpu:7.1f} ms  peak {rss:6.1f} MB")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
