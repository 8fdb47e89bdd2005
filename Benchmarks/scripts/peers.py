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

A second table has what one copy costs: PeerNote's `pnmerge validate A`, `peernote list A` and
one `peernote edit` of A (an appended save) as whole processes, median of --runs, with the
largest peak memory (os.wait4) of those and of the merge; Loro's and Yrs's in-process load of
A (`load`), load and read every note's title (`list`), and load, set one note's body and save
the whole document again (`edit`; Loro: snapshot, Yrs: `get_update()`). Their peak memory is
that of a fresh Python process that loads A and B, merges and saves once (largest of --runs),
beside that of a Python process that only imports the library: Python's own share.
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


def timed_cpu(f):
    """(wall ms, CPU ms of this process, every thread) of f()."""
    start, cpu = time.perf_counter(), time.process_time()
    f()
    return (time.perf_counter() - start) * 1000, (time.process_time() - cpu) * 1000


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
        cpu = time.process_time()
        t_a, a = timed(lambda: _loro_load(a_bytes))
        t_b, b = timed(lambda: _loro_load(b_bytes))
        t_m, _ = timed(lambda: a.import_(b.export(ExportMode.Updates(a.oplog_vv))))
        t_s, out = timed(lambda: a.export(ExportMode.Snapshot()))
        return {"load_a_ms": t_a, "load_b_ms": t_b, "merge_ms": t_m, "save_ms": t_s, "total_cpu_ms": (time.process_time() - cpu) * 1000,
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
        cpu = time.process_time()
        t_a, a = timed(lambda: YrsNotebook.load(a_bytes))
        t_b, b = timed(lambda: YrsNotebook.load(b_bytes))
        t_m, _ = timed(lambda: a.apply_update(b.get_update(a.get_state())))
        t_s, out = timed(lambda: a.get_update())
        return {"load_a_ms": t_a, "load_b_ms": t_b, "merge_ms": t_m, "save_ms": t_s, "total_cpu_ms": (time.process_time() - cpu) * 1000,
                "total_ms": t_a + t_b + t_m + t_s, "size_a": len(a_bytes), "merged_size": len(out)}
    return once


def loro_one_copy(a_bytes, n):
    """Loro's load, list (read every title) and edit (set a body, export a snapshot) of copy A."""
    def once():
        t_load, c_load = timed_cpu(lambda: _loro_load(a_bytes))
        t_list, c_list = timed_cpu(lambda: [m.container.get("title") for m in (_loro_load(a_bytes).get_map("notes").values())])

        def edit():
            doc = _loro_load(a_bytes)
            LoroNotebook.set_body(doc, 11, "z")
            doc.commit()
            return doc.export(ExportMode.Snapshot())
        t_edit, c_edit = timed_cpu(edit)
        return {"validate_ms": t_load, "list_ms": t_list, "edit_ms": t_edit,
                "validate_cpu_ms": c_load, "list_cpu_ms": c_list, "edit_cpu_ms": c_edit}
    return once


def yrs_one_copy(a_bytes, n):
    """Yrs's load, list (read every title) and edit (set a body, save the whole update) of copy A."""
    def once():
        t_load, c_load = timed_cpu(lambda: YrsNotebook.load(a_bytes))
        t_list, c_list = timed_cpu(lambda: [v["title"] for v in YrsNotebook.load(a_bytes).get("notes", type=Map).values()])

        def edit():
            doc = YrsNotebook.load(a_bytes)
            with doc.transaction():
                t = doc.get("notes", type=Map)["n11"]["body"]
                del t[0:len(t)]
                t.insert(0, "z")
            return doc.get_update()
        t_edit, c_edit = timed_cpu(edit)
        return {"validate_ms": t_load, "list_ms": t_list, "edit_ms": t_edit,
                "validate_cpu_ms": c_load, "list_cpu_ms": c_list, "edit_cpu_ms": c_edit}
    return once


def child(system, a_path, b_path):
    """In a fresh process (for its peak memory): load A and B, merge, save; or only import."""
    if a_path is None:
        return
    with open(a_path, "rb") as f:
        a_bytes = f.read()
    with open(b_path, "rb") as f:
        b_bytes = f.read()
    (loro_merge if system == "loro" else yrs_merge)(a_bytes, b_bytes)()


def peer_peak_mb(system, work, a_bytes, b_bytes, runs):
    """(peak MB of a Python process merging A and B with `system`, peak MB of one only importing it)."""
    a_path, b_path = os.path.join(work, f"{system}-a.bin"), os.path.join(work, f"{system}-b.bin")
    with open(a_path, "wb") as f:
        f.write(a_bytes)
    with open(b_path, "wb") as f:
        f.write(b_bytes)
    me = [sys.executable, os.path.abspath(__file__), "--child", system]
    merged = max(wait_peak(me + ["--a", a_path, "--b", b_path]) for _ in range(runs))
    alone = max(wait_peak(me) for _ in range(runs))
    return merged, alone


def wait_peak(argv, prepare=None):
    """Peak memory (MB) of one run of argv, as GNU time reports it. Not os.wait4's: Linux
    counts in a child's peak the memory of the process it was forked from (this Python, which
    holds the peers' documents) up to its exec."""
    if prepare:
        prepare()
    with tempfile.NamedTemporaryFile("r") as out:
        proc = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", out.name] + argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if proc.returncode not in (0, 1):
            raise SystemExit(f"{' '.join(argv)}: exit {proc.returncode}: {proc.stderr.decode(errors='replace').strip()}")
        return int(out.read().split()[-1]) / 1024


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


def process_ms(argv, runs, prepare=None, cpu=None):
    """(median wall ms, peak MB) of `runs` fresh processes of `argv`; the median CPU ms (user +
    system, os.wait4) goes into `cpu` when given. The peak is taken by one more run (`wait_peak`)."""
    walls, cpus = [], []
    for _ in range(runs):
        if prepare:
            prepare()
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        walls.append((time.perf_counter() - start) * 1000)
        cpus.append((usage.ru_utime + usage.ru_stime) * 1000)
        code = os.waitstatus_to_exitcode(status)
        if code not in (0, 1):
            raise SystemExit(f"{' '.join(argv)}: exit {code}: {proc.stderr.read().decode(errors='replace').strip()}")
    if cpu is not None:
        cpu.append(statistics.median(cpus))
    return statistics.median(walls), wait_peak(argv, prepare)


def peernote_one_copy(args, work, mine, edit_args):
    """PeerNote's validate, list and edit of `mine` as whole processes: medians, and their peak."""
    pn, pm = os.path.join(args.tools, "peernote"), os.path.join(args.tools, "pnmerge")
    fresh = os.path.join(work, "fresh.peernote")

    def copy_fresh():
        shutil.copyfile(mine, fresh)
    row, peaks = {}, []
    for key, prepare, argv in (("validate_ms", None, [pm, "validate", mine]), ("list_ms", None, [pn, "list", mine]),
                               ("edit_ms", copy_fresh, [pn, "edit", fresh] + edit_args + ["--author", "bench"])):
        cpu = []
        row[key], peak = process_ms(argv, args.runs, prepare, cpu)
        row[key.replace("_ms", "_cpu_ms")] = cpu[0]
        peaks.append(peak)
    return row, max(peaks)


def peernote_notebook(args, work, n):
    work = os.path.join(work, f"notebook-{n}")
    os.mkdir(work)
    base, mine, theirs = many_notes().build(args.tools, work, n)
    out = os.path.join(work, "out.peernote")
    row = {"size_a": os.path.getsize(mine)}

    def remove_out():
        if os.path.exists(out):
            os.remove(out)
    cpu = []
    row["process_ms"], merge_peak = process_ms([os.path.join(args.tools, "pnmerge"), "merge", mine, theirs, "-o", out], args.runs, remove_out, cpu)
    row["process_cpu_ms"] = cpu[0]
    row["merged_size"] = os.path.getsize(out)
    one, peak = peernote_one_copy(args, work, mine, ["Note 11", "--body", "z"])
    row.update(one)
    row["peak_mb"] = max(peak, merge_peak)
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
        cpu = []
        row["process_ms"], merge_peak = process_ms([os.path.join(args.tools, "pnmerge"), "merge", a, b, "-o", out], args.runs, remove_out, cpu)
        row["process_cpu_ms"] = cpu[0]
        row["replay_ms"] = r["replay_ms"]
        row["load_readnotebook_ms"] = r["load_ms"]
        # The note's title is the trace's name (`pnbench diverge`); the edit retitles it.
        one, peak = peernote_one_copy(args, work, a, [r.get("trace", os.path.basename(args.trace).removesuffix(".json.gz")),
                                                       "--title", "retitled"])
        row.update(one)
        row["peak_mb"] = max(peak, merge_peak)
    return row


# MARK: Output

COLUMNS = [("size_a", "size A"), ("merged_size", "merged size"), ("load_a_ms", "load A"), ("load_b_ms", "load B"),
           ("merge_ms", "merge"), ("save_ms", "save"), ("total_ms", "total"), ("total_cpu_ms", "total, CPU"),
           ("process_ms", "`pnmerge merge -o` process"), ("process_cpu_ms", "process, CPU")]
ONE_COPY = [("validate_ms", "validate / load A"), ("validate_cpu_ms", "CPU"), ("list_ms", "list"), ("list_cpu_ms", "CPU"),
            ("edit_ms", "edit"), ("edit_cpu_ms", "CPU"), ("peak_mb", "peak memory"),
            ("text_bytes", "notebook text")]


def cell(value, key):
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if key.endswith("size") or key == "size_a" or key == "text_bytes":
        return f"{value:,} B"
    return f"{value:.1f} MB" if key == "peak_mb" else f"{value:.1f} ms"


def table(rows, columns):
    lines = ["| workload | system | " + " | ".join(c[1] for c in columns) + " |",
             "|---|---|" + "---|" * len(columns)]
    for workload, system, row in rows:
        lines.append(f"| {workload} | {system} | " + " | ".join(cell(row.get(k), k) for k, _ in columns) + " |")
    return "\n".join(lines)


def text_bytes(n):
    """The notebook's text (titles, bodies, tags) in UTF-8 bytes: the issue's memory bound is 20 MB plus three times this."""
    return sum(len(f"Note {i}") + len(body(i)) + len(f"t{i % 50}") for i in range(n))


def targets(rows):
    """The issue's targets, each with the figures it was judged on, as lines."""
    by = {(w, s.split(" ")[0]): r for w, s, r in rows}
    lines = []
    for w in dict.fromkeys(w for w, _, _ in rows):
        pn, lo, yr = by.get((w, "PeerNote")), by.get((w, "Loro")), by.get((w, "Yrs"))
        if not (pn and lo and yr):
            continue
        best = min(lo["total_ms"], yr["total_ms"])
        met = lambda ok: "met" if ok else "NOT met"
        best_cpu = min(lo["total_cpu_ms"], yr["total_cpu_ms"])
        lines.append(f"- {w}: whole `pnmerge merge -o` {pn['process_ms']:.1f} ms against the faster peer's in-process merge "
                     f"{best:.1f} ms: {met(pn['process_ms'] <= best)} (CPU {pn['process_cpu_ms']:.1f} against {best_cpu:.1f} ms: "
                     f"{met(pn['process_cpu_ms'] <= best_cpu)})")
        if w.startswith("notebook"):
            for k, name in (("validate_ms", "validate"), ("list_ms", "list"), ("edit_ms", "edit")):
                c = pn[k.replace("_ms", "_cpu_ms")]
                lines.append(f"  - `{name}` process {pn[k]:.1f} ms, under 50 ms: {met(pn[k] < 50)} (CPU {c:.1f} ms: {met(c < 50)})")
            bound = 20 + 3 * pn["text_bytes"] / 1e6
            lines.append(f"  - peak memory {pn['peak_mb']:.1f} MB, under 20 MB + 3 x {pn['text_bytes'] / 1e6:.2f} MB of text "
                         f"= {bound:.1f} MB: {met(pn['peak_mb'] < bound)}")
        else:
            if "total_ms" in pn:
                lines.append(f"  - in-process merge {pn['total_ms']:.1f} ms, no slower than Yrs's {yr['total_ms']:.1f} ms: "
                             f"{met(pn['total_ms'] <= yr['total_ms'])}")
            lines.append(f"  - whole `pnmerge merge A B -o OUT` {pn['process_ms']:.1f} ms, under 15 ms: {met(pn['process_ms'] < 15)}")
            if "size_a" in pn:
                small = min(lo["size_a"], yr["size_a"])
                lines.append(f"  - size {pn['size_a']:,} B, at most half the smaller peer's {small:,} B: {met(pn['size_a'] <= small / 2)}")
                fast = min(lo["load_a_ms"], yr["load_a_ms"])
                lines.append(f"  - load (`readNotebook`) {pn['load_readnotebook_ms']:.2f} ms, full load {pn['load_a_ms']:.2f} ms, "
                             f"at most half the faster peer's {fast:.2f} ms: {met(pn['load_readnotebook_ms'] <= fast / 2)} "
                             f"(`readNotebook`), {met(pn['load_a_ms'] <= fast / 2)} (full)")
                lines.append(f"  - replay {pn['replay_ms']:.1f} ms, under 20 ms: {met(pn['replay_ms'] < 20)}")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tools", help="folder holding release pnmerge and peernote (required)")
    p.add_argument("--pnbench", help="pnbench (release) for PeerNote's in-process figures")
    p.add_argument("--notes", default="2000,20000", help="comma-separated notebook sizes (default 2000,20000)")
    p.add_argument("--trace", help="also the trace workload: a .json.gz path or a name in ../shared/traces")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--json", action="store_true", help="print the rows as JSON instead of a Markdown table")
    p.add_argument("--child", choices=["loro", "yrs"], help=argparse.SUPPRESS)
    p.add_argument("--a", help=argparse.SUPPRESS)
    p.add_argument("--b", help=argparse.SUPPRESS)
    if "--child" in sys.argv:
        c = p.parse_known_args()[0]
        return child(c.child, c.a, c.b)
    if "--tools" not in sys.argv:
        p.error("--tools is required")
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
            row = peernote_notebook(a, work, n)
            row["text_bytes"] = text_bytes(n)
            rows.append((label, "PeerNote", row))
            for name, system, copies, merge, one_copy in (("Loro 1.17.1", "loro", LoroNotebook.copies, loro_merge, loro_one_copy),
                                                          ("Yrs (pycrdt 0.14.13)", "yrs", YrsNotebook.copies, yrs_merge, yrs_one_copy)):
                mine, theirs = copies(n)
                row = median_runs(a.runs, merge(mine, theirs))
                row.update(median_runs(a.runs, one_copy(mine, n)))
                merged, alone = peer_peak_mb(system, work, mine, theirs, a.runs)
                row["peak_mb"] = f"{merged:.1f} MB (Python alone {alone:.1f})"
                row["text_bytes"] = text_bytes(n)
                rows.append((label, name, row))
        if a.trace:
            label = os.path.basename(a.trace).removesuffix(".json.gz")
            data, _ = trace_patches(a.trace_path)
            rows.append((label, "PeerNote", peernote_trace(a, work)))
            for name, system, copies, merge, load in (("Loro 1.17.1", "loro", trace_copies_loro, loro_merge, _loro_load),
                                                      ("Yrs (pycrdt 0.14.13)", "yrs", trace_copies_yrs, yrs_merge, YrsNotebook.load)):
                mine, theirs = copies(data["txns"])
                row = median_runs(a.runs, merge(mine, theirs))
                row["validate_ms"] = statistics.median(timed(lambda: load(mine))[0] for _ in range(a.runs))
                merged, alone = peer_peak_mb(system, work, mine, theirs, a.runs)
                row["peak_mb"] = f"{merged:.1f} MB (Python alone {alone:.1f})"
                rows.append((label, name, row))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if a.json:
        print(json.dumps([{"workload": w, "system": s, **r} for w, s, r in rows], indent=1))
    else:
        print(table(rows, COLUMNS))
        print()
        print(table(rows, ONE_COPY))
        print()
        print(targets(rows))


if __name__ == "__main__":
    main()
