#!/usr/bin/env python3
"""Compare pnread.py with the reference tools on files given as arguments.
For valid files: notebook (export --format json), deleted notes (list --deleted),
counts from 'pnmerge inspect --json'. For files the tool refuses: both must refuse."""
import sys, json, subprocess, os

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.path.join(os.path.abspath(os.environ.get("PN_BIN", ".build/debug")), "")


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def main(files):
    bad = 0
    for f in files:
        rc_t, out_t, err_t = run([BIN + "peernote", "export", "--format", "json", f])
        rc_m, out_m, err_m = run([sys.executable, HERE + "/pnread.py", "--info", f])
        if rc_t != 0 or rc_m != 0:
            same = (rc_t != 0) == (rc_m != 0)
            print("%s %s\n   tool rc=%d %s\n   mine rc=%d %s" % ("OK  " if same else "DIFF", f, rc_t,
                  err_t.strip(), rc_m, err_m.strip()))
            bad += not same
            continue
        t = json.loads(out_t)
        m = json.loads(out_m)
        info = m.pop("_info")
        diffs = []
        live = [dict((k, v) for k, v in n.items() if k != "deleted") for n in m["notes"] if not n["deleted"]]
        if t["title"] != m["title"]:
            diffs.append("title: tool %r mine %r" % (t["title"], m["title"]))
        if t["id"] != m["id"]:
            diffs.append("id: tool %r mine %r" % (t["id"], m["id"]))
        if t["notes"] != live:
            for i in range(max(len(t["notes"]), len(live))):
                a = t["notes"][i] if i < len(t["notes"]) else None
                b = live[i] if i < len(live) else None
                if a != b:
                    diffs.append("note %d:\n      tool %s\n      mine %s" % (i, json.dumps(a, ensure_ascii=False), json.dumps(b, ensure_ascii=False)))
        rc, out, _ = run([BIN + "peernote", "list", "--deleted", f])
        tdel = [l.split()[1] for l in out.splitlines() if l.strip()]
        mdel = [n["id"][:8] for n in m["notes"] if n["deleted"]]
        if sorted(tdel) != sorted(mdel):
            diffs.append("deleted: tool %s mine %s" % (tdel, mdel))
        elif tdel != mdel:
            diffs.append("deleted order: tool %s mine %s" % (tdel, mdel))
        rc, out, _ = run([BIN + "pnmerge", "inspect", "--json", f])
        ins = json.loads(out)
        for key, mine in (("changes", info["changes"]), ("operations", info["opUnits"]),
                          ("blocks", info["blocks"]), ("formatVersion", max(info["versions"])),
                          ("notes", len(live)), ("deletedNotes", len(mdel)),
                          ("conflicts", len(info["conflicts"])),
                          ("heads", info["heads"])):
            tv = ins.get(key)
            if key == "heads":
                tv = sorted(tv)
            if tv != mine:
                diffs.append("inspect %s: tool %r mine %r" % (key, tv, mine))
        print("%s %s%s" % ("DIFF" if diffs else "OK  ", f, "".join("\n   " + d for d in diffs)))
        bad += bool(diffs)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
