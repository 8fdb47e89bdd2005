#!/usr/bin/env python3
"""Notebook folders (peernote(5), NOTEBOOK FOLDERS) read from the page alone: two devices edit a
folder through the tools, one compacts; every chunk's name must be the hash the page defines,
every leaf's chain must be a file pnread.py reads, and the chain with most changes (every write
here read the whole folder first) must hold the notebook the tools show for the folder."""
import sys, os, re, json, hashlib, subprocess, tempfile, shutil

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.path.join(os.path.abspath(os.environ.get("PN_BIN", ".build/debug")), "")
NAME = re.compile(r"^([0-9a-f]{8}|[0-9a-f]{32})\.([0-9a-f]{32})\.pnchunk$")


def tool(args, device):
    env = dict(os.environ, PEERNOTE_AUTHOR="spec", PEERNOTE_DEVICE=device)
    p = subprocess.run(args, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        raise SystemExit("%s failed (%d): %s" % (" ".join(args), p.returncode, p.stderr.strip()))
    return p.stdout


def read_folder(path):
    """The chunks per the page: {own: (first, bytes)}; the valid ones with their chains."""
    chunks = {}
    for name in sorted(os.listdir(path)):
        m = NAME.match(name)
        if m:
            with open(os.path.join(path, name), "rb") as f:
                chunks[m.group(2)] = (m.group(1), f.read())
    chains, devices = {}, {}
    pending = [own for own, (first, _) in chunks.items() if len(first) == 8]
    for own in pending:
        chains[own], devices[own] = chunks[own][1], chunks[own][0]
    while pending:
        own = pending.pop()
        first, data = chunks[own]
        h = hashlib.sha256(devices[own].encode("ascii") + chains[own]).hexdigest()[:32]
        if h != own:
            raise SystemExit("chunk %s.%s: its name is not the hash of its chain" % (first, own))
        for child, (cfirst, cdata) in chunks.items():
            if cfirst == own:
                chains[child], devices[child] = chains[own] + cdata, devices[own]
                pending.append(child)
    if set(chains) != set(chunks):
        raise SystemExit("chunks without a chain to a root: %s" % sorted(set(chunks) - set(chains)))
    leaves = [own for own in chains if not any(first == own for first, _ in chunks.values())]
    return chunks, chains, leaves


def main():
    work = tempfile.mkdtemp(prefix="pn-folders-", dir=os.environ.get("PN_WORK"))
    try:
        return check(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def check(work):
    folder = os.path.join(work, "Trip.peernote")
    a, b = "000000aa", "000000bb"
    tool([BIN + "peernote", "new", folder, "--folder", "--title", "Trip"], a)
    for i in range(4):
        tool([BIN + "peernote", "add", folder, "--title", "A%d" % i, "--body", "from a\n" * (i + 1)], a)
        tool([BIN + "peernote", "add", folder, "--title", "B%d" % i, "--tag", "b"], b)
    tool([BIN + "peernote", "edit", folder, "A0", "--body", "edited by b"], b)
    tool([BIN + "pnmerge", "compact", folder, "--grace", "0"], a)
    tool([BIN + "peernote", "rm", folder, "B1"], a)
    chunks, chains, leaves = read_folder(folder)
    best, best_changes, bad = None, -1, 0
    for own in leaves:
        path = os.path.join(work, own + ".peernote")
        with open(path, "wb") as f:
            f.write(chains[own])
        p = subprocess.run([sys.executable, HERE + "/pnread.py", "--info", path], capture_output=True, text=True)
        if p.returncode != 0:
            print("DIFF leaf %s: pnread refuses its chain: %s" % (own, p.stderr.strip()))
            bad += 1
            continue
        info = json.loads(p.stdout)
        if info["_info"]["changes"] > best_changes:
            best, best_changes = info, info["_info"]["changes"]
    shown = json.loads(tool([BIN + "peernote", "export", "--format", "json", folder], a))
    live = [dict((k, v) for k, v in n.items() if k != "deleted") for n in best["notes"] if not n["deleted"]]
    if shown["notes"] != live or shown["title"] != best["title"]:
        print("DIFF the folder's notebook:\n  tool %s\n  mine %s" % (json.dumps(shown["notes"]), json.dumps(live)))
        bad += 1
    print("%d chunks, %d leaves, %d notes: %s" % (len(chunks), len(leaves), len(live), "agree" if not bad else "DISAGREE"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
