#!/usr/bin/env python3
"""Turns a FuzzColumns input (see Fuzz/Sources/FuzzColumns) into the .peernote file the target loads.

    python3 Fuzz/columns-to-peernote.py crash-XXXX OUT.peernote
"""
import sys
import zlib


def head(major, value):
    m = major << 5
    if value < 24:
        return bytes([m | value])
    for info, n in ((24, 1), (25, 2), (26, 4), (27, 8)):
        if value < 1 << (8 * n):
            return bytes([m | info]) + value.to_bytes(n, "big")
    raise ValueError(value)


def bstr(b):
    return head(2, len(b)) + b


def stored_deflate(data):
    out, pos = bytearray(), 0
    while True:
        n = min(65535, len(data) - pos)
        final = 1 if pos + n == len(data) else 0
        out += bytes([final, n & 0xFF, n >> 8, ~n & 0xFF, (~n >> 8) & 0xFF]) + data[pos:pos + n]
        pos += n
        if pos >= len(data):
            return bytes(out)


class Input:
    def __init__(self, data):
        self.data, self.pos = data, 0

    def byte(self):
        if self.pos >= len(self.data):
            return 0
        self.pos += 1
        return self.data[self.pos - 1]

    def take(self, n):
        out = self.data[self.pos:self.pos + max(0, n)]
        self.pos = min(len(self.data), self.pos + max(0, n))
        return out

    def uleb(self):
        v = 0
        for shift in range(0, 70, 7):
            b = self.byte()
            if shift < 64:
                v |= (b & 0x7F) << shift
            if b < 0x80:
                break
        return v & 0xFFFFFFFFFFFFFFFF


def convert(data):
    inp = Input(data)
    n = inp.byte() % 9
    replicas = []
    for _ in range(n):
        r = inp.take(16)
        replicas.append(r + bytes(16 - len(r)))
    gi = inp.byte()
    changes, units = inp.uleb(), inp.uleb()
    k = inp.byte()
    strings = []
    for _ in range(k):
        strings.append(inp.take(inp.byte()).decode("utf-8", "replace"))
    columns = inp.data[inp.pos:]
    p = head(5, 9)
    p += head(0, 0) + head(0, 0)
    p += head(0, 1) + head(6, 37) + bstr(bytes([0x5A] * 16))
    p += head(0, 2) + head(4, 2) + bstr(replicas[gi % len(replicas)] if replicas else bytes(16)) + head(0, 1)
    p += head(0, 3) + head(4, len(replicas)) + b"".join(bstr(r) for r in replicas)
    p += head(0, 4) + head(4, len(strings)) + b"".join(head(3, len(s.encode())) + s.encode() for s in strings)
    p += head(0, 5) + head(0, changes)
    p += head(0, 6) + head(0, units)
    p += head(0, 7) + bstr(stored_deflate(columns))
    p += head(0, 8) + head(0, len(columns))
    return head(6, 55799) + head(6, 0x706E6F74) + head(4, 3) + head(0, 1) + bstr(p) + head(0, zlib.crc32(p))


if __name__ == "__main__":
    with open(sys.argv[1], "rb") as f:
        out = convert(f.read())
    with open(sys.argv[2], "wb") as f:
        f.write(out)
