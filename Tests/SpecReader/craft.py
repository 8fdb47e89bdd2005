#!/usr/bin/env python3
"""Hand-built files (from the spec's encoding rules) for op shapes the CLI never writes:
reversed deletes, op rows spanning two changes, backwards typing by two replicas,
unknown op kinds mixed with text; and version 3 files (structures, column 49), valid and
damaged. Each is checked with both readers; a case built to be accepted or refused says so
(run_both's `expect`), and then both readers must do that."""
import sys, os, zlib, subprocess
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pnread
import mutate
from mutate import enc, head, envelope, deflate, uleb, run_both, Raw


def sleb(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if (n == 0 and not b & 0x40) or (n == -1 and b & 0x40):
            out.append(b)
            return bytes(out)
        out.append(b | 0x80)


def rle(vals, signed=False):
    e = sleb if signed else uleb
    out, lit, i = bytearray(), [], 0
    def flush():
        if lit:
            out.extend(sleb(-len(lit)))
            for v in lit:
                out.extend(e(v))
            lit.clear()
    while i < len(vals):
        j = i
        while j < len(vals) and vals[j] == vals[i]:
            j += 1
        if j - i >= 2:
            flush()
            out.extend(sleb(j - i)); out.extend(e(vals[i]))
        else:
            lit.append(vals[i])
        i = j
    flush()
    return bytes(out)


def delta(vals):
    prev, d = 0, []
    for v in vals:
        d.append(v - prev); prev = v
    return rle(d, signed=True)


def boolcol(vals):
    out, cur, n = bytearray(), False, 0
    for v in vals:
        if v == cur:
            n += 1
        else:
            out.extend(uleb(n)); cur, n = v, 1
    if vals:
        out.extend(uleb(n))
    return bytes(out)


def build(replicas, strings, changes, ops, uuid=bytes(range(16)), kind=0, version=1, extra_fields=(),
          origins_stored=None, text=None, state=None, state_size=None):
    """changes: dict(r, seq, length, deps=[distances], time, author, msg)
       ops: dict(kind, length, note=(ri,c), ref1, ref2, rev, value, preds, prio, created, text, payload)
       origins_stored: column 49, one bool per insertText op (those with False get no entries in
       columns 34-37); text: column 46 instead of the ops' text; state: the state section's CBOR
       (uncompressed), written as fields 12 and 13."""
    C = {}
    C[10] = rle([c["r"] for c in changes]); C[11] = delta([c["seq"] for c in changes])
    C[12] = rle([c["length"] for c in changes]); C[13] = rle([len(c["deps"]) for c in changes])
    C[14] = rle([d for c in changes for d in c["deps"]]); C[15] = delta([c.get("time", 1700000000) for c in changes])
    C[16] = rle([c.get("author", 0) for c in changes]); C[17] = rle([c.get("msg", 0) for c in changes])
    C[18] = rle([0 for c in changes])
    KC = pnread.KIND_COLS
    C[30] = rle([o["kind"] for o in ops]); C[31] = rle([o["length"] for o in ops])
    note = [o["note"] for o in ops if "note" in KC.get(o["kind"], [])]
    C[32] = rle([n[0] for n in note]); C[33] = delta([n[1] for n in note])
    ins = [o for o in ops if o["kind"] == 4]
    omitted = set(id(o) for o, st in zip(ins, origins_stored) if not st) if origins_stored is not None else set()
    for key, cr, cc in (("ref1", 34, 35), ("ref2", 36, 37)):
        refs = [o.get(key) for o in ops if key in KC.get(o["kind"], []) and id(o) not in omitted]
        C[cr] = rle([0 if r is None else r[0] + 1 for r in refs])
        C[cc] = delta([r[1] for r in refs if r is not None])
    C[38] = boolcol([o.get("rev", False) for o in ops if o["kind"] == 5])
    vals = [o["value"].encode() for o in ops if "value" in KC.get(o["kind"], [])]
    C[39] = rle([len(v) for v in vals]); C[40] = b"".join(vals)
    preds = [o.get("preds", []) for o in ops if "preds" in KC.get(o["kind"], [])]
    C[41] = rle([len(p) for p in preds])
    C[42] = rle([x[0] for p in preds for x in p]); C[43] = delta([x[1] for p in preds for x in p])
    C[44] = rle([o["prio"] for o in ops if o["kind"] == 8])
    C[45] = delta([o["created"] for o in ops if o["kind"] == 2])
    C[46] = ("".join(o["text"] for o in ops if o["kind"] == 4) if text is None else text).encode()
    unk = [o.get("payload", b"") for o in ops if o["kind"] not in KC]
    C[47] = rle([len(p) for p in unk]); C[48] = b"".join(unk)
    if origins_stored is not None:
        C[49] = boolcol(origins_stored)
    raw = b"".join(uleb(k) + uleb(len(v)) + v for k, v in sorted(C.items()) if v)
    fields = [(0, enc(kind))]
    if kind == 0:
        fields += [(1, b"\xd8\x25" + enc(uuid)), (2, enc([replicas[changes[0]["r"]], 1]))]
    units = sum(c["length"] for c in changes)
    fields += [(3, enc(replicas)), (4, enc(strings)), (5, enc(len(changes))), (6, enc(units)),
               (7, enc(deflate(raw))), (8, enc(len(raw)))]
    if state is not None:
        fields += [(12, enc(deflate(state))), (13, enc(len(state) if state_size is None else state_size))]
    fields += list(extra_fields)
    pl = head(5, len(fields)) + b"".join(enc(k) + v for k, v in fields)
    return envelope(pl, version=version)


R1 = bytes.fromhex("11" * 16)
R2 = bytes.fromhex("22" * 16)
R3 = bytes.fromhex("33" * 16)


def scen_reversed_and_spanning():
    N = (0, 1)
    ch = [dict(r=0, seq=1, length=1, deps=[]),
          dict(r=0, seq=2, length=7, deps=[1]),
          dict(r=0, seq=3, length=2, deps=[1]),
          dict(r=0, seq=4, length=3, deps=[1]),
          dict(r=0, seq=5, length=1, deps=[1])]
    ops = [dict(kind=1, length=1, value="T"),
           dict(kind=2, length=1, ref1=None, ref2=None, created=1700000000),
           dict(kind=4, length=8, note=N, ref1=None, ref2=None, text="abcdefgh"),   # spans changes 2 and 3
           dict(kind=5, length=4, note=N, ref1=(0, 6), rev=True)]                 # spans changes 4 and 5: 6,5,4,3
    run_both("craft-reversed-spanning", build([R1], [""], ch, ops))
    # the same history, op rows not merged (one per change)
    ops2 = [dict(kind=1, length=1, value="T"),
            dict(kind=2, length=1, ref1=None, ref2=None, created=1700000000),
            dict(kind=4, length=6, note=N, ref1=None, ref2=None, text="abcdef"),
            dict(kind=4, length=2, note=N, ref1=(0, 7), ref2=None, text="gh"),
            dict(kind=5, length=3, note=N, ref1=(0, 6), rev=True),
            dict(kind=5, length=1, note=N, ref1=(0, 3), rev=True)]
    run_both("craft-reversed-split", build([R1], [""], ch, ops2))
    # op row covering two changes whose counters do not continue (other replica between): error
    ch3 = [dict(r=0, seq=1, length=1, deps=[]), dict(r=0, seq=2, length=7, deps=[1]),
           dict(r=1, seq=1, length=1, deps=[1]), dict(r=0, seq=3, length=2, deps=[2])]
    ops3 = [dict(kind=1, length=1, value="T"),
            dict(kind=2, length=1, ref1=None, ref2=None, created=1700000000),
            dict(kind=4, length=6, note=N, ref1=None, ref2=None, text="abcdef"),
            dict(kind=6, length=1, note=N, value="tag"),
            dict(kind=4, length=2, note=N, ref1=(0, 7), ref2=None, text="gh")]
    run_both("craft-interleaved-replicas-ok", build([R1, R2], [""], ch3, ops3))
    ops3b = [dict(kind=1, length=1, value="T"),
             dict(kind=2, length=1, ref1=None, ref2=None, created=1700000000),
             dict(kind=4, length=6, note=N, ref1=None, ref2=None, text="abcdef"),
             dict(kind=6, length=1, note=N, value="tag"),
             dict(kind=4, length=2, note=N, ref1=(0, 7), ref2=None, text="gh")]
    # reversed delete going below counter 0
    ops4 = [dict(kind=1, length=1, value="T"),
            dict(kind=2, length=1, ref1=None, ref2=None, created=1700000000),
            dict(kind=4, length=6, note=N, ref1=None, ref2=None, text="abcdef"),
            dict(kind=5, length=3, note=N, ref1=(0, 1), rev=True)]
    ch4 = [dict(r=0, seq=1, length=1, deps=[]), dict(r=0, seq=2, length=7, deps=[1]),
           dict(r=0, seq=3, length=3, deps=[1])]
    run_both("craft-reversed-below-zero", build([R1], [""], ch4, ops4))
    # deleting the note's createNote id as if it were text
    ops5 = [dict(kind=1, length=1, value="T"),
            dict(kind=2, length=1, ref1=None, ref2=None, created=1700000000),
            dict(kind=4, length=6, note=N, ref1=None, ref2=None, text="abcdef"),
            dict(kind=5, length=3, note=N, ref1=(0, 3), rev=True)]
    run_both("craft-reversed-ok", build([R1], [""], ch4, ops5))


def scen_backwards_typing():
    """R1 and R2 both type backwards at the start of an empty body, concurrently; R3 forwards."""
    N = (0, 1)
    ch = [dict(r=0, seq=1, length=1, deps=[]), dict(r=0, seq=2, length=1, deps=[1]),
          dict(r=0, seq=3, length=3, deps=[1]),      # R1 backwards "xyz": z, y, x
          dict(r=1, seq=1, length=3, deps=[2]),      # R2 backwards "123" (concurrent with row 2)
          dict(r=2, seq=1, length=3, deps=[3]),      # R3 forwards "ABC" at start (concurrent)
          ]
    ops = [dict(kind=1, length=1, value="T"),
           dict(kind=2, length=1, ref1=None, ref2=None, created=1700000000),
           dict(kind=4, length=1, note=N, ref1=None, ref2=None, text="z"),
           dict(kind=4, length=1, note=N, ref1=None, ref2=(0, 2), text="y"),
           dict(kind=4, length=1, note=N, ref1=None, ref2=(0, 3), text="x"),
           dict(kind=4, length=1, note=N, ref1=None, ref2=None, text="3"),
           dict(kind=4, length=1, note=N, ref1=None, ref2=(1, 0), text="2"),
           dict(kind=4, length=1, note=N, ref1=None, ref2=(1, 1), text="1"),
           dict(kind=4, length=3, note=N, ref1=None, ref2=None, text="ABC")]
    run_both("craft-backwards-typing", build([R1, R2, R3], [""], ch, ops))
    # same three replicas, but R2 has the smallest id
    run_both("craft-backwards-typing-swapped", build([R2, R1, R3], [""], ch, ops))


def scen_unknown_kind_between_text():
    N = (0, 1)
    ch = [dict(r=0, seq=1, length=1, deps=[]), dict(r=0, seq=2, length=7, deps=[1])]
    ops = [dict(kind=1, length=1, value="T"),
           dict(kind=2, length=1, ref1=None, ref2=None, created=1700000000),
           dict(kind=4, length=2, note=N, ref1=None, ref2=None, text="ab"),
           dict(kind=77, length=2, payload=b"\xa0"),
           dict(kind=4, length=2, note=N, ref1=(0, 3), ref2=None, text="cd")]
    run_both("craft-unknown-kind-in-text", build([R1], [""], ch, ops))
    # text op referring to an op unit of an unknown kind as origin: must be refused (not an element)
    ops2 = [dict(kind=1, length=1, value="T"),
            dict(kind=2, length=1, ref1=None, ref2=None, created=1700000000),
            dict(kind=4, length=2, note=N, ref1=None, ref2=None, text="ab"),
            dict(kind=77, length=2, payload=b"\xa0"),
            dict(kind=4, length=2, note=N, ref1=(0, 5), ref2=None, text="cd")]
    run_both("craft-origin-is-unknown-op", build([R1], [""], ch, ops2))


def scen_reader_limits():
    """Limits both readers must apply before they allocate (peernote(5), LIMITS), and the time
    range: at +-2^52 s accepted (and printed alike), past it refused."""
    N = (0, 1)
    def one_note(created, time=1700000000):
        ch = [dict(r=0, seq=1, length=2, deps=[], time=time)]
        ops = [dict(kind=1, length=1, value="T"), dict(kind=2, length=1, ref1=None, ref2=None, created=created)]
        return build([R1], [""], ch, ops)
    for name, created in (("created-2^52", 1 << 52), ("created-minus-2^52", -(1 << 52)),
                          ("created-year-33658", 10 ** 12), ("created-year-minus-1", -62167219201)):
        run_both("craft-" + name, one_note(created), expect="accept")
    for name, created in (("created-2^52+1", (1 << 52) + 1), ("created-2^62+5", (1 << 62) + 5),
                          ("created-minus-2^63", -(1 << 63))):
        run_both("craft-" + name, one_note(created), expect="refuse")
    run_both("craft-time-2^52", one_note(0, time=1 << 52), expect="accept")
    run_both("craft-time-2^52+1", one_note(0, time=(1 << 52) + 1), expect="refuse")
    # a state section claiming 2^64 - 1 inflated bytes
    ch = [dict(r=0, seq=1, length=1, deps=[])]
    run_both("craft-state-size-2^64-1", build([R1], [""], ch, [dict(kind=1, length=1, value="T")], version=2,
             state=enc(["T", []]), state_size=(1 << 64) - 1), expect="refuse")
    # a change claiming nearly 2^32 op units (an op of unknown kind covers them in a few bytes)
    big = (1 << 32) - 3
    ch = [dict(r=0, seq=1, length=1, deps=[]), dict(r=0, seq=2, length=big, deps=[1])]
    run_both("craft-2^32-units", build([R1], [""], ch, [dict(kind=1, length=1, value="T"),
             dict(kind=77, length=big, payload=b"")]), expect="refuse")
    # an op of unknown kind split between two changes (forbidden), and the same within one
    ch = [dict(r=0, seq=1, length=1, deps=[]), dict(r=0, seq=2, length=1, deps=[1]), dict(r=0, seq=3, length=1, deps=[1])]
    run_both("craft-unknown-op-split", build([R1], [""], ch, [dict(kind=1, length=1, value="T"),
             dict(kind=77, length=2, payload=b"\xa0")]), expect="refuse")
    ch = [dict(r=0, seq=1, length=1, deps=[]), dict(r=0, seq=2, length=2, deps=[1])]
    run_both("craft-unknown-op-whole", build([R1], [""], ch, [dict(kind=1, length=1, value="T"),
             dict(kind=77, length=2, payload=b"\xa0")]), expect="accept")


def scen_registers():
    """Same-value concurrent title writes; priority conflict; preds naming an op of another note."""
    N = (0, 1)
    ch = [dict(r=0, seq=1, length=1, deps=[]), dict(r=0, seq=2, length=1, deps=[1]),
          dict(r=0, seq=3, length=1, deps=[1]), dict(r=1, seq=1, length=1, deps=[2]),
          dict(r=0, seq=4, length=1, deps=[2, 1])]
    ops = [dict(kind=1, length=1, value="T"),
           dict(kind=2, length=1, ref1=None, ref2=None, created=1700000000),
           dict(kind=3, length=1, note=N, value="same", preds=[]),
           dict(kind=3, length=1, note=N, value="same", preds=[]),
           dict(kind=8, length=1, note=N, prio=2, preds=[])]
    run_both("craft-same-value-conflict", build([R1, R2], [""], ch, ops))
    # a pred that is the note's createNote op (not a title entry)
    ops2 = [dict(kind=1, length=1, value="T"),
            dict(kind=2, length=1, ref1=None, ref2=None, created=1700000000),
            dict(kind=3, length=1, note=N, value="a", preds=[(0, 1)]),
            dict(kind=3, length=1, note=N, value="b", preds=[]),
            dict(kind=8, length=1, note=N, prio=2, preds=[(0, 0)])]
    run_both("craft-pred-of-other-register", build([R1, R2], [""], ch, ops2))
    # removeTag listing an op that is not an addTag of that tag
    ch3 = [dict(r=0, seq=1, length=1, deps=[]), dict(r=0, seq=2, length=3, deps=[1])]
    ops3 = [dict(kind=1, length=1, value="T"),
            dict(kind=2, length=1, ref1=None, ref2=None, created=1700000000),
            dict(kind=6, length=1, note=N, value="x"),
            dict(kind=7, length=1, note=N, value="y", preds=[(0, 2)])]
    run_both("craft-removetag-other-tag", build([R1], [""], ch3, ops3))
    # createNote with a text element as origin (not a slot)
    ch4 = [dict(r=0, seq=1, length=1, deps=[]), dict(r=0, seq=2, length=4, deps=[1])]
    ops4 = [dict(kind=1, length=1, value="T"),
            dict(kind=2, length=1, ref1=None, ref2=None, created=1700000000),
            dict(kind=4, length=2, note=N, ref1=None, ref2=None, text="ab"),
            dict(kind=2, length=1, ref1=(0, 2), ref2=None, created=1700000000)]
    run_both("craft-create-origin-text", build([R1], [""], ch4, ops4))
    # note op naming an op that is not a createNote (a text unit)
    ops5 = [dict(kind=1, length=1, value="T"),
            dict(kind=2, length=1, ref1=None, ref2=None, created=1700000000),
            dict(kind=4, length=2, note=N, ref1=None, ref2=None, text="ab"),
            dict(kind=6, length=1, note=(0, 2), value="x")]
    run_both("craft-note-is-text-unit", build([R1], [""], ch4, ops5))
    # genesis with a non-title op only (spec: PeerNote's genesis holds one setNotebookTitle)
    ch6 = [dict(r=0, seq=1, length=1, deps=[])]
    ops6 = [dict(kind=2, length=1, ref1=None, ref2=None, created=1700000000)]
    run_both("craft-genesis-createnote", build([R1], [""], ch6, ops6))
    # created time negative / before 1970
    ops7 = [dict(kind=1, length=1, value="T"),
            dict(kind=2, length=1, ref1=None, ref2=None, created=-86400 * 365)]
    run_both("craft-created-negative", build([R1], [""], [dict(r=0, seq=1, length=1, deps=[]), dict(r=0, seq=2, length=1, deps=[1])], ops7))
    # deleteNote concurrent with restoreNote (restore does not see delete)
    ch8 = [dict(r=0, seq=1, length=1, deps=[]), dict(r=0, seq=2, length=1, deps=[1]),
           dict(r=0, seq=3, length=1, deps=[1]), dict(r=1, seq=1, length=1, deps=[2])]
    ops8 = [dict(kind=1, length=1, value="T"),
            dict(kind=2, length=1, ref1=None, ref2=None, created=1700000000),
            dict(kind=9, length=1, note=N, preds=[]),
            dict(kind=10, length=1, note=N, preds=[])]
    run_both("craft-delete-vs-restore", build([R1, R2], [""], ch8, ops8))


def scen_deleted_note_conflicts():
    """A deleted note's own conflicts (two titles written concurrently, then the note deleted
    by a change that saw both) are not listed: readers show no deleted note (peernote(5),
    Conflicts), so only a delete concurrent with an edit is."""
    import compare
    N = (0, 1)
    ch = [dict(r=0, seq=1, length=1, deps=[]), dict(r=0, seq=2, length=1, deps=[1]),
          dict(r=0, seq=3, length=1, deps=[1]), dict(r=1, seq=1, length=1, deps=[2]),
          dict(r=0, seq=4, length=1, deps=[2, 1])]
    ops = [dict(kind=1, length=1, value="T"),
           dict(kind=2, length=1, ref1=None, ref2=None, created=1700000000),
           dict(kind=3, length=1, note=N, value="a", preds=[]),
           dict(kind=3, length=1, note=N, value="b", preds=[]),
           dict(kind=9, length=1, note=N, preds=[])]
    name = "craft-deleted-note-conflicts"
    run_both(name, build([R1, R2], [""], ch, ops))
    path = os.path.join(mutate.OUT, name + ".peernote")
    if compare.main([path]):
        mutate.FAILURES.append(name + " (compare.py)")
    # The same with the delete concurrent with one title: a delete/edit conflict, listed.
    ch2 = ch[:4] + [dict(r=0, seq=4, length=1, deps=[2])]
    name2 = "craft-deleted-note-edited"
    run_both(name2, build([R1, R2], [""], ch2, ops))
    path2 = os.path.join(mutate.OUT, name2 + ".peernote")
    if compare.main([path2]):
        mutate.FAILURES.append(name2 + " (compare.py)")
    # With text in the note, a compact save by the tools has a state section (version 2), which
    # lists the deleted note with the title the history shows: both readers read it.
    ch3 = [dict(r=0, seq=1, length=1, deps=[]), dict(r=0, seq=2, length=1, deps=[1]),
           dict(r=0, seq=3, length=4, deps=[1]), dict(r=0, seq=4, length=1, deps=[1]),
           dict(r=1, seq=1, length=1, deps=[2]), dict(r=0, seq=5, length=1, deps=[2, 1])]
    ops3 = [dict(kind=1, length=1, value="T"),
            dict(kind=2, length=1, ref1=None, ref2=None, created=1700000000),
            dict(kind=4, length=4, note=N, ref1=None, ref2=None, text="body"),
            dict(kind=3, length=1, note=N, value="a", preds=[]),
            dict(kind=3, length=1, note=N, value="b", preds=[]),
            dict(kind=9, length=1, note=N, preds=[])]
    name3 = "craft-deleted-note-conflicts-compact"
    run_both(name3 + "-source", build([R1, R2], [""], ch3, ops3))
    src = os.path.join(mutate.OUT, name3 + "-source.peernote")
    c = subprocess.run([mutate.BIN + "pnmerge", "compact", src], capture_output=True, text=True)
    compacted = open(src, "rb").read()
    stated = any(12 in b.fields for b in pnread.parse_blocks(compacted))
    print("%s %-28s compact rc=%d, state section %s" % ("  " if c.returncode == 0 and stated else "!!", name3, c.returncode, stated))
    if c.returncode != 0 or not stated:
        mutate.FAILURES.append(name3 + " (compact)")
    run_both(name3, compacted)
    counts = [len(pnread.conflicts(pnread.load(p))) for p in (path, path2)]
    print("%s %-28s conflicts %s (expected [0, 1])" % ("  " if counts == [0, 1] else "!!", name, counts))
    if counts != [0, 1]:
        mutate.FAILURES.append(name + " counts")


def scen_exact_strings():
    """Strings are compared by their exact code points, never by Unicode canonical equivalence
    (peernote(5), CONVENTIONS): tags, titles and authors spelled NFC and NFD side by side."""
    import json
    import compare
    NFC, NFD = "caf\u00e9", "cafe\u0301"
    N = (0, 1)
    ch = [dict(r=0, seq=1, length=1, deps=[]),
          dict(r=0, seq=2, length=10, deps=[1], author=1),
          dict(r=0, seq=3, length=1, deps=[1], author=1),
          dict(r=1, seq=1, length=1, deps=[2], author=2),       # concurrent with row 2
          dict(r=1, seq=2, length=1, deps=[1, 2], author=2)]    # after rows 2 and 3
    ops = [dict(kind=1, length=1, value="T"),
           dict(kind=2, length=1, ref1=None, ref2=None, created=1700000000),
           dict(kind=3, length=1, note=N, value="x", preds=[]),
           dict(kind=6, length=1, note=N, value=NFC),
           dict(kind=6, length=1, note=N, value=NFD),
           dict(kind=6, length=1, note=N, value="f"),
           dict(kind=6, length=1, note=N, value="e\u0301"),   # sorts before "f" by code point
           dict(kind=4, length=4, note=N, ref1=None, ref2=None, text="body"),
           dict(kind=3, length=1, note=N, value=NFC, preds=[(0, 2)]),
           dict(kind=3, length=1, note=N, value=NFD, preds=[(0, 2)]),   # a conflict: two spellings
           dict(kind=7, length=1, note=N, value=NFC, preds=[(0, 3)])]   # removes the NFC tag only
    strings = ["", "Jos\u00e9", "Jose\u0301"]
    data = build([R1, R2], strings, ch, ops)
    run_both("craft-exact-strings", data)
    path = os.path.join(mutate.OUT, "craft-exact-strings.peernote")
    # the conflict count (inspect) and the rest of compare.py's checks
    if compare.main([path]):
        mutate.FAILURES.append("craft-exact-strings (compare.py)")
    # the authors, as the file spells them
    t = subprocess.run([mutate.BIN + "pnmerge", "inspect", "--json", path], capture_output=True, text=True)
    doc = pnread.load(path)
    mine = sorted(set(c["author"] for c in doc.changes) - {""})
    tool = sorted(set(json.loads(t.stdout).get("authors", [])) - {""}) if t.returncode == 0 else None
    same = tool == mine
    print("%s %-28s tool %s | mine %s" % ("  " if same else "!!", "craft-exact-strings authors",
          json.dumps(tool), json.dumps(mine)))
    if not same:
        mutate.FAILURES.append("craft-exact-strings authors")

# ---------------------------------------------------------------- version 3

def structure_runs(elems):
    """Canonical runs (replica index, first counter, length, deleted) of a body's elements
    [(replica index, counter, deleted, char)] in document order."""
    runs = []
    for ri, c, dl, _ in elems:
        if runs and runs[-1][0] == ri and runs[-1][1] + runs[-1][2] == c and runs[-1][3] == dl:
            runs[-1][2] += 1
        else:
            runs.append([ri, c, 1, dl])
    return runs


def encode_structure(runs):
    """peernote(5), State section: number of runs; per run the replica index, the counter less
    the end of that replica's previous run (sleb128), length * 2 + deleted. Written as given
    (a test may pass runs that are not canonical)."""
    out, ends = bytearray(uleb(len(runs))), {}
    for ri, c, ln, dl in runs:
        out += uleb(ri) + sleb(c - ends.get(ri, 0)) + uleb(ln * 2 + (1 if dl else 0))
        ends[ri] = c + ln
    return bytes(out)


def naive_origins(ids, ranks):
    """Each element's derived origins, by the definition (nearest earlier-ranked element on each
    side), without the stack pass pnread.py uses."""
    out = []
    for i in range(len(ids)):
        left = next((ids[j] for j in range(i - 1, -1, -1) if ranks[j] < ranks[i]), None)
        right = next((ids[j] for j in range(i + 1, len(ids)) if ranks[j] < ranks[i]), None)
        out.append((left, right))
    return out


def build_v3(name, replicas, strings, changes, ops, version=3, entries=9, col49="derived",
             tamper=None, flags=None, uuid=bytes(range(16))):
    """A compact base block with a state section for the history (changes, ops), written the
    way peernote(5) describes version 3: the notebook and each body (ids, order, tombstones,
    characters) are taken from replaying the history written as version 1 (with pnread.py);
    the state section's entries have `entries` items (9: with the structure); column 49 is
    `col49`: "derived" (an op stores its origins exactly when the ones its structure gives
    differ; those that do not store them have no entries in columns 34-37), "all" (every op
    stores them, column 49 all true) or None (no column 49, every op stores them).
    `tamper(notes)` may change the notes (their "elems", or "runs" written as they are) after
    the origins are derived and before anything is written; `flags(stored)` column 49.
    Returns (bytes, the column 49 values)."""
    os.makedirs(mutate.OUT, exist_ok=True)
    src = os.path.join(mutate.OUT, name + "-v1source.peernote")
    open(src, "wb").write(build(replicas, strings, changes, ops, uuid=uuid))
    doc = pnread.load(src)
    nb = pnread.notebook(doc)
    index = dict((r, i) for i, r in enumerate(replicas))
    notes = []
    for nid, hn in zip(nb["_order"], nb["notes"]):
        body = doc.notes[nid].body.S
        notes.append(dict(rep=index[nid[0]], ctr=nid[1], title=hn["title"], tags=hn["tags"],
                          prio=pnread.PRIO.index(hn["priority"]), created=hn["_created"],
                          deleted=hn["deleted"],
                          elems=[(index[e.id[0]], e.id[1], e.deleted, e.value) for e in body]))
    # the block's units in row order; an element's rank is its unit's number
    units, nxt = [], {}
    for c in changes:
        c0 = nxt.get(c["r"], 0)
        units += [(c["r"], c0 + k) for k in range(c["length"])]
        nxt[c["r"]] = c0 + c["length"]
    rank = dict((x, i) for i, x in enumerate(units))
    derived = {}
    for n in notes:
        ids = [(ri, c) for ri, c, _, _ in n["elems"]]
        derived.update(zip(ids, naive_origins(ids, [rank[x] for x in ids])))
    stored, u = [], 0
    for o in ops:
        if o["kind"] == 4:
            stored.append(derived[units[u]] != (o.get("ref1"), o.get("ref2")))
        u += o["length"]
    if col49 == "all":
        stored = [True] * len(stored)
    if flags is not None:
        stored = flags(stored)
    if tamper is not None:
        tamper(notes)
    deleted_text, entries_out = "", []
    for n in notes:
        runs = n.get("runs") or structure_runs(n["elems"])
        deleted_text += "".join(ch for _, _, dl, ch in n["elems"] if dl)
        e = [n["rep"], n["ctr"], n["title"], n["tags"], n["prio"], n["created"], n["deleted"],
             "".join(ch for _, _, dl, ch in n["elems"] if not dl)]
        if entries == 9:
            e.append(encode_structure(runs))
        entries_out.append(e)
    state = enc([nb["title"], entries_out])
    data = build(replicas, strings, changes, ops, uuid=uuid, version=version, text=deleted_text, state=state,
                 origins_stored=stored if col49 is not None else None)
    return data, stored


def check_v3_file(name, expect_stored):
    """compare.py on an accepted version 3 file (inspect's formatVersion and counts too), and
    how many of its insertText ops pnread.py found storing their origins."""
    import compare
    path = os.path.join(mutate.OUT, name + ".peernote")
    if compare.main([path]):
        mutate.FAILURES.append(name + " (compare.py)")
    try:
        doc = pnread.load(path)
        b = doc.blocks[0]
        got = (b.version, sum(1 for o in b.ops if o["kind"] == 4 and not o.get("derive")))
    except pnread.PNError as e:
        got = str(e)
    ok = got == (3, expect_stored)
    print("%s %-28s pnread.py: (version, inserts storing origins) %s, expected %s" %
          ("  " if ok else "!!", name, got, (3, expect_stored)))
    if not ok:
        mutate.FAILURES.append(name + " (version 3, stored origins)")


def plain_history():
    """Two notes typed into (forwards, then in the middle next to a tombstone), a delete, a
    note with no text, a deleted note with text; a second replica types into one note."""
    A, B, C = (0, 1), (0, 2), (0, 14)
    ch = [dict(r=0, seq=1, length=1, deps=[]),              # row 0: ctr 0
          dict(r=0, seq=2, length=1, deps=[1]),             # row 1: ctr 1 note A
          dict(r=0, seq=3, length=2, deps=[1]),             # row 2: ctr 2 note B, ctr 3 title of A
          dict(r=0, seq=4, length=5, deps=[1]),             # row 3: ctr 4..8 "hello" into A
          dict(r=0, seq=5, length=3, deps=[1]),             # row 4: ctr 9..11 " yo" after "hello"
          dict(r=0, seq=6, length=2, deps=[1]),             # row 5: ctr 12..13 delete "el"
          dict(r=1, seq=1, length=4, deps=[1]),             # row 6: R2 ctr 0..3 "note" into B (after row 5: a block with a state section is in canonical order)
          dict(r=0, seq=7, length=1, deps=[1, 2]),          # row 7: ctr 14 note C
          dict(r=0, seq=8, length=5, deps=[1]),             # row 8: ctr 15 "Z" between h and the deleted e; ctr 16..19 "gone" into C
          dict(r=0, seq=9, length=2, deps=[1]),             # row 9: ctr 20 delete C, ctr 21 note D (no text) after B
          ]
    ops = [dict(kind=1, length=1, value="Plain"),
           dict(kind=2, length=1, ref1=None, ref2=None, created=1700000000),
           dict(kind=2, length=1, ref1=A, ref2=None, created=1700000060),
           dict(kind=3, length=1, note=A, value="A", preds=[]),
           dict(kind=4, length=5, note=A, ref1=None, ref2=None, text="hello"),
           dict(kind=4, length=3, note=A, ref1=(0, 8), ref2=None, text=" yo"),
           dict(kind=5, length=2, note=A, ref1=(0, 5), rev=False),
           dict(kind=4, length=4, note=B, ref1=None, ref2=None, text="note"),
           dict(kind=2, length=1, ref1=B, ref2=None, created=1700000120),
           dict(kind=4, length=1, note=A, ref1=(0, 4), ref2=(0, 5), text="Z"),
           dict(kind=4, length=4, note=C, ref1=None, ref2=None, text="gone"),
           dict(kind=9, length=1, note=C, preds=[]),
           dict(kind=2, length=1, ref1=B, ref2=C, created=1700000180)]
    return [R1, R2], [""], ch, ops


def exception_history():
    """R1 types "ab"; then R1 inserts "X" and R2 "Y" between a and b concurrently (both with
    origins a and b); the order is a X Y b. The structure gives Y the left origin X, not a: Y
    stores its origins. Then a change that saw both deletes X."""
    N = (0, 1)
    ch = [dict(r=0, seq=1, length=1, deps=[]),
          dict(r=0, seq=2, length=1, deps=[1]),
          dict(r=0, seq=3, length=2, deps=[1]),             # ctr 2, 3: "ab"
          dict(r=0, seq=4, length=1, deps=[1]),             # ctr 4: "X"
          dict(r=1, seq=1, length=1, deps=[2]),             # R2 ctr 0: "Y", concurrent with row 3
          dict(r=0, seq=5, length=1, deps=[1, 2])]          # ctr 5: delete X
    ops = [dict(kind=1, length=1, value="Exception"),
           dict(kind=2, length=1, ref1=None, ref2=None, created=1700000000),
           dict(kind=4, length=2, note=N, ref1=None, ref2=None, text="ab"),
           dict(kind=4, length=1, note=N, ref1=(0, 2), ref2=(0, 3), text="X"),
           dict(kind=4, length=1, note=N, ref1=(0, 2), ref2=(0, 3), text="Y"),
           dict(kind=5, length=1, note=N, ref1=(0, 4), rev=False)]
    return [R1, R2], [""], ch, ops


def scen_version3():
    """Version 3 (peernote(5), State section and Origins derived from a structure): files both
    readers read, and damaged ones both refuse."""
    reps, strs, ch, ops = plain_history()
    data, stored = build_v3("craft-v3-plain", reps, strs, ch, ops)
    print("%s %-28s column 49 %s (expected no op storing its origins)" % ("  " if not any(stored) else "!!", "craft-v3-plain", stored))
    if any(stored):
        mutate.FAILURES.append("craft-v3-plain (column 49)")
    run_both("craft-v3-plain", data, expect="accept")
    check_v3_file("craft-v3-plain", 0)
    # the same notebook as version 2 (control: the writer above is right but for version 3)
    run_both("craft-v3-plain-as-v2", build_v3("craft-v3-plain-as-v2", reps, strs, ch, ops, version=2, entries=8, col49=None)[0], expect="accept")

    reps2, strs2, ch2, ops2 = exception_history()
    data, stored = build_v3("craft-v3-exception", reps2, strs2, ch2, ops2)
    print("%s %-28s column 49 %s (expected only Y's op)" % ("  " if stored == [False, False, True] else "!!", "craft-v3-exception", stored))
    if stored != [False, False, True]:
        mutate.FAILURES.append("craft-v3-exception (column 49)")
    run_both("craft-v3-exception", data, expect="accept")
    check_v3_file("craft-v3-exception", 1)
    # every op storing its origins (not canonical, but nothing in it is wrong)
    run_both("craft-v3-all-stored", build_v3("craft-v3-all-stored", reps2, strs2, ch2, ops2, col49="all")[0], expect="accept")
    # the exception not stored: Y takes X, concurrent with it, as its left origin (a reference
    # that is not earlier by Lamport timestamp)
    run_both("craft-v3-exception-dropped", build_v3("craft-v3-exception-dropped", reps2, strs2, ch2, ops2,
             flags=lambda st: [False] * len(st))[0], expect="refuse")

    # the same when R2 wrote something else first: X is then earlier than Y by Lamport
    # timestamp, though concurrent, and the file is read with X as Y's left origin (the
    # reference check is by Lamport timestamp, peernote(5) BUGS); the order is the same
    ch3 = ch2[:4] + [dict(r=1, seq=1, length=1, deps=[2]), dict(r=1, seq=2, length=1, deps=[1]),
                     dict(r=0, seq=5, length=1, deps=[1, 3])]
    ops3 = ops2[:4] + [dict(kind=1, length=1, value="Other", preds=[(0, 0)])] + ops2[4:]
    run_both("craft-v3-dropped-lamport-ok", build_v3("craft-v3-dropped-lamport-ok", reps2, strs2, ch3, ops3,
             flags=lambda st: [False] * len(st))[0], expect="accept")

    # damaged structures of the plain file (note A is notes[0]: h Z e l l o ' ' y o, e and l deleted)
    def tamper(fn):
        return lambda notes: fn(notes[0])
    def twice(n):
        n["elems"] = n["elems"] + [n["elems"][0]]
    def missing(n):
        n["elems"] = n["elems"][:-1]
    def tombstone_undeleted_by_none(n):      # "y" marked deleted, which no delete targets
        n["elems"] = [(ri, c, dl or ch == "y", ch) for ri, c, dl, ch in n["elems"]]
    def flag_cleared(n):                     # the deleted "e" listed as visible
        n["elems"] = [(ri, c, dl and ch != "e", ch) for ri, c, dl, ch in n["elems"]]
    def units_apart(n):                      # h Z e l l ' ' o y o: the earlier "o" inside " yo"
        e = n["elems"]
        o = [x for x in e if x[3] == "o"][0]
        rest = [x for x in e if x is not o]
        i = [x[3] for x in rest].index(" ")
        n["elems"] = rest[:i + 1] + [o] + rest[i + 1:]
    def not_canonical(n):                    # the last run cut in two
        runs = structure_runs(n["elems"])
        last = runs.pop()
        n["runs"] = runs + [[last[0], last[1], 2, last[3]], [last[0], last[1] + 2, last[2] - 2, last[3]]]
    for label, fn in (("twice", twice), ("missing", missing), ("tombstone-no-delete", tombstone_undeleted_by_none),
                      ("deleted-flag-cleared", flag_cleared), ("insert-units-apart", units_apart),
                      ("not-canonical", not_canonical)):
        name = "craft-v3-" + label
        run_both(name, build_v3(name, reps, strs, ch, ops, tamper=tamper(fn))[0], expect="refuse")
    # an element of another note (B's first character listed in A's structure, not in B's)
    def moved_to_other_note(notes):
        a = [n for n in notes if n["ctr"] == 1 and n["rep"] == 0][0]
        b = [n for n in notes if n["ctr"] == 2 and n["rep"] == 0][0]
        a["elems"] = a["elems"] + b["elems"][:1]
        b["elems"] = b["elems"][1:]
    run_both("craft-v3-other-notes-element", build_v3("craft-v3-other-notes-element", reps, strs, ch, ops,
             tamper=moved_to_other_note)[0], expect="refuse")
    # versions and entries
    run_both("craft-v3-col49-in-v2", build_v3("craft-v3-col49-in-v2", reps, strs, ch, ops, version=2, entries=8, col49="all")[0], expect="refuse")
    run_both("craft-v3-8-items", build_v3("craft-v3-8-items", reps, strs, ch, ops, entries=8)[0], expect="refuse")
    run_both("craft-v3-9-items-in-v2", build_v3("craft-v3-9-items-in-v2", reps, strs, ch, ops, version=2, col49=None)[0], expect="refuse")
    run_both("craft-v3-no-col49", build_v3("craft-v3-no-col49", reps, strs, ch, ops, col49=None)[0], expect="refuse")
    # version 3 without a state section: read as version 1; column 49 there is refused
    run_both("craft-v3-no-state", build(reps, strs, ch, ops, version=3), expect="accept")
    run_both("craft-v3-no-state-col49", build(reps, strs, ch, ops, version=3,
             origins_stored=[True] * sum(1 for o in ops if o["kind"] == 4)), expect="refuse")
    # a compact save by the tools, asked to write version 3 (PEERNOTE_WRITE_FORMAT=3; they write
    # version 2 by default), stores exactly the exception's origins
    src = os.path.join(mutate.OUT, "craft-v3-exception-v1source.peernote")
    c = subprocess.run([mutate.BIN + "pnmerge", "compact", src], capture_output=True, text=True,
                       env=dict(os.environ, PEERNOTE_WRITE_FORMAT="3"))
    run_both("craft-v3-exception-compacted", open(src, "rb").read(), expect="accept")
    if c.returncode == 0:
        check_v3_file("craft-v3-exception-compacted", 1)
    else:
        print("!! %-28s compact rc=%d %s" % ("craft-v3-exception-compacted", c.returncode, c.stderr.strip()[:110]))
        mutate.FAILURES.append("craft-v3-exception-compacted (compact)")



if __name__ == "__main__":
    scen_exact_strings()
    scen_reversed_and_spanning()
    scen_backwards_typing()
    scen_unknown_kind_between_text()
    scen_reader_limits()
    scen_registers()
    scen_deleted_note_conflicts()
    scen_version3()
    sys.exit(1 if mutate.FAILURES else 0)
