#!/usr/bin/env python3
"""Lower bounds on issue 6's merge figures that no change to the merge code can go below.

Times, on this machine, the work that any merge which reads both copies in full and writes a
compact file must do, whatever else it does: inflating both copies' compressed sections, and
deflating the merged copy's sections at the canonical form's settings (peernote(5), CANONICAL
FORM: level 6, window bits -15, memLevel 8, default strategy). Then the fixed costs of a fresh
`pnmerge` process: starting (`pnmerge --version`) and an atomic write of the merged file
(temporary file, fsync, rename, fsync of the folder), beside the copies.

zlib is called through Python's zlib module (the same system library the tools link), each
figure the best of several runs, so they are floors, not typical times. The sections are found
by the second reader, Tests/SpecReader/pnread.py.

    swift run -c release --package-path Benchmarks pnbench diverge automerge-paper -a /tmp/A.peernote -b /tmp/B.peernote
    .build/release/pnmerge merge /tmp/A.peernote /tmp/B.peernote -o /tmp/M.peernote
    python3 Benchmarks/scripts/lower-bounds.py --a /tmp/A.peernote --b /tmp/B.peernote --merged /tmp/M.peernote \\
        --pnmerge .build/release/pnmerge
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Tests", "SpecReader"))
import pnread  # noqa: E402


def sections(path):
    """[(what, compressed bytes, inflated bytes)] of every compressed section of `path`."""
    with open(path, "rb") as f:
        data = f.read()
    found = []
    original = pnread.inflate_exact

    def capture(comp, size, offset, what):
        out = original(comp, size, offset, what)
        found.append((what, bytes(comp), out))
        return out

    pnread.inflate_exact = capture
    try:
        pnread.parse_blocks(data)
    finally:
        pnread.inflate_exact = original
    return data, found


def best_ms(work, runs):
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best * 1000


def deflate_canonical(raw):
    c = zlib.compressobj(6, zlib.DEFLATED, -15, 8, zlib.Z_DEFAULT_STRATEGY)
    return c.compress(raw) + c.flush()


def atomic_write(folder, data):
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".lower-bounds-")
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    final = os.path.join(folder, ".lower-bounds.out")
    os.rename(tmp, final)
    d = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(d)
    finally:
        os.close(d)
    os.remove(final)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--a", required=True, help="copy A (pnbench diverge -a)")
    parser.add_argument("--b", required=True, help="copy B (pnbench diverge -b)")
    parser.add_argument("--merged", required=True, help="their merge, saved compact (pnmerge merge A B -o M)")
    parser.add_argument("--pnmerge", help="a pnmerge binary, for the process's fixed costs")
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()

    inflate = 0.0
    for path in (args.a, args.b):
        _, found = sections(path)
        for what, comp, raw in found:
            ms = best_ms(lambda: zlib.decompressobj(-15).decompress(comp), args.runs)
            inflate += ms
            print(f"inflate {os.path.basename(path)} {what}: {len(comp):,} -> {len(raw):,} B, {ms:.2f} ms")
    print(f"inflating both copies: {inflate:.2f} ms")

    merged, found = sections(args.merged)
    deflate = 0.0
    for what, comp, raw in found:
        ms = best_ms(lambda: deflate_canonical(raw), max(3, args.runs // 4))
        deflate += ms
        print(f"deflate merged {what}: {len(raw):,} B at level 6, {ms:.2f} ms")
    print(f"deflating the merged copy: {deflate:.2f} ms on one core, {deflate / 2:.2f} ms split over two")
    print(f"floor of an in-process merge with a compact save (inflate + deflate on two cores): {inflate + deflate / 2:.2f} ms")

    if args.pnmerge:
        def version():
            subprocess.run([args.pnmerge, "--version"], stdout=subprocess.DEVNULL, check=True)
        start_ms = best_ms(version, args.runs)
        folder = os.path.dirname(os.path.abspath(args.merged))
        write_ms = best_ms(lambda: atomic_write(folder, merged), args.runs)
        print(f"process start (pnmerge --version): {start_ms:.2f} ms")
        print(f"atomic write of the merged file ({len(merged):,} B, fsync, rename, fsync of its folder): {write_ms:.2f} ms")


if __name__ == "__main__":
    main()
