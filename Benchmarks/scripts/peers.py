#!/usr/bin/env python3
"""PeerNote beside Loro and Yrs on the same workloads, measured in the same run.

    pip install loro==1.17.1 pycrdt==0.14.13
    make release   # or: swift build -c release
    swift build -c release --package-path Benchmarks   # pnbench, for PeerNote's in-process figures
    python3 Benchmarks/scripts/peers.py --tools .build/release \\
        --pnbench Benchmarks/.build/release/pnbench --notes 2000,20000 --trace automerge-paper

Workloads:

notebook N   N notes of about 200 characters and one tag each (Benchmarks/scripts/many-notes.py
             builds PeerNote's with `peernote import`). MINE edits two notes' bodies and adds a
             note; THEIRS retitles one note, tags one and deletes one. Loro and Yrs hold the same
             notebook as a map of notes, each a map with a text body, a title, a list of tags and
             a priority, and make the same edits on two copies of it.
trace        automerge-paper (../shared/traces): copy A replays the whole trace; copy B the first
             half, then appends 2,000 characters one change at a time (as `pnbench diverge`).

For each: the two copies are loaded from their bytes, B merged into A, and the result saved,
each step timed in-process (median of --runs); `total` is load both + merge + save. Sizes are
the saved bytes of copy A and of the merged result (Loro: snapshot; Yrs: the full update,
`get_update()`). PeerNote's in-process figures come from `pnbench notebook` and `pnbench run`;
its whole-process figure is `pnmerge merge A B -o OUT` (start-up included, median of --runs).
"""
import argparse
import gzip
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from loro import ExportMode, LoroDoc, LoroList, LoroMap, LoroText
from pycrdt import Array, Doc, Map, Text

HERE = os.path.dirname(os.path.abspath(__file__))


def timed(f):
    start = time.perf_counter()
    value = f()
    return (time.perf_counter() - start) * 1000, value


def median_runs(runs, once):
    """Runs `once` (returning a dict of step -> ms, plus sizes) `runs` times; medians per step."""
    results = [once() for _ in range(runs)]
    out = {}
    for key in results[0]:
        values = [r[key] for r in results]
        out[key] = statistics.median(values) if key.endswith("_ms") else values[-1]
    return out


def body(i):
    return (f"Line of text for note {i}. " * 8).strip()


# MARK: Loro

class LoroNotebook:
    @staticmethod
    def build(n):
        doc = LoroDoc()
        notes = doc.get_map("notes")
        for i in range(n):
            m = notes.insert_container(f"n{i}", LoroMap())
            m.insert("title", f"Note {i}")
            m.insert_container("body", LoroText()).insert(0, body(i))
            m.insert_container("tags", LoroList()).insert(0, f"t{i % 50}")
            m.insert("priority", "normal")
        doc.commit()
        return doc.export(ExportMode.Snapshot())

    @staticmethod
    def note(doc, i):
        return doc.get_map("notes").get(f"n{i}").container

    @staticmethod
    def set_body(doc, i, text):
        t = LoroNotebook.note(doc, i).get("body").container
        t.delete(0, t.len_unicode)
        t.insert(0, text)

    @staticmethod
    def copies(n):
        base = LoroNotebook.build(n)
        mine = LoroDoc(); mine.import_(base)
        LoroNotebook.set_body(mine, 5, "Changed on the laptop.")
        LoroNotebook.set_body(mine, n // 2, "Also changed on the laptop.")
        m = mine.get_map("notes").insert_container("new", LoroMap())
        m.insert("title", "New on the laptop")
        m.insert_container("body", LoroText()).insert(0, "hello")
        m.insert_container("tags", LoroList())
        m.insert("priority", "normal")
        mine.commit()
        theirs = LoroDoc(); theirs.import_(base)
        LoroNotebook.note(theirs, 7).insert("title", "Note 7, retitled on the phone")
        tags = LoroNotebook.note(theirs, n - 1).get("tags").container
        tags.insert(len(tags), "phone")
        theirs.get_map("notes").delete("n9")
        theirs.commit()
        return mine.export(ExportMode.Snapshot()), theirs.export(ExportMode.Snapshot())


def loro_merge(a_bytes, b_bytes):
    def once():
        t_a, a = timed(lambda: _loro_load(a_bytes))
        t_b, b = timed(lambda: _loro_load(b_bytes))
        t_m, _ = timed(lambda: a.import_(b.export(ExportMode.Updates(a.oplog_vv))))
        t_s, out = timed(lambda: a.export(ExportMode.Snapshot()))
        return {"load_a_ms": t_a, "load_b_ms": t_b, "merge_ms": t_m, "save_ms": t_s,
                "total_ms": t_a + t_b + t_m + t_s, "size_a": len(a_bytes), "merged_size": len(out)}
    return once


def _loro_load(data):
    doc = LoroDoc()
    doc.import_(data)
    return doc


# MARK: Yrs (pycrdt)

class YrsNotebook:
    @staticmethod
    def build(n):
        doc = Doc()
        notes = doc.get("notes", type=Map)
        with doc.transaction():
            for i in range(n):
                notes[f"n{i}"] = Map({"title": f"Note {i}", "body": Text(body(i)), "tags": Array([f"t{i % 50}"]),
                                      "priority": "normal"})
        return doc.get_update()

    @staticmethod
    def load(data):
        doc = Doc()
        doc.apply_update(data)
        return doc

    @staticmethod
    def copies(n):
        base = YrsNotebook.build(n)
        mine = YrsNotebook.load(base)
        notes = mine.get("notes", type=Map)
        with mine.transaction():
            for i, text in ((5, "Changed on the laptop."), (n // 2, "Also changed on the laptop.")):
                t = notes[f"n{i}"]["body"]
                del t[0:len(t)]
                t.insert(0, text)
            notes["new"] = Map({"title": "New on the laptop", "body": Text("hello"), "tags": Array([]), "priority": "normal"})
        theirs = YrsNotebook.load(base)
        notes = theirs.get("notes", type=Map)
        with theirs.transaction():
            notes["n7"]["title"] = "Note 7, retitled on the phone"
            notes[f"n{n - 1}"]["tags"].append("phone")
            del notes["n9"]
        return mine.get_update(), theirs.get_update()


def yrs_merge(a_bytes, b_bytes):
    def once():
        t_a, a = timed(lambda: YrsNotebook.load(a_bytes))
        t_b, b = timed(lambda: YrsNotebook.load(b_bytes))
        t_m, _ = timed(lambda: a.apply_update(b.get_update(a.get_state())))
        t_s, out = timed(lambda: a.get_update())
        return {"load_a_ms": t_a, "load_b_ms": t_b, "merge_ms": t_m, "save_ms": t_s,
                "total_ms": t_a + t_b + t_m + t_s, "size_a": len(a_bytes), "merged_size": len(out)}
    return once


# MARK: The trace

def trace_patches(path):
    with gzip.open(path, "rt") as f:
        data = json.load(f)
    patches = [p for txn in data["txns"] for p in txn["patches"]]
    return data, patches


APPENDED = 2000


def trace_copies_loro(txns):
    a = LoroDoc(); ta = a.get_text("text")
    half = len(txns) // 2
    b = None
    for k, txn in enumerate(txns):
        if k == half:
            a.commit()
            b = LoroDoc(); b.import_(a.export(ExportMode.Snapshot()))
        for pos, deleted, inserted in txn["patches"]:
            if deleted:
                ta.delete(pos, deleted)
            if inserted:
                ta.insert(pos, inserted)
        a.commit()
    tb = b.get_text("text")
    for k in range(APPENDED):
        tb.insert(tb.len_unicode, "xyz"[k % 3])
        b.commit()
    return a.export(ExportMode.Snapshot()), b.export(ExportMode.Snapshot())


def trace_copies_yrs(txns):
    a = Doc(); ta = a.get("text", type=Text)
    half = len(txns) // 2
    b = None
    for k, txn in enumerate(txns):
        if k == half:
            b = YrsNotebook.load(a.get_update())
        with a.transaction():
            for pos, deleted, inserted in txn["patches"]:
                if deleted:
                    del ta[pos:pos + deleted]
                if inserted:
                    ta.insert(pos, inserted)
    tb = b.get("text", type=Text)
    for k in range(APPENDED):
        with b.transaction():
            tb.insert(len(tb), "xyz"[k % 3])
    return a.get_update(), b.get_update()


# MARK: PeerNote

def many_notes():
    spec = importlib.util.spec_from_file_location("many_notes", os.path.join(HERE, "many-notes.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def process_ms(argv, runs, prepare=None):
    walls = []
    for _ in range(runs):
        if prepare:
            prepare()
        start = time.perf_counter()
        proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        walls.append((time.perf_counter() - start) * 1000)
        if proc.returncode not in (0, 1):
            raise SystemExit(f"{' '.join(argv)}: exit {proc.returncode}: {proc.stderr.decode(errors='replace').strip()}")
    return statistics.median(walls)


def peernote_notebook(args, work, n):
    base, mine, theirs = many_notes().build(args.tools, work, n)
    out = os.path.join(work, "out.peernote")
    row = {"size_a": os.path.getsize(mine)}

    def remove_out():
        if os.path.exists(out):
            os.remove(out)
    row["process_ms"] = process_ms([os.path.join(args.tools, "pnmerge"), "merge", mine, theirs, "-o", out], args.runs, remove_out)
    row["merged_size"] = os.path.getsize(out)
    if args.pnbench:
        r = json.loads(subprocess.run([args.pnbench, "notebook", "--mine", mine, "--theirs", theirs, "--runs", str(args.runs)],
                                      check=True, capture_output=True, text=True).stdout)
        m = r["merge_parts_ms"]
        row.update({"load_a_ms": m["load_a"], "load_b_ms": m["load_b"], "merge_ms": m["merge"], "save_ms": m["save"],
                    "total_ms": r["merge_ms"]})
    return row


def peernote_trace(args, work):
    a, b, out = (os.path.join(work, f) for f in ("A.peernote", "B.peernote", "out.peernote"))
    row = {}
    if args.pnbench:
        subprocess.run([args.pnbench, "diverge", args.trace, "-a", a, "-b", b], check=True, stdout=subprocess.DEVNULL)
        r = json.loads(subprocess.run([args.pnbench, "run", args.trace, "--runs", str(args.runs), "--replay-runs", "1"],
                                      check=True, capture_output=True, text=True).stdout)
        m = r["merge_parts_ms"]
        row.update({"load_a_ms": m["load_a"], "load_b_ms": m["load_b"], "merge_ms": m["merge"], "save_ms": m["save"],
                    "total_ms": r["merge_ms"], "size_a": r["size"], "merged_size": r["merged_size"]})

        def remove_out():
            if os.path.exists(out):
                os.remove(out)
        row["process_ms"] = process_ms([os.path.join(args.tools, "pnmerge"), "merge", a, b, "-o", out], args.runs, remove_out)
    return row


# MARK: Output

COLUMNS = [("load_a_ms", "load A"), ("load_b_ms", "load B"), ("merge_ms", "merge"), ("save_ms", "save"),
           ("total_ms", "total"), ("process_ms", "pnmerge process"), ("size_a", "size A"), ("merged_size", "merged size")]


def cell(value, key):
    if value is None:
        return ""
    return f"{value:,} B" if key.endswith("size") or key == "size_a" else f"{value:.1f} ms"


def table(rows):
    lines = ["| workload | system | " + " | ".join(c[1] for c in COLUMNS) + " |",
             "|---|---|" + "---|" * len(COLUMNS)]
    for workload, system, row in rows:
        lines.append(f"| {workload} | {system} | " + " | ".join(cell(row.get(k), k) for k, _ in COLUMNS) + " |")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tools", required=True, help="folder holding release pnmerge and peernote")
    p.add_argument("--pnbench", help="pnbench (release) for PeerNote's in-process figures")
    p.add_argument("--notes", default="2000,20000", help="comma-separated notebook sizes (default 2000,20000)")
    p.add_argument("--trace", help="also the trace workload: a .json.gz path or a name in ../shared/traces")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--json", action="store_true", help="print the rows as JSON instead of a Markdown table")
    a = p.parse_args()
    if a.trace and not os.path.exists(a.trace):
        a.trace_path = os.path.join(HERE, "..", "..", "..", "shared", "traces", a.trace + ".json.gz")
    else:
        a.trace_path = a.trace
    rows = []
    work = tempfile.mkdtemp(prefix="pn-peers.")
    try:
        for n in (int(x) for x in a.notes.split(",") if x):
            label = f"notebook {n:,}"
            rows.append((label, "PeerNote", peernote_notebook(a, work, n)))
            mine, theirs = LoroNotebook.copies(n)
            rows.append((label, "Loro 1.17.1", median_runs(a.runs, loro_merge(mine, theirs))))
            mine, theirs = YrsNotebook.copies(n)
            rows.append((label, "Yrs (pycrdt 0.14.13)", median_runs(a.runs, yrs_merge(mine, theirs))))
        if a.trace:
            label = os.path.basename(a.trace).removesuffix(".json.gz")
            data, _ = trace_patches(a.trace_path)
            rows.append((label, "PeerNote", peernote_trace(a, work)))
            mine, theirs = trace_copies_loro(data["txns"])
            rows.append((label, "Loro 1.17.1", median_runs(a.runs, loro_merge(mine, theirs))))
            mine, theirs = trace_copies_yrs(data["txns"])
            rows.append((label, "Yrs (pycrdt 0.14.13)", median_runs(a.runs, yrs_merge(mine, theirs))))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if a.json:
        print(json.dumps([{"workload": w, "system": s, **r} for w, s, r in rows], indent=1))
    else:
        print(table(rows))


if __name__ == "__main__":
    main()
