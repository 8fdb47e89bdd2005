#!/usr/bin/env python3
"""Hand-built files (from the spec's encoding rules) for op shapes the CLI never writes:
reversed deletes, op rows spanning two changes, backwards typing by two replicas,
unknown op kinds mixed with text. Each is checked with both readers."""
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


def build(replicas, strings, changes, ops, uuid=bytes(range(16)), kind=0, version=1, extra_fields=()):
    """changes: dict(r, seq, length, deps=[distances], time, author, msg)
       ops: dict(kind, length, note=(ri,c), ref1, ref2, rev, value, preds, prio, created, text, payload)"""
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
    for key, cr, cc in (("ref1", 34, 35), ("ref2", 36, 37)):
        refs = [o.get(key) for o in ops if key in KC.get(o["kind"], [])]
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
    C[46] = "".join(o["text"] for o in ops if o["kind"] == 4).encode()
    unk = [o.get("payload", b"") for o in ops if o["kind"] not in KC]
    C[47] = rle([len(p) for p in unk]); C[48] = b"".join(unk)
    raw = b"".join(uleb(k) + uleb(len(v)) + v for k, v in sorted(C.items()) if v)
    fields = [(0, enc(kind))]
    if kind == 0:
        fields += [(1, b"\xd8\x25" + enc(uuid)), (2, enc([replicas[changes[0]["r"]], 1]))]
    units = sum(c["length"] for c in changes)
    fields += [(3, enc(replicas)), (4, enc(strings)), (5, enc(len(changes))), (6, enc(units)),
               (7, enc(deflate(raw))), (8, enc(len(raw)))]
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


if __name__ == "__main__":
    scen_exact_strings()
    scen_reversed_and_spanning()
    scen_backwards_typing()
    scen_unknown_kind_between_text()
    scen_registers()
    scen_deleted_note_conflicts()
    sys.exit(1 if mutate.FAILURES else 0)
