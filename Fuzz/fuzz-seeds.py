#!/usr/bin/env python3
"""Builds the seed corpora of the PeerNote fuzz targets from Fixtures/ (nothing is copied into git).

    python3 Fuzz/fuzz-seeds.py Fixtures OUT

writes OUT/FuzzLoad (every fixture, damaged ones too), OUT/FuzzMerge (pairs of fixtures in the
target's input layout: 2-byte big-endian length of the first file, then both files),
OUT/FuzzDecodeCBOR (each block's payload), OUT/FuzzColumns (each file's first block in
FuzzColumns' layout, columns inflated), OUT/FuzzSalvage (every fixture, as FuzzLoad) and
OUT/FuzzMergeHistories (a few byte patterns: its input steers a history it makes). Only the
standard library is used.
"""
import os
import struct
import sys
import zlib

MAGIC = bytes([0xD9, 0xD9, 0xF7, 0xDA, 0x70, 0x6E, 0x6F, 0x74])


def head(buf, pos):
    """Returns (major, value, position after the head) of the CBOR head at pos."""
    ib = buf[pos]
    major, info = ib >> 5, ib & 0x1F
    if info < 24:
        return major, info, pos + 1
    n = {24: 1, 25: 2, 26: 4, 27: 8}[info]
    return major, int.from_bytes(buf[pos + 1:pos + 1 + n], "big"), pos + 1 + n


def item(buf, pos):
    """Decodes one definite-length CBOR item: returns (value, end)."""
    major, value, pos = head(buf, pos)
    if major == 0:
        return value, pos
    if major in (2, 3):
        raw = buf[pos:pos + value]
        return (raw if major == 2 else raw.decode("utf-8")), pos + value
    if major == 4:
        out = []
        for _ in range(value):
            v, pos = item(buf, pos)
            out.append(v)
        return out, pos
    if major == 5:
        out = {}
        for _ in range(value):
            k, pos = item(buf, pos)
            v, pos = item(buf, pos)
            out[k] = v
        return out, pos
    if major == 6:
        return item(buf, pos)
    raise ValueError("unexpected CBOR major type %d" % major)


def blocks(data):
    """The payloads of a file's blocks (stops at the first thing that is not a whole block)."""
    out, pos = [], 0
    while data[pos:pos + 8] == MAGIC and data[pos + 8] == 0x83:
        _, _, p = head(data, pos + 9)           # version
        _, length, p = head(data, p)            # payload byte string
        payload = data[p:p + length]
        _, _, end = head(data, p + length)      # crc
        out.append(payload)
        pos = end
    return out


def uleb(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def columns_seed(payload):
    m, _ = item(payload, 0)
    replicas = m[3][:8]
    genesis = m[2][0]
    gi = replicas.index(genesis) if genesis in replicas else 0
    strings = [s.encode("utf-8")[:255] for s in m[4][:255]]
    out = bytearray([len(replicas)])
    for r in replicas:
        out += r
    out.append(gi)
    out += uleb(m[5]) + uleb(m[6])
    out.append(len(strings))
    for s in strings:
        out.append(len(s))
        out += s
    out += zlib.decompress(m[7], -15)
    return bytes(out)


def main():
    fixtures, out = sys.argv[1], sys.argv[2]
    files = {}
    for root, dirs, names in os.walk(fixtures):
        # Fixtures/fuzz/ held inputs that crashed or hung the library while its bugs were open:
        # as seeds they stopped a run at once. (They are regression tests instead.)
        dirs[:] = [d for d in dirs if d != "fuzz"]
        for name in sorted(names):
            if name.endswith(".peernote"):
                path = os.path.join(root, name)
                with open(path, "rb") as f:
                    files[os.path.relpath(path, fixtures).replace("/", "_")] = f.read()
    valid = {k: v for k, v in files.items() if not k.startswith("damaged")}
    dirs = {t: os.path.join(out, t) for t in ("FuzzLoad", "FuzzMerge", "FuzzDecodeCBOR", "FuzzColumns", "FuzzSalvage",
                                              "FuzzMergeHistories")}
    for d in dirs.values():
        os.makedirs(d, exist_ok=True)

    def put(target, name, data):
        with open(os.path.join(dirs[target], name), "wb") as f:
            f.write(data)

    # FuzzMergeHistories: its input steers the making of a history; a few byte patterns to start from.
    for k in range(8):
        put("FuzzMergeHistories", "seed%d" % k, bytes([8 + 5 * k]) + bytes((k * 37 + i * 11) % 256 for i in range(64)))
    for name, data in files.items():
        put("FuzzLoad", name, data)
        put("FuzzSalvage", name, data)
    for a, da in valid.items():
        for b, db in valid.items():
            if a < b or a == b == "hi.peernote":
                put("FuzzMerge", a + "+" + b, struct.pack(">H", len(da)) + da + db)
    for name, data in valid.items():
        payloads = blocks(data)
        for i, p in enumerate(payloads):
            put("FuzzDecodeCBOR", "%s.%d" % (name, i), p)
        if payloads:
            put("FuzzColumns", name, columns_seed(payloads[0]))
    print("seeds: " + ", ".join("%s %d" % (t, len(os.listdir(d))) for t, d in dirs.items()))


if __name__ == "__main__":
    main()
