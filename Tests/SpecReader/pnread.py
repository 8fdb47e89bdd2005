#!/usr/bin/env python3
"""Independent reader of the .peernote format, written from peernote(5) alone.

Usage: pnread.py FILE            -> notebook as JSON on stdout
       pnread.py --info FILE     -> also summary counts (changes, op units, conflicts)
Exit 0 on success, 65 on a refused file (message on stderr: "offset N: ...").
Standard library only. Reads format versions 1 to 3 (version 3: each note body's structure in
the state section, and the insert origins that follow from it left out, column 49).
"""
import sys, json, zlib, hashlib

MAGIC = bytes.fromhex("D9D9F7DA706E6F74")
SUPPORTED_VERSION = 3
STRUCTURES_VERSION = 3   # the first version whose state section stores each body's structure


class PNError(Exception):
    def __init__(self, offset, msg):
        super().__init__(msg)
        self.offset = offset
        self.msg = msg

    def __str__(self):
        if self.offset is None:
            return self.msg
        return "offset %d: %s" % (self.offset, self.msg)


# ---------------------------------------------------------------- CBOR

class Tag:
    def __init__(self, tag, value):
        self.tag, self.value = tag, value


class CBOR:
    """Minimal strict CBOR decoder over buf[start:end]; offsets are absolute."""

    def __init__(self, buf, end, maxdepth, maxitems=None):
        self.buf, self.end, self.maxdepth = buf, end, maxdepth
        self.items = 0
        self.maxitems = maxitems

    def head(self, pos):
        if pos >= self.end:
            raise PNError(pos, "file is truncated or damaged: CBOR item cut short")
        ib = self.buf[pos]
        mt, ai = ib >> 5, ib & 31
        p = pos + 1
        if ai < 24:
            return mt, ai, ai, p
        if ai in (24, 25, 26, 27):
            n = 1 << (ai - 24)
            if p + n > self.end:
                raise PNError(pos, "file is truncated or damaged: CBOR head cut short")
            return mt, ai, int.from_bytes(self.buf[p:p + n], "big"), p + n
        if ai == 31:
            raise PNError(pos, "indefinite-length item or break code")
        raise PNError(pos, "reserved additional information %d" % ai)

    def item(self, pos, depth=1):
        # a "level" is a container (array, map, tag); scalars inside the deepest one do not count
        if depth > self.maxdepth and pos < self.end and (self.buf[pos] >> 5) in (4, 5, 6):
            raise PNError(pos, "nesting deeper than %d levels" % self.maxdepth)
        self.items += 1
        if self.maxitems is not None and self.items > self.maxitems:
            raise PNError(pos, "too many data items")
        mt, ai, val, p = self.head(pos)
        if mt == 0:
            return val, p
        if mt == 1:
            return -1 - val, p
        if mt in (2, 3):
            remain = self.end - p
            if val > remain:
                raise PNError(pos, "file is truncated or damaged: declared length %d exceeds the %d bytes that remain" % (val, remain))
            data = bytes(self.buf[p:p + val])
            if mt == 3:
                try:
                    data = data.decode("utf-8")
                except UnicodeDecodeError:
                    raise PNError(pos, "text string is not valid UTF-8")
            return data, p + val
        if mt == 4:
            if val > self.end - p:
                raise PNError(pos, "file is truncated or damaged: array count %d exceeds the bytes that remain" % val)
            out = []
            for _ in range(val):
                v, p = self.item(p, depth + 1)
                out.append(v)
            return out, p
        if mt == 5:
            if 2 * val > self.end - p:
                raise PNError(pos, "file is truncated or damaged: map count %d exceeds the bytes that remain" % val)
            out = []
            for _ in range(val):
                ks = p
                k, p = self.item(p, depth + 1)
                vs = p
                v, p = self.item(p, depth + 1)
                out.append((k, v, ks, vs, p))
            return out, p
        if mt == 6:
            v, p = self.item(p, depth + 1)
            return Tag(val, v), p
        # mt == 7
        if ai == 20:
            return False, p
        if ai == 21:
            return True, p
        if ai == 22:
            return None, p
        if ai == 23:
            return ("undefined",), p
        if ai in (25, 26, 27):
            import struct
            raw = bytes(self.buf[pos + 1:p])
            if ai == 25:
                return struct.unpack(">e", raw)[0], p
            return struct.unpack(">f" if ai == 26 else ">d", raw)[0], p
        if ai == 24 and val < 32:
            raise PNError(pos, "simple value %d must use the one-byte form" % val)
        return ("simple", val), p


# ---------------------------------------------------------------- columns

class ColErr(Exception):
    pass


class Reader:
    def __init__(self, data, name):
        self.d, self.p, self.name = data, 0, name

    def done(self):
        return self.p >= len(self.d)

    def _varint(self):
        """The LEB128 groups at the read position: (value as unsigned, bits read, bytes read,
        last byte, position after)."""
        d, p = self.d, self.p
        v, shift, n = 0, 0, 0
        while True:
            if p >= len(d):
                raise ColErr("column %s: varint cut short" % self.name)
            b = d[p]; p += 1; n += 1
            if n > 10:
                raise ColErr("column %s: varint longer than 10 bytes" % self.name)
            v |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return v, shift, n, b, p

    def uleb(self):
        d = self.d
        v, shift, n, b, p = self._varint()
        if n > 1 and d[p - 1] == 0:
            raise ColErr("column %s: non-minimal uleb128" % self.name)
        if v >= 1 << 64:
            raise ColErr("column %s: uleb128 does not fit in 64 bits" % self.name)
        self.p = p
        return v

    def sleb(self):
        d = self.d
        v, shift, n, b, p = self._varint()
        if b & 0x40:
            v -= 1 << shift
        if n > 1:
            last, prev = d[p - 1], d[p - 2]
            if (last == 0x00 and not prev & 0x40) or (last == 0x7F and prev & 0x40):
                raise ColErr("column %s: non-minimal sleb128" % self.name)
        if not -(1 << 63) <= v < (1 << 63):
            raise ColErr("column %s: sleb128 does not fit in 64 bits" % self.name)
        self.p = p
        return v


def rle_decode(data, count, name, signed=False):
    r = Reader(data, name)
    out = []
    while len(out) < count:
        if r.done():
            raise ColErr("column %s: holds %d values, expected %d" % (name, len(out), count))
        n = r.sleb()
        if n == 0:
            raise ColErr("column %s: run of length 0" % name)
        if n > 0:
            if len(out) + n > count:
                raise ColErr("column %s: run goes past the expected %d values" % (name, count))
            v = r.sleb() if signed else r.uleb()
            out.extend([v] * n)
        else:
            if len(out) - n > count:
                raise ColErr("column %s: run goes past the expected %d values" % (name, count))
            for _ in range(-n):
                out.append(r.sleb() if signed else r.uleb())
    if not r.done():
        raise ColErr("column %s: bytes left after %d values" % (name, count))
    return out


def rle_count(data, name, signed=False):
    """Count values of an RLE column without knowing the count (column 30)."""
    r = Reader(data, name)
    total = 0
    while not r.done():
        n = r.sleb()
        if n == 0:
            raise ColErr("column %s: run of length 0" % name)
        if n > 0:
            (r.sleb if signed else r.uleb)()
            total += n
        else:
            for _ in range(-n):
                (r.sleb if signed else r.uleb)()
            total += -n
    return total


# Change times and note creation times lie within +-2^52 seconds (peernote(5), changeTime).
MAX_TIME = 1 << 52


def delta_decode(data, count, name):
    diffs = rle_decode(data, count, name, signed=True)
    out, v = [], 0
    for x in diffs:
        v += x
        if not -(1 << 63) <= v < (1 << 63):
            raise ColErr("column %s: running sum outside 64-bit range" % name)
        out.append(v)
    return out


def bool_decode(data, count, name):
    r = Reader(data, name)
    out, val, first = [], False, True
    while len(out) < count:
        if r.done():
            raise ColErr("column %s: holds %d values, expected %d" % (name, len(out), count))
        n = r.uleb()
        if n == 0 and not first:
            raise ColErr("column %s: empty run after the first" % name)
        if len(out) + n > count:
            raise ColErr("column %s: runs exceed %d values" % (name, count))
        out.extend([val] * n)
        val = not val
        first = False
    if not r.done():
        raise ColErr("column %s: bytes left" % name)
    return out


KNOWN_COLS = set(range(10, 20)) | set(range(30, 49))
# column 49 opOriginsStored: only in a block of version 3 with a state section
KNOWN_COLS_V3 = KNOWN_COLS | {49}


def parse_column_set(data, known=KNOWN_COLS):
    r = Reader(data, "set")
    cols, last = {}, -1
    while not r.done():
        cid = r.uleb()
        ln = r.uleb()
        if cid not in known:
            raise ColErr("unknown column id %d" % cid)
        if cid <= last:
            raise ColErr("column ids not strictly ascending (%d after %d)" % (cid, last))
        if ln < 1:
            raise ColErr("column %d has length 0" % cid)
        if r.p + ln > len(data):
            raise ColErr("column %d runs past the end of the column set" % cid)
        cols[cid] = bytes(data[r.p:r.p + ln])
        r.p += ln
        last = cid
    return cols


def take_scalars(s, n):
    # Python str is a sequence of Unicode scalar values (code points)
    return s[:n], s[n:]


# ---------------------------------------------------------------- blocks

def crc32(b):
    return zlib.crc32(b) & 0xFFFFFFFF


def inflate_exact(comp, size, offset, what):
    d = zlib.decompressobj(-15)
    try:
        out = d.decompress(comp, size + 1)
    except zlib.error as e:
        raise PNError(offset, "%s: invalid DEFLATE data (%s)" % (what, e))
    if len(out) > size:
        raise PNError(offset, "%s: inflates to more than the declared %d bytes" % (what, size))
    if d.unconsumed_tail:
        # more input while output already == size+? -> more output would come
        try:
            more = d.decompress(d.unconsumed_tail, 1)
        except zlib.error as e:
            raise PNError(offset, "%s: invalid DEFLATE data (%s)" % (what, e))
        if more:
            raise PNError(offset, "%s: inflates to more than the declared %d bytes" % (what, size))
    if not d.eof:
        raise PNError(offset, "%s: DEFLATE stream does not end" % what)
    if d.unused_data:
        raise PNError(offset, "%s: bytes after the end of the DEFLATE stream" % what)
    if len(out) != size:
        raise PNError(offset, "%s: inflates to %d bytes, declared %d" % (what, len(out), size))
    return out


class Block:
    pass


def parse_blocks(data):
    S = len(data)
    if S == 0:
        raise PNError(0, "file is empty")
    blocks = []
    pos = 0
    while pos < S:
        start = pos
        if data[pos:pos + 8] != MAGIC:
            raise PNError(pos, "not a .peernote file (wrong magic bytes)")
        cb = CBOR(data, S, 8)
        p = pos + 8
        mt, ai, n, p2 = cb.head(p)
        if mt != 4 or n != 3:
            raise PNError(p, "block is not an array of 3")
        p = p2
        vpos = p
        mt, ai, version, p = cb.head(p)
        if mt != 0:
            raise PNError(vpos, "version is not an unsigned integer")
        ppos = p
        mt, ai, plen, p = cb.head(p)
        if mt != 2:
            raise PNError(ppos, "payload is not a byte string")
        if plen > S - p:
            raise PNError(ppos, "file is truncated or damaged: declared length %d exceeds the %d bytes that remain" % (plen, S - p))
        pstart, pend = p, p + plen
        p = pend
        cpos = p
        mt, ai, crc, p = cb.head(p)
        if mt != 0:
            raise PNError(cpos, "crc32 is not an unsigned integer")
        if version == 0:
            raise PNError(vpos, "format version 0 is invalid")
        if version > SUPPORTED_VERSION:
            raise PNError(None, "format version %d is newer than this reader understands (it reads version %d)" % (version, SUPPORTED_VERSION))
        actual = crc32(data[pstart:pend])
        if crc != actual:
            raise PNError(ppos, "checksum mismatch: block says %08x, contents give %08x (the file is damaged)" % (crc, actual))
        b = Block()
        b.start, b.end, b.version = start, p, version
        b.pstart, b.pend = pstart, pend
        b.prev_crc_actual = crc32(data[:start])
        # payload map
        pc = CBOR(data, pend, 16, maxitems=plen + 16)
        m, q = pc.item(pstart)
        if q != pend:
            raise PNError(q, "payload holds more than one CBOR item")
        if not isinstance(m, list) or (m and not isinstance(m[0], tuple)) or (pc.buf[pstart] >> 5) != 5:
            raise PNError(pstart, "payload is not a map")
        fields, unknown = {}, []
        for k, v, ks, vs, ve in m:
            if not isinstance(k, int) or isinstance(k, bool) or k < 0:
                raise PNError(ks, "payload key is not an unsigned integer")
            if k in fields or any(u[0] == k for u in unknown):
                raise PNError(ks, "payload key %d appears twice" % k)
            if k <= 13:
                fields[k] = (v, vs)
            else:
                unknown.append((k, bytes(data[ks:ve])))
        b.fields, b.unknown = fields, unknown
        interpret_payload(b, data, pos == 0)
        blocks.append(b)
        pos = p
    return blocks


def want(b, key, name, fits, what, required=True):
    """Payload field `key` of block `b` when `fits(value)`; None when it is absent and optional."""
    if key not in b.fields:
        if required:
            raise PNError(b.pstart, "required field %d (%s) missing" % (key, name))
        return None
    v, off = b.fields[key]
    if not fits(v):
        raise PNError(off, "field %d (%s) is not %s" % (key, name, what))
    return v


def want_uint(b, key, name, required=True):
    return want(b, key, name, lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0,
                "an unsigned integer", required)


def want_bytes(b, key, name, required=True):
    return want(b, key, name, lambda v: isinstance(v, bytes), "a byte string", required)


def interpret_payload(b, data, first):
    kind = want_uint(b, 0, "kind")
    if kind not in (0, 1):
        raise PNError(b.fields[0][1], "kind %d is neither base (0) nor append (1)" % kind)
    if first and kind != 0:
        raise PNError(b.fields[0][1], "first block is not a base block")
    if not first and kind != 1:
        raise PNError(b.fields[0][1], "a later block is not an append block")
    b.kind = kind
    if kind == 0:
        if 1 not in b.fields:
            raise PNError(b.pstart, "base block without documentID")
        v, off = b.fields[1]
        if not (isinstance(v, Tag) and v.tag == 37 and isinstance(v.value, bytes) and len(v.value) == 16):
            raise PNError(off, "documentID is not tag 37 around 16 bytes")
        b.uuid = v.value
        if 2 not in b.fields:
            raise PNError(b.pstart, "base block without genesis")
        v, off = b.fields[2]
        if not (isinstance(v, list) and len(v) == 2 and isinstance(v[0], bytes) and len(v[0]) == 16
                and isinstance(v[1], int) and not isinstance(v[1], bool) and v[1] >= 0):
            raise PNError(off, "genesis is not [bytes(16), uint]")
        if v[1] != 1:
            raise PNError(off, "genesis sequence number is %d, must be 1" % v[1])
        b.genesis = (v[0], v[1])
    else:
        b.previousCRC = want_uint(b, 9, "previousCRC")
        if b.previousCRC > 0xFFFFFFFF:
            raise PNError(b.fields[9][1], "previousCRC larger than 2^32-1")
        b.firstRow = want_uint(b, 10, "firstRow")
    if 3 not in b.fields:
        raise PNError(b.pstart, "required field 3 (replicas) missing")
    v, off = b.fields[3]
    if not isinstance(v, list) or not all(isinstance(x, bytes) and len(x) == 16 for x in v):
        raise PNError(off, "replicas is not an array of 16-byte byte strings")
    if len(set(v)) != len(v):
        raise PNError(off, "replica id listed twice")
    b.replicas = v
    if 4 not in b.fields:
        raise PNError(b.pstart, "required field 4 (strings) missing")
    v, off = b.fields[4]
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise PNError(off, "strings is not an array of text strings")
    b.strings = v
    b.changeCount = want_uint(b, 5, "changeCount")
    b.opUnitCount = want_uint(b, 6, "opUnitCount")
    comp = want_bytes(b, 7, "columns")
    b.columnsSize = want_uint(b, 8, "columnsSize")
    want_bytes(b, 11, "padding", required=False)
    state = want_bytes(b, 12, "state", required=False)
    stateSize = want_uint(b, 13, "stateSize", required=False)
    if state is not None and kind == 1:
        raise PNError(b.fields[12][1], "append block with a state section")
    if (state is None) != (stateSize is None):
        raise PNError(b.pstart, "state and stateSize must appear together")
    if state is not None and b.version < 2:
        # spec: version 2 adds the state section; a v1 block with one is not described
        raise PNError(b.fields[12][1], "state section in a version 1 block")
    S = len(data)
    C = len(comp)
    if b.columnsSize > 1100 * C + 65536:
        raise PNError(b.fields[8][1], "columnsSize too large for the compressed columns")
    coloff = b.fields[7][1]
    # offset of the first byte of the compressed columns: after the bstr head
    cb = CBOR(data, len(data), 1)
    _, _, _, b.colbytes_off = cb.head(coloff)
    b.columns_raw = inflate_exact(comp, b.columnsSize, b.colbytes_off, "columns")
    b.state = None
    if state is not None:
        soff = CBOR(data, len(data), 1).head(b.fields[12][1])[3]
        # LIMITS: the state section's inflated size is bounded as the columns' is
        if stateSize > 1100 * len(state) + 65536:
            raise PNError(soff, "state section claims to inflate to %d bytes, impossible for %d compressed bytes" % (stateSize, len(state)))
        raw = inflate_exact(state, stateSize, soff, "state section")
        sc = CBOR(raw, len(raw), 16, maxitems=len(raw) + 16)
        try:
            st, q = sc.item(0)
        except PNError as e:
            raise PNError(soff, "state section: " + e.msg)
        if q != len(raw):
            raise PNError(soff, "state section: bytes after the array")
        b.state = parse_state(st, soff, b.version >= STRUCTURES_VERSION, len(b.replicas), b.opUnitCount)
        b.state_off = soff
    # version 3 with a state section: structures in the state section, column 49
    b.v3 = b.state is not None and b.version >= STRUCTURES_VERSION


def decode_structure(data, nrep, budget):
    """A note body's structure (peernote(5), State section): runs (replica index, first counter,
    length, deleted) in document order, canonical. `budget`: how many elements it may hold."""
    r = Reader(data, "structure")
    n = r.uleb()
    runs, ends, total = [], {}, 0
    for i in range(n):
        ri = r.uleb()
        if ri >= nrep:
            raise ColErr("run %d: replica index %d outside the replica table" % (i, ri))
        c = ends.get(ri, 0) + r.sleb()
        if not 0 <= c <= 0xFFFFFFFF:
            raise ColErr("run %d: counter outside 0 ... 2^32-1" % i)
        packed = r.uleb()
        ln, dl = packed >> 1, bool(packed & 1)
        if ln == 0:
            raise ColErr("run %d is empty" % i)
        if total + ln > budget:
            raise ColErr("more elements than the block's %d op units" % budget)
        if c + ln > 1 << 32:
            raise ColErr("run %d passes counter 2^32" % i)
        if runs and runs[-1][0] == ri and runs[-1][1] + runs[-1][2] == c and runs[-1][3] == dl:
            raise ColErr("run %d continues the one before it (not canonical)" % i)
        runs.append((ri, c, ln, dl))
        ends[ri] = c + ln
        total += ln
    if not r.done():
        raise ColErr("bytes after the last run")
    return runs, total


def parse_state(st, off, structures=False, nrep=0, units=0):
    def bad(msg):
        raise PNError(off, "state section: " + msg)
    def isuint(x):
        return isinstance(x, int) and not isinstance(x, bool) and x >= 0
    if not (isinstance(st, list) and len(st) == 2 and isinstance(st[0], str) and isinstance(st[1], list)):
        bad("not [title, notes]")
    notes = []
    fields = 9 if structures else 8
    budget = units
    for k, n in enumerate(st[1]):
        if not (isinstance(n, list) and len(n) == fields):
            bad("note is not an array of %d" % fields)
        rep, ctr, title, tags, prio, created, deleted, body = n[:8]
        if not (isuint(rep) and isuint(ctr) and isinstance(title, str) and isinstance(tags, list)
                and all(isinstance(t, str) for t in tags) and isuint(prio) and prio <= 2
                and isinstance(created, int) and not isinstance(created, bool)
                and isinstance(deleted, bool) and isinstance(body, str)):
            bad("note fields have wrong types")
        if abs(created) > MAX_TIME:
            bad("note %d has an invalid creation time" % k)
        structure = None
        if structures:
            if not isinstance(n[8], bytes):
                bad("note %d's structure is not a byte string" % k)
            try:
                structure, count = decode_structure(n[8], nrep, budget)
            except ColErr as e:
                bad("note %d's structure: %s" % (k, str(e).replace("column structure: ", "")))
            budget -= count
        notes.append(dict(rep=rep, ctr=ctr, title=title, tags=tags, prio=prio,
                          created=created, deleted=deleted, body=body, structure=structure))
    return dict(title=st[0], notes=notes)


# ---------------------------------------------------------------- ops

# columns each kind uses, in OP KINDS order
KIND_COLS = {
    1: ["value", "preds"],
    2: ["ref1", "ref2", "created"],
    3: ["note", "value", "preds"],
    4: ["note", "ref1", "ref2", "text"],
    5: ["note", "ref1", "reversed"],
    6: ["note", "value"],
    7: ["note", "value", "preds"],
    8: ["note", "priority", "preds"],
    9: ["note", "preds"],
    10: ["note", "preds"],
    11: ["note", "ref1", "ref2", "preds"],
}


def decode_columns(b):
    try:
        cols = parse_column_set(b.columns_raw, KNOWN_COLS_V3 if b.v3 else KNOWN_COLS)
        col = lambda i: cols.get(i, b"")
        n = b.changeCount
        if n > 8 * b.file_size + 65536:
            raise ColErr("too many changes")
        ch = {}
        ch["replica"] = rle_decode(col(10), n, "10 changeReplica")
        ch["seq"] = delta_decode(col(11), n, "11 changeSeq")
        ch["length"] = rle_decode(col(12), n, "12 changeLength")
        ch["depcount"] = rle_decode(col(13), n, "13 changeDepCount")
        nd = sum(ch["depcount"])
        if nd > 8 * b.file_size + 65536:
            raise ColErr("too many dependencies")
        ch["depdist"] = rle_decode(col(14), nd, "14 changeDepDistance")
        ch["time"] = delta_decode(col(15), n, "15 changeTime")
        for j, t in enumerate(ch["time"]):
            if abs(t) > MAX_TIME:
                raise ColErr("change at row %d: time %d is out of range" % (j, t))
        ch["author"] = rle_decode(col(16), n, "16 changeAuthor")
        ch["message"] = rle_decode(col(17), n, "17 changeMessage")
        ch["extralen"] = rle_decode(col(18), n, "18 changeExtraLength")
        ext = col(19)
        if sum(ch["extralen"]) != len(ext):
            raise ColErr("column 19 changeExtra: length %d, lengths add up to %d" % (len(ext), sum(ch["extralen"])))
        R = rle_count(col(30), "30 opKind")
        if R > b.opUnitCount:
            raise ColErr("more op rows than op units")
        kinds = rle_decode(col(30), R, "30 opKind")
        lengths = rle_decode(col(31), R, "31 opLength")
        # version 3: one opOriginsStored value per insertText op; one that is false has no
        # entries in columns 34-37 (its origins follow from its note's structure)
        stored = bool_decode(col(49), kinds.count(4), "49 opOriginsStored") if b.v3 else None
        cnt = dict(note=0, ref1=0, ref2=0, reversed=0, value=0, preds=0, priority=0, created=0, unknown=0)
        ins = 0
        for k in kinds:
            skip_refs = False
            if k == 4:
                skip_refs = stored is not None and not stored[ins]
                ins += 1
            for c in KIND_COLS.get(k, ["unknown"]):
                if c != "text" and not (skip_refs and c in ("ref1", "ref2")):
                    cnt[c] += 1
        noteRep = rle_decode(col(32), cnt["note"], "32 opNoteReplica")
        noteCtr = delta_decode(col(33), cnt["note"], "33 opNoteCounter")
        r1r = rle_decode(col(34), cnt["ref1"], "34 opRef1Replica")
        r1c = delta_decode(col(35), sum(1 for x in r1r if x), "35 opRef1Counter")
        r2r = rle_decode(col(36), cnt["ref2"], "36 opRef2Replica")
        r2c = delta_decode(col(37), sum(1 for x in r2r if x), "37 opRef2Counter")
        rev = bool_decode(col(38), cnt["reversed"], "38 opReversed")
        vlen = rle_decode(col(39), cnt["value"], "39 opValueLength")
        vraw = col(40)
        if sum(vlen) != len(vraw):
            raise ColErr("column 40 opValue: length %d, lengths add up to %d" % (len(vraw), sum(vlen)))
        if sum(vlen) + sum(ch["extralen"]) > b.columnsSize:
            raise ColErr("lengths exceed columns size")
        pc = rle_decode(col(41), cnt["preds"], "41 opPredCount")
        npred = sum(pc)
        if npred > 8 * b.file_size + 65536:
            raise ColErr("too many predecessors")
        prr = rle_decode(col(42), npred, "42 opPredReplica")
        prc = delta_decode(col(43), npred, "43 opPredCounter")
        prio = rle_decode(col(44), cnt["priority"], "44 opPriority")
        created = delta_decode(col(45), cnt["created"], "45 opCreated")
        for t in created:
            if abs(t) > MAX_TIME:
                raise ColErr("creation time %d is out of range" % t)
        try:
            text = col(46).decode("utf-8")
        except UnicodeDecodeError:
            raise ColErr("column 46 opText is not valid UTF-8")
        plen = rle_decode(col(47), cnt["unknown"], "47 opPayloadLength")
        praw = col(48)
        if sum(plen) != len(praw):
            raise ColErr("column 48 opPayload: length mismatch")
    except ColErr as e:
        raise PNError(b.colbytes_off, str(e))

    # walk the ops with a cursor per column
    cur = dict(note=0, ref1=0, r1c=0, ref2=0, r2c=0, reversed=0, value=0, vbyte=0,
               preds=0, pred=0, priority=0, created=0, unknown=0, pbyte=0)
    ops = []
    textpos = 0
    nrep = len(b.replicas)

    def rep_index(i, what):
        if i >= nrep:
            raise PNError(b.colbytes_off, "%s: replica index %d outside the replica table" % (what, i))
        return i

    ins = 0
    for i, (k, ln) in enumerate(zip(kinds, lengths)):
        if ln < 1:
            raise PNError(b.colbytes_off, "op row %d has length 0" % i)
        if k in KIND_COLS and k not in (4, 5) and ln != 1:
            raise PNError(b.colbytes_off, "op row %d of kind %d has length %d" % (i, k, ln))
        op = dict(kind=k, length=ln)
        derive = False
        if k == 4:
            derive = stored is not None and not stored[ins]
            ins += 1
        for c in KIND_COLS.get(k, ["unknown"]):
            if derive and c in ("ref1", "ref2"):
                op[c] = None   # filled in from the note's structure before the block is replayed
                op["derive"] = True
            elif c == "note":
                j = cur["note"]; cur["note"] += 1
                op["note"] = (rep_index(noteRep[j], "note"), noteCtr[j])
            elif c in ("ref1", "ref2"):
                j = cur[c]; cur[c] += 1
                rr = r1r if c == "ref1" else r2r
                rc = r1c if c == "ref1" else r2c
                ck = "r1c" if c == "ref1" else "r2c"
                if rr[j] == 0:
                    op[c] = None
                else:
                    m = cur[ck]; cur[ck] += 1
                    op[c] = (rep_index(rr[j] - 1, c), rc[m])
            elif c == "created":
                op["created"] = created[cur["created"]]; cur["created"] += 1
            elif c == "reversed":
                op["reversed"] = rev[cur["reversed"]]; cur["reversed"] += 1
            elif c == "value":
                j = cur["value"]; cur["value"] += 1
                raw = vraw[cur["vbyte"]:cur["vbyte"] + vlen[j]]
                cur["vbyte"] += vlen[j]
                try:
                    op["value"] = raw.decode("utf-8")
                except UnicodeDecodeError:
                    raise PNError(b.colbytes_off, "opValue is not valid UTF-8")
            elif c == "preds":
                j = cur["preds"]; cur["preds"] += 1
                ps = []
                for _ in range(pc[j]):
                    m = cur["pred"]; cur["pred"] += 1
                    ps.append((rep_index(prr[m], "pred"), prc[m]))
                op["preds"] = ps
            elif c == "priority":
                v = prio[cur["priority"]]; cur["priority"] += 1
                if v > 2:
                    raise PNError(b.colbytes_off, "priority %d out of range" % v)
                op["priority"] = v
            elif c == "text":
                if b.state is None:
                    s = text[textpos:textpos + ln]
                    if len(s) != ln:
                        raise PNError(b.colbytes_off, "opText holds fewer characters than the ops insert")
                    textpos += ln
                    op["text"] = s
                else:
                    op["text"] = None  # placeholders
            elif c == "unknown":
                j = cur["unknown"]; cur["unknown"] += 1
                op["payload"] = praw[cur["pbyte"]:cur["pbyte"] + plen[j]]
                cur["pbyte"] += plen[j]
        if k == 5 and op["ref1"] is None:
            raise PNError(b.colbytes_off, "deleteText without a target")
        ops.append(op)
    if b.state is None and textpos != len(text):
        raise PNError(b.colbytes_off, "opText holds characters no op inserts")
    # LIMITS: opUnitCount <= 1100 x S + 65536 + 2 x (the characters the block inserts), checked
    # before a unit is materialised (a change may claim 2^32 units of a delete in a few bytes)
    inserted = sum(op["length"] for op in ops if op["kind"] == 4)
    if b.opUnitCount > 1100 * b.file_size + 65536 + 2 * inserted:
        raise PNError(b.fields[6][1], "block claims %d op units, more than a %d-byte file can hold" % (b.opUnitCount, b.file_size))
    if sum(lengths) != b.opUnitCount:
        raise PNError(b.colbytes_off, "op lengths add up to %d, opUnitCount is %d" % (sum(lengths), b.opUnitCount))
    if sum(ch["length"]) != b.opUnitCount:
        raise PNError(b.colbytes_off, "change lengths add up to %d, opUnitCount is %d" % (sum(ch["length"]), b.opUnitCount))
    b.ch, b.ops, b.deleted_text = ch, ops, (text if b.state is not None else None)
    # string indices
    for j in range(n):
        if ch["author"][j] >= len(b.strings) or ch["message"][j] > len(b.strings):
            raise PNError(b.colbytes_off, "string index outside the string table")
        if ch["replica"][j] >= nrep:
            raise PNError(b.colbytes_off, "change replica index outside the replica table")
        if not 1 <= ch["seq"][j] <= 0xFFFFFFFF:
            raise PNError(b.colbytes_off, "seq out of range")
        if not 1 <= ch["length"][j] <= b.opUnitCount:
            raise PNError(b.colbytes_off, "change length out of range")


def iso_time(t):
    """ISO 8601 in UTC for whole seconds `t` since 1970, on the proleptic Gregorian calendar
    (year 0 exists, a year is at least 4 digits with a minus sign before it when negative);
    `@SECONDS` for |t| >= 10^15, beyond the calendar the tools print."""
    if abs(t) >= 10 ** 15:
        return "@%d" % t
    days, secs = divmod(t, 86400)
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    y = yoe + era * 400 + (1 if m <= 2 else 0)
    year = ("-" if y < 0 else "") + "%04d" % abs(y)
    return "%s-%02d-%02dT%02d:%02d:%02dZ" % (year, m, d, secs // 3600, secs // 60 % 60, secs % 60)


# ---------------------------------------------------------------- CRDT state

class Elem:
    __slots__ = ("id", "left", "right", "deleted", "value", "replica")

    def __init__(self, id, left, right, value):
        self.id, self.left, self.right, self.value = id, left, right, value
        self.deleted = False
        self.replica = id[0]


class Seq:
    """FugueMax/YjsMod list exactly as in MERGE SEMANTICS."""

    def __init__(self):
        self.S = []
        self.byid = {}

    def pos(self, eid):
        return self.S.index(self.byid[eid])

    def integrate_run(self, xs):
        """Unit k>0 of an insertText op has unit k-1 as left origin: it lands directly after it
        (nothing else can name unit k-1 yet), so the run is placed where unit 0 goes."""
        dest = self.integrate(xs[0])
        self.S[dest + 1:dest + 1] = xs[1:]
        for x in xs[1:]:
            self.byid[x.id] = x

    def integrate(self, x):
        S = self.S
        left = self.pos(x.left) if x.left is not None else -1
        right = self.pos(x.right) if x.right is not None else len(S)
        dest = left + 1
        scanning = False
        i = left + 1
        while True:
            if not scanning:
                dest = i
            if i == len(S) or i == right:
                break
            O = S[i]
            oleft = self.pos(O.left) if O.left is not None else -1
            oright = self.pos(O.right) if O.right is not None else len(S)
            if oleft < left:
                break
            if oleft == left:
                if oright < right:
                    scanning = True
                elif oright == right:
                    if x.replica < O.replica:
                        break
                    scanning = False
                else:
                    scanning = False
            i += 1
        S.insert(dest, x)
        self.byid[x.id] = x
        return dest


class Register:
    def __init__(self):
        self.entries = {}  # id -> (lamport, replica, value)

    def write(self, oid, lamport, value, preds):
        for p in preds:
            self.entries.pop(p, None)
        self.entries[oid] = (lamport, oid[0], value)

    def value(self, default=None):
        if not self.entries:
            return default
        return max(self.entries.values(), key=lambda e: (e[0], e[1]))[2]

    def conflict(self):
        return len(self.entries) > 1

    def visible_conflict(self):
        return len(set(v[2] for v in self.entries.values())) > 1


class Note:
    def __init__(self, nid, created):
        self.id = nid
        self.created = created
        self.title = Register()
        self.priority = Register()
        self.deleted = Register()
        self.position = Register()
        self.tags = {}
        self.body = Seq()
        self.edit_rows = set()


def note_hex(nid):
    rep, ctr = nid
    return hashlib.sha256(rep + ctr.to_bytes(4, "big")).hexdigest()[:16]


class Doc:
    def __init__(self):
        self.title = Register()
        self.notes = {}
        self.order = Seq()
        self.ops_by_id = {}  # op unit id -> lamport (for reference checks)
        self.row_of_op = {}


def load(path):
    data = open(path, "rb").read()
    blocks = parse_blocks(data)
    doc = Doc()
    changes = []  # per row: dict(replica, seq, lamport, length, deps)
    by_change_id = {}
    next_seq = {}
    next_ctr = {}
    base = blocks[0]
    doc.uuid = base.uuid
    for bi, b in enumerate(blocks):
        b.file_size = len(data)
        if b.kind == 1:
            if b.previousCRC != b.prev_crc_actual:
                raise PNError(b.start, "append block's previousCRC %08x does not match the bytes before it (%08x)" % (b.previousCRC, b.prev_crc_actual))
            if b.firstRow != len(changes):
                raise PNError(b.start, "append block's firstRow %d, but %d changes precede it" % (b.firstRow, len(changes)))
        decode_columns(b)
        ch = b.ch
        # build changes and units
        units = []  # (replica id, counter, lamport, row)
        dpos = 0
        for j in range(b.changeCount):
            row = len(changes)
            rep = b.replicas[ch["replica"][j]]
            seq = ch["seq"][j]
            deps = []
            for _ in range(ch["depcount"][j]):
                dist = ch["depdist"][dpos]; dpos += 1
                if dist < 1 or dist > row:
                    raise PNError(b.start, "change at row %d: dependency %d rows back lies before the start of the file (missing dependency)" % (row, dist))
                deps.append(row - dist)
            if len(set(deps)) != len(deps):
                raise PNError(b.start, "change at row %d: dependency listed twice" % row)
            if row == 0:
                if deps:
                    raise PNError(b.start, "change at row 0 (genesis) has dependencies")
                if (rep, seq) != base.genesis:
                    raise PNError(b.start, "change at row 0 is not the genesis change")
            elif not deps:
                raise PNError(b.start, "change at row %d has no dependencies" % row)
            if seq != next_seq.get(rep, 1):
                raise PNError(b.start, "change at row %d: seq %d of replica %s, expected %d" % (row, seq, rep.hex()[:8], next_seq.get(rep, 1)))
            next_seq[rep] = seq + 1
            lam = 1 + max((changes[d]["lamport"] + changes[d]["length"] - 1 for d in deps), default=0)
            ln = ch["length"][j]
            ctr0 = next_ctr.get(rep, 0)
            if ctr0 + ln - 1 > 0xFFFFFFFE:
                raise PNError(b.start, "counter overflow")
            prevlast = by_change_id.get((rep, seq - 1))
            if prevlast is not None and lam <= prevlast["lamport"] + prevlast["length"] - 1:
                raise PNError(b.start, "change at row %d: Lamport timestamp not above the replica's previous change" % row)
            next_ctr[rep] = ctr0 + ln
            c = dict(replica=rep, seq=seq, lamport=lam, length=ln, deps=deps, ctr0=ctr0, row=row,
                     time=ch["time"][j], author=b.strings[ch["author"][j]],
                     message=(b.strings[ch["message"][j] - 1] if ch["message"][j] else None))
            changes.append(c)
            by_change_id[(rep, seq)] = c
            for k in range(ln):
                units.append((rep, ctr0 + k, lam + k, row))
        if b.v3:
            # version 3: the inserts that do not store their origins take them from their
            # note's structure first; then the block is read as version 2
            tile_ops(b, units, None)
            derive_origins(b, units)
            for op in b.ops:
                apply_op(doc, b, op)
        else:
            tile_ops(b, units, lambda op: apply_op(doc, b, op))
        if b.state is not None:
            # a block with a state section holds its changes in canonical order (State section)
            for r in range(1, len(changes)):
                if (changes[r - 1]["lamport"], changes[r - 1]["replica"]) >= (changes[r]["lamport"], changes[r]["replica"]):
                    raise PNError(b.start, "change at row %d: a block with a state section holds its changes in canonical order" % r)
            resolve_state(doc, b)
    if any((changes[r - 1]["lamport"], changes[r - 1]["replica"]) >= (changes[r]["lamport"], changes[r]["replica"])
           for r in range(1, len(changes))):
        doc = canonical_replay(doc, blocks, changes)
    doc.changes = changes
    doc.blocks = blocks
    doc.data = data
    return doc


def canonical_replay(first, blocks, changes):
    """MERGE SEMANTICS: the state is every op unit applied in the canonical order of changes
    ((lamport, replica id), each change's units in order). Rows in another order (appended
    blocks) are applied again in that order: the ops cut at change boundaries, sorted, applied
    to a new state. The characters come from the first replay (a state section fills them in)."""
    pieces = []
    for b in blocks:
        for op in b.ops:
            seg = op["units"]
            s = 0
            for k in range(1, len(seg) + 1):
                if k == len(seg) or seg[k][3] != seg[s][3]:
                    pieces.append((b, op, s, k))
                    s = k

    def key(p):
        b, op, s, e = p
        rep, ctr, lam, row = op["units"][s]
        return (changes[row]["lamport"], changes[row]["replica"], ctr)

    pieces.sort(key=key)
    doc = Doc()
    doc.uuid = first.uuid
    for b, op, s, e in pieces:
        piece = dict(op)
        piece["units"] = op["units"][s:e]
        piece["length"] = e - s
        if s > 0 and op["kind"] == 4:
            rep, ctr = op["units"][s - 1][0], op["units"][s - 1][1]
            piece["ref1"] = (b.replicas.index(rep), ctr)
            if op["text"] is not None:
                piece["text"] = op["text"][s:e]
        elif s > 0 and op["kind"] == 5:
            ri, c = op["ref1"]
            piece["ref1"] = (ri, c - s if op["reversed"] else c + s)
        apply_op(doc, b, piece)
    for nid, n in doc.notes.items():
        old = first.notes[nid].body.byid
        for e in n.body.S:
            e.value = old[e.id].value
    return doc


def tile_ops(b, units, each):
    """Op rows tile the block's units (IDENTIFIERS AND DERIVED NUMBERS); `each(op)` after each."""
    u = 0
    for i, op in enumerate(b.ops):
        seg = units[u:u + op["length"]]
        if len(seg) != op["length"]:
            raise PNError(b.start, "op rows cover more units than the changes")
        rep0, c0 = seg[0][0], seg[0][1]
        for k, (r, c, l, row) in enumerate(seg):
            if r != rep0 or c != c0 + k:
                raise PNError(b.start, "change at row %d: op row %d covers units of two replicas or non-continuing counters" % (row, i))
        if op["kind"] not in KIND_COLS and seg[0][3] != seg[-1][3]:
            raise PNError(b.start, "change at row %d: an op of unknown kind %d spans two changes" % (seg[0][3], op["kind"]))
        op["units"] = seg
        op["u0"] = u          # the number of its first unit in the block: its rank
        u += op["length"]
        if each is not None:
            each(op)
    if u != len(units):
        raise PNError(b.start, "op rows do not cover all op units")


def nearest_earlier(ranks):
    """For each position i: (the largest j < i with ranks[j] < ranks[i], the smallest j > i with
    ranks[j] < ranks[i]), None where there is none. One pass with a stack (ranks distinct)."""
    n = len(ranks)
    left, right = [None] * n, [None] * n
    stack = []
    for i in range(n):
        while stack and ranks[stack[-1]] > ranks[i]:
            right[stack.pop()] = i
        left[i] = stack[-1] if stack else None
        stack.append(i)
    return left, right


def derive_origins(b, units):
    """Version 3: check that the structures list exactly the block's inserted characters, each
    in the note it was inserted into, and give each insertText op that does not store its
    origins the ones its first unit's place in the structure gives (peernote(5), Origins
    derived from a structure). Keeps each note's structure for resolve_state."""
    R = b.replicas
    index = {r: i for i, r in enumerate(R)}
    inserted = {}   # unit id -> (rank, op, k)
    for op in b.ops:
        if op["kind"] != 4:
            continue
        for k, (r, c, l, row) in enumerate(op["units"]):
            inserted[(r, c)] = (op["u0"] + k, op, k)
    def bad(msg):
        # a history error (peernote(5), DIAGNOSTICS): at the block's offset
        raise PNError(b.start, "the state section does not match the history: " + msg)
    seen = set()
    b.structures = {}
    for sn in b.state["notes"]:
        if sn["rep"] >= len(R):
            raise PNError(b.state_off, "state section: replica index outside the table")
        nid = (R[sn["rep"]], sn["ctr"])
        elems, ranks = [], []
        for ri, c0, ln, dl in sn["structure"]:
            for c in range(c0, c0 + ln):
                eid = (R[ri], c)
                got = inserted.get(eid)
                if got is None or (R[got[1]["note"][0]], got[1]["note"][1]) != nid:
                    bad("the structure of note %s lists %d@%s, which is not a character inserted into that note" % (note_hex(nid), c, R[ri].hex()[:8]))
                if eid in seen:
                    bad("the structure of note %s lists %d@%s twice" % (note_hex(nid), c, R[ri].hex()[:8]))
                seen.add(eid)
                elems.append((eid, dl))
                ranks.append(got[0])
        b.structures[nid] = elems
        left, right = nearest_earlier(ranks)
        for i, (eid, dl) in enumerate(elems):
            rank, op, k = inserted[eid]
            if k == 0 and op.get("derive"):
                op["ref1"] = None if left[i] is None else (index[elems[left[i]][0][0]], elems[left[i]][0][1])
                op["ref2"] = None if right[i] is None else (index[elems[right[i]][0][0]], elems[right[i]][0][1])
    if len(seen) != len(inserted):
        missing = next(e for e in inserted if e not in seen)
        bad("inserted character %d@%s is in no note's structure" % (missing[1], missing[0].hex()[:8]))


def resolve_state(doc, b):
    """Fill placeholder characters from the state section (visible) and opText (deleted)."""
    st = b.state
    deleted_text = b.deleted_text
    dpos = 0
    listed = set()
    for sn in st["notes"]:
        if sn["rep"] >= len(b.replicas):
            raise PNError(b.state_off, "state section: replica index outside the table")
        nid = (b.replicas[sn["rep"]], sn["ctr"])
        if nid not in doc.notes:
            raise PNError(b.state_off, "state section lists a note the history does not create")
        if nid in listed:
            raise PNError(b.state_off, "state section lists a note twice")
        listed.add(nid)
        note = doc.notes[nid]
        if b.v3 and [(e.id, e.deleted) for e in note.body.S] != b.structures[nid]:
            raise PNError(b.start, "the state section does not match the history: the body of note %s is not its structure" % note_hex(nid))
        vis = sn["body"]
        vpos = 0
        for e in note.body.S:
            if e.deleted:
                if dpos >= len(deleted_text):
                    raise PNError(b.state_off, "state section: text column holds too few deleted characters")
                e.value = deleted_text[dpos]; dpos += 1
            else:
                if vpos >= len(vis):
                    raise PNError(b.state_off, "state section: body of note %s too short" % note_hex(nid))
                e.value = vis[vpos]; vpos += 1
        if vpos != len(vis):
            raise PNError(b.state_off, "state section: body of note %s too long" % note_hex(nid))
    if dpos != len(deleted_text):
        raise PNError(b.state_off, "state section: text column holds more deleted characters than the history")
    if listed != set(doc.notes):
        raise PNError(b.state_off, "state section does not list every note")
    # cross-check the rest against the replayed history
    nb = notebook(doc)
    if nb["title"] != st["title"]:
        raise PNError(b.state_off, "state section: notebook title disagrees with the history")
    order = [(b.replicas[sn["rep"]], sn["ctr"]) for sn in st["notes"]]
    hist_order = nb["_order"]
    if order != hist_order:
        raise PNError(b.state_off, "state section: notes not in the history's order")
    for sn, hn in zip(st["notes"], nb["notes"]):
        # tags: the visible ones, each once, sorted by code point (str order), in that order
        if (sn["title"], sn["tags"], sn["prio"], sn["created"], sn["deleted"]) != \
           (hn["title"], hn["tags"], ["low", "normal", "high"].index(hn["priority"]), hn["_created"], hn["deleted"]):
            raise PNError(b.state_off, "state section: note %s disagrees with the history" % hn["id"])


def apply_op(doc, b, op):
    k = op["kind"]
    seg = op["units"]
    rep, c0, lam0, row = seg[0]
    oid = (rep, c0)
    R = b.replicas

    def rid(x):
        return (R[x[0]], x[1]) if x is not None else None

    def known(x, what):
        # reference check: exists earlier in the file with a smaller Lamport timestamp
        if x is None:
            return
        l = doc.ops_by_id.get(x)
        if l is None or l >= lam0:
            raise PNError(b.start, "change at row %d: refers to op %d@%s (%s), which does not exist" % (row, x[1], x[0].hex()[:8], what))

    def getnote(x):
        nid = rid(x)
        known(nid, "note")
        n = doc.notes.get(nid)
        if n is None:
            raise PNError(b.start, "change at row %d: refers to op %d@%s, which is not a note" % (row, nid[1], nid[0].hex()[:8]))
        return n

    def origins(seq, what):
        """The op's two origins (ref1, ref2), each absent or an element of `seq`."""
        l, r = rid(op["ref1"]), rid(op["ref2"])
        for x in (l, r):
            known(x, "origin")
            if x is not None and x not in seq.byid:
                raise PNError(b.start, "change at row %d: %s" % (row, what))
        return l, r

    preds = [rid(p) for p in op.get("preds", [])]
    for p in preds:
        known(p, "pred")
    if k == 1:
        doc.title.write(oid, lam0, op["value"], preds)
    elif k == 2:
        if oid in doc.notes:
            raise PNError(b.start, "change at row %d: note created twice" % row)
        l, r = origins(doc.order, "origin is not a slot")
        n = Note(oid, op["created"])
        doc.notes[oid] = n
        doc.order.integrate(Elem(oid, l, r, oid))
        n.position.write(oid, lam0, oid, [])
    elif k == 3:
        getnote(op["note"]).title.write(oid, lam0, op["value"], preds)
    elif k == 4:
        n = getnote(op["note"])
        l, r = origins(n.body, "insert origin is not in the note's body")
        txt = op["text"]
        run = []
        for kk, (ur, uc, ul, urow) in enumerate(seg):
            run.append(Elem((ur, uc), l, r, txt[kk] if txt is not None else None))
            l = (ur, uc)
        n.body.integrate_run(run)
    elif k == 5:
        n = getnote(op["note"])
        t = rid(op["ref1"])
        for kk in range(op["length"]):
            c = t[1] - kk if op["reversed"] else t[1] + kk
            if c < 0:
                raise PNError(b.start, "change at row %d: reversed delete below counter 0" % row)
            tid = (t[0], c)
            known(tid, "delete target")
            e = n.body.byid.get(tid)
            if e is None:
                raise PNError(b.start, "change at row %d: delete target is not in the note's body" % row)
            e.deleted = True
    elif k == 6:
        n = getnote(op["note"])
        n.tags.setdefault(op["value"], set()).add(oid)
    elif k == 7:
        n = getnote(op["note"])
        s = n.tags.setdefault(op["value"], set())
        for p in preds:
            s.discard(p)
    elif k == 8:
        getnote(op["note"]).priority.write(oid, lam0, op["priority"], preds)
    elif k == 9:
        getnote(op["note"]).deleted.write(oid, lam0, True, preds)
    elif k == 10:
        getnote(op["note"]).deleted.write(oid, lam0, False, preds)
    elif k == 11:
        n = getnote(op["note"])
        l, r = origins(doc.order, "origin is not a slot")
        doc.order.integrate(Elem(oid, l, r, n.id))
        n.position.write(oid, lam0, oid, preds)
    if k in (3, 4, 5, 6, 7, 8, 11):
        doc.notes[rid(op["note"])].edit_rows.add(row)
    # unknown kinds: no effect
    for (ur, uc, ul, urow) in seg:
        doc.row_of_op[(ur, uc)] = urow
        doc.ops_by_id[(ur, uc)] = ul


PRIO = ["low", "normal", "high"]


def notebook(doc):
    live, dead = [], []
    for e in doc.order.S:
        n = doc.notes[e.value]
        if n.position.value() != e.id:
            continue
        deleted = any(v[2] for v in n.deleted.entries.values())
        (dead if deleted else live).append(n)
    out = []
    for n in live + dead:
        deleted = any(v[2] for v in n.deleted.entries.values())
        body = "".join(e.value if e.value is not None else "\ufffd" for e in n.body.S if not e.deleted)
        out.append({
            "id": note_hex(n.id),
            "title": n.title.value(""),
            "body": body,
            "tags": sorted(t for t, s in n.tags.items() if s),
            "priority": PRIO[n.priority.value(1)],
            "created": iso_time(n.created),
            "_created": n.created,
            "deleted": deleted,
        })
    u = doc.uuid.hex()
    uuid = "%s-%s-%s-%s-%s" % (u[:8], u[8:12], u[12:16], u[16:20], u[20:])
    return {"id": uuid, "title": doc.title.value(""), "notes": out,
            "_order": [n.id for n in live + dead]}


def moves_agree(doc, n):
    """Order of notes: no slot showing another live note lies between the first and the last
    slot of n's position register (the moves all show n at one place)."""
    mine = set(n.position.entries)
    inside = False
    for e in doc.order.S:
        if e.id in mine:
            mine.discard(e.id)
            inside = bool(mine)
            if not inside:
                return True
            continue
        if inside and e.value != n.id:
            other = doc.notes[e.value]
            shown = other.position.value() == e.id
            if shown and not any(v[2] for v in other.deleted.entries.values()):
                return False
    return True


def conflicts(doc):
    """Count visible conflicts: registers with >1 distinct value, position conflicts whose slots
    do not all show the note at one place, delete/edit."""
    c = []
    if doc.title.visible_conflict():
        c.append("notebook title")
    for nid, n in doc.notes.items():
        dels = [oid for oid, e in n.deleted.entries.items() if e[2]]
        # A deleted note's register conflicts are not listed (spec: Delete and restore).
        if not dels and n.title.visible_conflict():
            c.append("title " + note_hex(nid))
        if not dels and n.priority.visible_conflict():
            c.append("priority " + note_hex(nid))
        if not dels and n.position.conflict() and not moves_agree(doc, n):
            c.append("position " + note_hex(nid))
        if dels:
            unseen = set()
            for oid in dels:
                past = ancestors(doc, doc.row_of_op[oid])
                unseen |= {r for r in n.edit_rows if r not in past}
            if unseen:
                c.append("delete/edit " + note_hex(nid))
    return c


def ancestors(doc, row):
    cache = doc.__dict__.setdefault("_anc", {})
    if row in cache:
        return cache[row]
    out = {row}
    stack = [row]
    while stack:
        r = stack.pop()
        for d in doc.changes[r]["deps"]:
            if d not in out:
                out.add(d)
                stack.append(d)
    cache[row] = out
    return out


def main(argv):
    info = False
    if argv and argv[0] == "--info":
        info = True
        argv = argv[1:]
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 64
    try:
        doc = load(argv[0])
    except PNError as e:
        print("%s: %s" % (argv[0], e), file=sys.stderr)
        return 65
    except (OSError) as e:
        print("%s: %s" % (argv[0], e), file=sys.stderr)
        return 66
    nb = notebook(doc)
    del nb["_order"]
    for n in nb["notes"]:
        del n["_created"]
    if info:
        heads = set(range(len(doc.changes)))
        for c in doc.changes:
            for d in c["deps"]:
                heads.discard(d)
        nb["_info"] = {
            "blocks": len(doc.blocks),
            "versions": [b.version for b in doc.blocks],
            "changes": len(doc.changes),
            "opUnits": sum(b.opUnitCount for b in doc.blocks),
            "heads": sorted("%d@%s" % (doc.changes[h]["seq"], doc.changes[h]["replica"].hex()) for h in heads),
            "conflicts": conflicts(doc),
            "stateSection": [b.state is not None for b in doc.blocks],
        }
    json.dump(nb, sys.stdout, ensure_ascii=False, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
