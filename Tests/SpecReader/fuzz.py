#!/usr/bin/env python3
"""Random editing sessions on several copies with the reference CLI; after every step
compare pnread.py with the tool (compare.py). Usage: fuzz.py SEED STEPS DIR"""
import sys, os, random, json, subprocess, shutil
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare

BIN = os.path.join(os.path.abspath(os.environ.get("PN_BIN", ".build/debug")), "")
ALPH = "abcdefghij XYZ\n\u00e9\u00fc\u2603\U0001F600e\u0301\r\n\t"


def sh(*args, check=False):
    p = subprocess.run(list(args), capture_output=True, text=True)
    if check and p.returncode != 0:
        raise SystemExit("FAILED %s: %s" % (args, p.stderr))
    return p


def rtext(rng, n):
    return "".join(rng.choice(ALPH) for _ in range(n))


def main():
    seed, steps, d = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    rng = random.Random(seed)
    os.makedirs(d, exist_ok=True)
    copies = [os.path.join(d, "c%d.peernote" % i) for i in range(3)]
    for c in copies:
        if os.path.exists(c):
            os.remove(c)
    sh(BIN + "peernote", "new", copies[0], "--title", "Fuzz %d" % seed, check=True)
    for c in copies[1:]:
        shutil.copy(copies[0], c)
    log = open(os.path.join(d, "log.txt"), "w")
    bad = 0
    for step in range(steps):
        f = rng.choice(copies)
        st = json.loads(sh(BIN + "peernote", "export", "--format", "json", f, check=True).stdout)
        notes = st["notes"]
        dl = [l.split()[1] for l in sh(BIN + "peernote", "list", "--deleted", f).stdout.splitlines() if l.strip()]
        a = rng.random()
        author = "A%d" % copies.index(f)
        if a < 0.2 or not notes:
            args = ["add", f, "--title", rtext(rng, 4), "--body", rtext(rng, rng.randint(0, 30))]
            if notes and rng.random() < 0.5:
                args += ["--at", str(rng.randint(0, len(notes)))]
            if rng.random() < 0.5:
                args += ["--tag", rng.choice(["t1", "t2", "t3"])]
        elif a < 0.5:
            n = rng.choice(notes)
            body = n["body"]
            for _ in range(rng.randint(1, 3)):
                i = rng.randint(0, len(body))
                if rng.random() < 0.5 and body:
                    j = min(len(body), i + rng.randint(1, 8))
                    body = body[:i] + body[j:]
                else:
                    body = body[:i] + rtext(rng, rng.randint(1, 8)) + body[i:]
            args = ["edit", f, n["id"], "--body", body]
        elif a < 0.6:
            n = rng.choice(notes)
            args = ["edit", f, n["id"]]
            for t in ("t1", "t2", "t3"):
                r = rng.random()
                if r < 0.3:
                    args += ["--add-tag", t]
                elif r < 0.5 and t in n["tags"]:
                    args += ["--remove-tag", t]
            if rng.random() < 0.4:
                args += ["--priority", rng.choice(["low", "normal", "high"])]
            if rng.random() < 0.4:
                args += ["--title", rtext(rng, 3)]
        elif a < 0.65:
            args = ["title", f, rtext(rng, 5)]
        elif a < 0.72:
            n = rng.choice(notes)
            args = ["move", f, n["id"], "--to", str(rng.randint(0, len(notes) - 1))]
        elif a < 0.78:
            args = ["rm", f, rng.choice(notes)["id"]]
        elif a < 0.82 and dl:
            args = ["restore", f, rng.choice(dl)]
        elif a < 0.95:
            g = rng.choice([c for c in copies if c != f])
            if rng.random() < 0.7:
                args = ["MERGE", f, g]
            else:
                args = ["MERGEO", f, g]
        else:
            args = ["COMPACT", f]
        if args[0] == "MERGE":
            p = sh(BIN + "pnmerge", "merge", args[1], args[2])
        elif args[0] == "MERGEO":
            tmp = f + ".tmp"
            if os.path.exists(tmp):
                os.remove(tmp)
            p = sh(BIN + "pnmerge", "merge", "-o", tmp, args[1], args[2])
            if p.returncode == 0:
                os.replace(tmp, f)
        elif args[0] == "COMPACT":
            p = sh(BIN + "pnmerge", "compact", f)
        else:
            p = sh(BIN + "peernote", *args, "--author", author)
        log.write("%d %r rc=%d %s\n" % (step, args, p.returncode, p.stderr.strip()[:200]))
        if p.returncode not in (0,):
            if "nothing recorded" not in p.stderr and "no changes" not in p.stderr:
                print("step %d: tool failed: %r rc=%d %s" % (step, args, p.returncode, p.stderr.strip()))
        keep = os.path.join(d, "step%03d.peernote" % step)
        shutil.copy(f, keep)
        r = subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "compare.py"), keep],
                           capture_output=True, text=True)
        if r.returncode != 0:
            bad += 1
            print("step %d %r\n%s" % (step, args, r.stdout))
        else:
            os.remove(keep)
    # final: merge all into one, compact
    out = os.path.join(d, "all.peernote")
    if os.path.exists(out):
        os.remove(out)
    sh(BIN + "pnmerge", "merge", "-o", out, *copies)
    r = subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "compare.py"), out, *copies],
                       capture_output=True, text=True)
    print(r.stdout)
    print("seed %d: %d bad steps of %d" % (seed, bad, steps))
    return 1 if bad or r.returncode != 0 else 0


if __name__ == "__main__":
    sys.exit(main())
