#!/usr/bin/env python3
"""Writes scripts/link-order.txt: the functions the everyday commands run, hottest first, for the
release link (`make release` passes it to lld as --symbol-ordering-file).

Why: a command touches a small part of the tools' code (about 2 MB of some 14 MB), but the
kernel maps code 64 KB at a time around each page it faults in, so code spread over the whole
binary costs a 2,000-note `pnmerge merge -o` about 10 MB of resident pages. Placed together,
it keeps about 6 MB (the Swift standard library's code moves a whole object file at a time:
Benchmarks/README.md, The release link).

How: runs each command below under valgrind's callgrind (release builds of both tools, copied
without their DWARF, which valgrind 3.19 cannot read) on a notebook of 2,000 notes that it
builds, and writes the functions of the two binaries in this order:
  - first the functions the build compiled (each in a section of its own, which the link can
    place one by one), then the toolchain's (the Swift runtime and standard library, Foundation):
    a toolchain library compiled as one section moves whole, and placed among the build's
    functions it would spread them over its own size;
  - within each, by the runs that call them, read as a binary number whose first digit is the
    first run: every function the first run calls (start-up, in `pnmerge --version`) before any
    other, then the rest of the second run's (`validate`: loading), then the rest of the
    third's, and so on; functions that exactly the same runs call, the most instructions first.
The code of each of the first runs, the everyday commands, is then one stretch or a few, and
little of the other commands' code lies among it.
The file only orders code: a name it lacks (code added
since) is laid out after the listed ones, a name that no longer exists is ignored. Run it again
when the commands' code has changed much, then link again (the list is not an input SwiftPM
watches):

    make release && python3 scripts/link-order.py .build/release
    rm .build/release/pnmerge .build/release/peernote && make release

Needs valgrind (`apt-get install valgrind`).
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def commands():
    """The runs, as (tool, arguments), each in `work`; files they change are copied first. The
    most used first: the order puts the functions of each run together, earlier runs first."""
    mine, theirs, fresh = "mine.peernote", "theirs.peernote", "fresh.peernote"
    return [
        ("pnmerge", ["--version"]),
        ("pnmerge", ["validate", mine]),
        ("peernote", ["list", mine]),
        ("peernote", ["edit", fresh, "Note 11", "--body", "z", "--author", "bench"]),
        ("peernote", ["edit", "fresh-folder.peernote", "Note 11", "--body", "z", "--author", "bench"]),
        ("pnmerge", ["merge", mine, theirs, "-o", "out.peernote"]),
        ("pnmerge", ["merge", fresh, theirs]),
        ("peernote", ["show", mine, "Note 12"]),
        ("peernote", ["add", fresh, "--title", "x", "--body", "y", "--author", "bench"]),
        ("peernote", ["rm", fresh, "Note 13", "--author", "bench"]),
        ("peernote", ["search", mine, "note 1234"]),
        ("pnmerge", ["sync", "synced"]),
        ("pnmerge", ["show", mine]),
        ("pnmerge", ["diff", mine, theirs]),
        ("pnmerge", ["log", mine]),
        ("peernote", ["conflicts", mine]),
        ("pnmerge", ["inspect", mine]),
        ("pnmerge", ["compact", fresh]),
    ]


def build(tools, work, count):
    """A notebook of `count` notes and two copies with edits of their own (as many-notes.py)."""
    notes = [{"title": f"Note {i}", "body": (f"Line of text for note {i}. " * 8).strip(),
              "tags": [f"t{i % 50}"], "priority": "normal"} for i in range(count)]
    with open(os.path.join(work, "notes.json"), "w") as f:
        json.dump({"title": "Many notes", "notes": notes}, f)
    pn = os.path.join(tools, "peernote")
    run = lambda *a: subprocess.run([pn, *a, "--author", "bench"], cwd=work, check=True, stdout=subprocess.DEVNULL)
    subprocess.run([pn, "import", "notes.json", "-o", "base.peernote"], cwd=work, check=True, stdout=subprocess.DEVNULL)
    for name in ("mine.peernote", "theirs.peernote"):
        shutil.copyfile(os.path.join(work, "base.peernote"), os.path.join(work, name))
    run("edit", "mine.peernote", "Note 5", "--body", "Changed on the laptop.")
    run("add", "mine.peernote", "--title", "New on the laptop", "--body", "hello")
    run("edit", "theirs.peernote", "Note 7", "--title", "Note 7, retitled on the phone")
    run("rm", "theirs.peernote", "Note 9")
    # MINE as a notebook folder (the layout for folders a sync tool keeps), which an edit adds a chunk to.
    subprocess.run([os.path.join(tools, "pnmerge"), "convert", "mine.peernote", "mine-folder.peernote"], cwd=work, check=True,
                   stdout=subprocess.DEVNULL)


def profile(binary, args, work, out):
    # Swift's per-process hash seed changes the work a dictionary does from run to run.
    env = dict(os.environ, SWIFT_DETERMINISTIC_HASHING="1")
    run = subprocess.run(["valgrind", "--tool=callgrind", "--demangle=no", f"--callgrind-out-file={out}", binary, *args],
                         cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if run.returncode != 0 or not os.path.exists(out):
        sys.exit(f"link-order.py: {os.path.basename(binary)} {' '.join(args)} failed:\n{run.stderr.strip()}")
    text = subprocess.run(["callgrind_annotate", "--threshold=100", out], check=True,
                          capture_output=True, text=True).stdout
    costs = {}
    # "  1,234 (0.5%)  ???:NAME [/path/to/binary]"; a recursion's deeper levels end in 'N.
    pattern = re.compile(r"^\s*([\d,]+) \([^)]*\)\s+\S*?:(\S+) \[" + re.escape(binary) + r"\]$")
    for line in text.splitlines():
        m = pattern.match(line)
        if m and not m.group(2).startswith("0x"):
            name = re.sub(r"'\d+$", "", m.group(2))
            costs[name] = costs.get(name, 0) + int(m.group(1).replace(",", ""))
    return costs


def own_functions(tools):
    """The functions the build compiled itself (the project's modules and its packages), from
    the object files SwiftPM leaves beside the tools (`.build/release/*.build/*.o`): each is in
    a section of its own (the release build asks for one a function), so the link can place it
    anywhere. Exits when there are none (tools copied away from their build: pass the build's
    folder). An object file `nm` cannot read (one an interrupted build left) is named and
    skipped."""
    objects = sorted(glob.glob(os.path.join(tools, "*.build", "**", "*.o"), recursive=True))
    if not objects:
        sys.exit(f"link-order.py: no object files in {tools}/*.build: pass the release build's folder "
                 "(.build/release), not a copy of the tools")
    names = set()
    for obj in objects:
        run = subprocess.run(["nm", "--defined-only", obj], capture_output=True, text=True)
        if run.returncode != 0:
            print(f"link-order.py: {obj}: nm cannot read it ({run.stderr.strip()}); its functions are not put first",
                  file=sys.stderr)
            continue
        for line in run.stdout.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in "tTwW":
                names.add(parts[2])
    return names


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("tools", help="folder holding release builds of peernote and pnmerge")
    p.add_argument("--notes", type=int, default=2000)
    p.add_argument("-o", "--output", default=os.path.join(HERE, "link-order.txt"))
    a = p.parse_args()
    a.tools = os.path.abspath(a.tools)  # the runs below are in a folder of their own
    for tool in ("valgrind", "callgrind_annotate", "strip"):
        if shutil.which(tool) is None:
            sys.exit(f"link-order.py: {tool} is not installed (apt-get install valgrind binutils)")
    for tool in ("pnmerge", "peernote"):
        if not os.path.isfile(os.path.join(a.tools, tool)):
            sys.exit(f"link-order.py: {os.path.join(a.tools, tool)}: no such file (make release first)")
    # Read before the runs: a build folder that lacks them fails at once, not after them.
    own = own_functions(a.tools)
    # callgrind names each function's binary by its resolved path, which the parsing matches.
    work = os.path.realpath(tempfile.mkdtemp(prefix="pn-link-order."))
    try:
        binaries = {}
        for tool in ("pnmerge", "peernote"):
            binaries[tool] = os.path.join(work, tool)
            shutil.copyfile(os.path.join(a.tools, tool), binaries[tool])
            os.chmod(binaries[tool], 0o755)
            subprocess.run(["strip", "-g", binaries[tool]], check=True)
        build(a.tools, work, a.notes)
        total, runs = {}, {}
        for i, (tool, args) in enumerate(commands()):
            shutil.copyfile(os.path.join(work, "mine.peernote"), os.path.join(work, "fresh.peernote"))
            shutil.rmtree(os.path.join(work, "fresh-folder.peernote"), ignore_errors=True)
            shutil.copytree(os.path.join(work, "mine-folder.peernote"), os.path.join(work, "fresh-folder.peernote"))
            shutil.rmtree(os.path.join(work, "synced"), ignore_errors=True)
            os.makedirs(os.path.join(work, "synced", "laptop"))
            os.makedirs(os.path.join(work, "synced", "phone"))
            shutil.copyfile(os.path.join(work, "mine.peernote"), os.path.join(work, "synced", "laptop", "n.peernote"))
            shutil.copyfile(os.path.join(work, "theirs.peernote"), os.path.join(work, "synced", "phone", "n.peernote"))
            if os.path.exists(os.path.join(work, "out.peernote")):
                os.remove(os.path.join(work, "out.peernote"))
            costs = profile(binaries[tool], args, work, os.path.join(work, f"cg.{i}"))
            if not costs:
                sys.exit(f"link-order.py: found no function of {tool} in callgrind's report of {' '.join(args)}")
            for name, cost in costs.items():
                total[name] = total.get(name, 0) + cost
                runs[name] = runs.get(name, 0) | 1 << (len(commands()) - 1 - i)
            print(f"{tool} {' '.join(args)}: {len(total)} functions so far", file=sys.stderr)
        # By the runs each function is in, read as a binary number whose first digit is the
        # first run: every function of the first run comes before any other, and so on.
        names = sorted(total, key=lambda n: (n not in own, -runs[n], -total[n], n))
        # Written whole or not at all: the release link reads the file as it finds it.
        with tempfile.NamedTemporaryFile("w", dir=os.path.dirname(os.path.abspath(a.output)), delete=False) as f:
            f.write("".join(n + "\n" for n in names))
        os.replace(f.name, a.output)
        print(f"{a.output}: {len(names)} functions", file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
