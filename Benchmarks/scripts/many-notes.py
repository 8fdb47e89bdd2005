#!/usr/bin/env python3
"""Whole-process timings of the tools on a notebook of many notes (a power user's notebook, not
an editing trace).

Builds a notebook of --notes notes (each a title, one tag and a body of about 200 characters;
about 4 MB of text for 20,000) with `peernote import`, then two copies: MINE edits two notes'
bodies and adds one; THEIRS retitles one, tags one and deletes one; and MINE as a notebook
folder (`pnmerge convert`), which `edit folder` edits. Then runs each tool folder in
turn (alternating, so that the shared machine's swings hit every build alike) and prints per
build and command the median wall time (quartiles) and CPU time, from os.wait4, and the peak
memory, the largest of up to three runs under GNU time (/usr/bin/time; os.wait4's peak counts
this script's own memory, which a child holds until its exec, and is used only without it).

    make release && cp -r .build/release /tmp/pn-new
    python3 Benchmarks/scripts/many-notes.py --notes 20000 --runs 5 /tmp/pn-old /tmp/pn-new

Each folder must hold `peernote` and `pnmerge`. The notebook is built with the first folder's
`peernote`, so every build reads the same files.

With several sizes (`--notes 2000,20000,100000`), each is measured in turn and a scale table
follows: per command, the median wall time at each size and its growth from the smallest size
divided by the growth of n log2 n (at or below 1: no faster than n log n), and the peak memory
beside the issue's bound of 20 MB plus three times the notebook's text.

    python3 Benchmarks/scripts/many-notes.py --notes 2000,20000,100000 --runs 3 \
        --only validate,list,edit,"edit folder","merge -o","merge in place" .build/release
"""
import argparse
import json
import math
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

    # MINE as a notebook folder (`measure` makes it once, with the first build), copied afresh
    # before each edit: the layout for folders a sync tool keeps, which gains a chunk a write.
    folder, fresh_folder = os.path.join(work, "mine-folder.peernote"), os.path.join(work, "fresh-folder.peernote")

    def copy_fresh_folder():
        shutil.rmtree(fresh_folder, ignore_errors=True)
        shutil.copytree(folder, fresh_folder)

    return {
        "list": (None, [pn, "list", mine]),
        "show": (None, [pm, "show", mine]),
        "validate": (None, [pm, "validate", mine]),
        "add": (copy_fresh, [pn, "add", fresh, "--title", "x", "--body", "y", "--author", "bench"]),
        "edit": (copy_fresh, [pn, "edit", fresh, "Note 11", "--body", "z", "--author", "bench"]),
        "edit folder": (copy_fresh_folder, [pn, "edit", fresh_folder, "Note 11", "--body", "z", "--author", "bench"]),
        "diff": (None, [pm, "diff", mine, theirs]),
        "log": (None, [pm, "log", mine]),
        "textconv": (None, [pm, "textconv", mine]),
        "inspect": (None, [pm, "inspect", mine]),
        "export": (None, [pn, "export", mine]),
        "search": (None, [pn, "search", mine, "Note 1"]),
        "merge -o": (remove_out, [pm, "merge", mine, theirs, "-o", out]),
        "merge in place": (copy_fresh, [pm, "merge", fresh, theirs]),
    }


GNU_TIME = "/usr/bin/time"


def run(prepare, argv):
    """(wall ms, cpu ms, peak MB) of one run. The peak is os.wait4's, which is not the tool's
    alone: Linux counts in a child's peak the memory of the process it was forked from (this
    Python) up to its exec. `peak` measures it apart."""
    if prepare:
        prepare()
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if status != 0 and os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"{' '.join(argv)}: exit {os.waitstatus_to_exitcode(status)}")
    return wall * 1000, (usage.ru_utime + usage.ru_stime) * 1000, usage.ru_maxrss / 1024


def peak(prepare, argv):
    """Peak memory (MB) of one run of argv as GNU time reports it (its child is forked from it,
    not from this Python), or None without GNU time."""
    if not os.access(GNU_TIME, os.X_OK):
        return None
    if prepare:
        prepare()
    with tempfile.NamedTemporaryFile("r") as out:
        proc = subprocess.run([GNU_TIME, "-f", "%M", "-o", out.name] + argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if proc.returncode not in (0, 1):
            raise SystemExit(f"{' '.join(argv)}: exit {proc.returncode}")
        return int(out.read().split()[-1]) / 1024


def measure(tools, count, runs, only):
    """Per (tool folder, command): the runs' (wall ms, cpu ms, peak MB); and the notebook's text bytes."""
    work = tempfile.mkdtemp(prefix="pn-many-notes.")
    try:
        base, mine, theirs = build(tools[0], work, count)
        subprocess.run([os.path.join(tools[0], "pnmerge"), "convert", mine, os.path.join(work, "mine-folder.peernote")],
                       check=True, stdout=subprocess.DEVNULL)
        with open(os.path.join(work, "notes.json")) as f:
            text = sum(len(n["title"].encode()) + len(n["body"].encode()) + sum(len(t.encode()) for t in n["tags"])
                       for n in json.load(f)["notes"])
        print(f"{count} notes: {os.path.getsize(mine)} bytes (mine), {os.path.getsize(theirs)} bytes (theirs), "
              f"{text} bytes of text")
        names = list(commands(tools[0], work, base, mine, theirs))
        if only:
            names = [n for n in names if n in only.split(",")]
        results = {(t, n): [] for t in tools for n in names}
        for _ in range(runs):
            for n in names:
                for t in tools:
                    prepare, argv = commands(t, work, base, mine, theirs)[n]
                    results[(t, n)].append(run(prepare, argv))
        # Peaks by GNU time, in runs of their own (its start would add to the times above): the
        # largest of up to three, in place of os.wait4's.
        if not os.access(GNU_TIME, os.X_OK):
            print(f"note: no {GNU_TIME} (Debian: apt-get install time): peaks are os.wait4's, at least this script's own memory")
        else:
            peaks = {key: [] for key in results}
            for _ in range(min(runs, 3)):
                for n in names:
                    for t in tools:
                        prepare, argv = commands(t, work, base, mine, theirs)[n]
                        peaks[(t, n)].append(peak(prepare, argv))
            for key, rs in results.items():
                top = max(peaks[key])
                rs[:] = [(wall, cpu, top) for wall, cpu, _ in rs]
        for n in names:
            for t in tools:
                rs = results[(t, n)]
                walls = sorted(r[0] for r in rs)
                q = statistics.quantiles(walls, n=4) if len(walls) > 1 else [walls[0]] * 3
                cpu = statistics.median(r[1] for r in rs)
                rss = max(r[2] for r in rs)
                print(f"{n:15} {t:30} wall {statistics.median(walls):7.1f} ms ({q[0]:.1f}-{q[2]:.1f})  cpu {cpu:7.1f} ms  peak {rss:6.1f} MB")
        return names, results, text
    finally:
        shutil.rmtree(work, ignore_errors=True)


def scale_table(sizes, measured, tools):
    """Markdown: per tool and command, wall time (peak memory) at each size, and growth vs n log n."""
    first = sizes[0]
    nlogn = lambda n: n * math.log2(n)
    head = "| command | " + " | ".join(f"{n:,} notes" for n in sizes) + " | growth / n log n, smallest to largest |"
    lines = [head, "|---|" + "---|" * (len(sizes) + 1)]
    names = measured[first][0]
    for t in tools:
        for name in names:
            cells, walls = [], []
            for n in sizes:
                rs = measured[n][1][(t, name)]
                wall = statistics.median(r[0] for r in rs)
                peak = max(r[2] for r in rs)
                bound = 20 + 3 * measured[n][2] / 1e6
                walls.append(wall)
                cells.append(f"{wall:.1f} ms, {peak:.1f} MB (bound {bound:.0f})")
            growth = (walls[-1] / walls[0]) / (nlogn(sizes[-1]) / nlogn(first)) if len(sizes) > 1 else 1
            label = name if len(tools) == 1 else f"{name} ({t})"
            lines.append(f"| {label} | " + " | ".join(cells) + f" | {growth:.2f} |")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--notes", default="20000", help="notebook size, or comma-separated sizes for a scale table")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--only", help="comma-separated command names to run (default: all)")
    p.add_argument("tools", nargs="+", help="folders holding peernote and pnmerge")
    a = p.parse_args()
    sizes = sorted(int(x) for x in a.notes.split(",") if x)
    measured = {n: measure(a.tools, n, a.runs, a.only) for n in sizes}
    if len(sizes) > 1:
        print()
        print(scale_table(sizes, measured, a.tools))


if __name__ == "__main__":
    main()
