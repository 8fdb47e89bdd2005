#!/usr/bin/env python3
"""Sizes and times of libdeflate's levels 1 to 12 on the sections of .peernote files (the
measurement behind the canonical level, `Deflate.level`).

    python3 Benchmarks/scripts/deflate-levels.py FILE.peernote...

Inflates every block's column set and state section (with Python's zlib, through the spec
reader Tests/SpecReader/pnread.py), then compresses them all with each level of the system
libdeflate through a small C program built on the fly (needs cc and libdeflate-dev): total
compressed bytes and the best of five CPU times.
"""
import os
import subprocess
import sys
import tempfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "Tests", "SpecReader"))
import pnread  # noqa: E402

PROGRAM = r"""
#include <libdeflate.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t); return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }
int main(int argc, char **argv) {
    for (int level = 1; level <= 12; level++) {
        size_t total = 0; double best = 1e18;
        for (int rep = 0; rep < 5; rep++) {
            double spent = 0; total = 0;
            for (int f = 1; f < argc; f++) {
                FILE *fp = fopen(argv[f], "rb"); fseek(fp, 0, SEEK_END); long n = ftell(fp); fseek(fp, 0, SEEK_SET);
                char *in = malloc(n ? n : 1); if (fread(in, 1, n, fp) != (size_t)n) return 1; fclose(fp);
                struct libdeflate_compressor *c = libdeflate_alloc_compressor(level);
                size_t bound = libdeflate_deflate_compress_bound(c, n); char *out = malloc(bound);
                double t0 = now(); total += libdeflate_deflate_compress(c, in, n, out, bound); spent += now() - t0;
                libdeflate_free_compressor(c); free(out); free(in);
            }
            if (spent < best) best = spent;
        }
        printf("level %2d: %9zu bytes %9.2f ms\n", level, total, best);
    }
    return 0;
}
"""


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    with tempfile.TemporaryDirectory() as work:
        sections = []
        raw = 0
        for path in sys.argv[1:]:
            data = open(path, "rb").read()
            for i, block in enumerate(pnread.parse_blocks(data)):
                for key in (7, 12):  # the column set, the state section
                    if key in block.fields:
                        inflated = zlib.decompressobj(-15).decompress(block.fields[key][0])
                        name = os.path.join(work, f"{len(sections)}.raw")
                        open(name, "wb").write(inflated)
                        sections.append(name)
                        raw += len(inflated)
        source, program = os.path.join(work, "levels.c"), os.path.join(work, "levels")
        open(source, "w").write(PROGRAM)
        subprocess.run(["cc", "-O2", "-o", program, source, "-ldeflate"], check=True)
        print(f"{len(sections)} sections, {raw} bytes inflated")
        subprocess.run([program] + sections, check=True)


if __name__ == "__main__":
    main()
