// LEB128 varints (minimal form only: decoders reject any other), and the byte writer and
// reader that write and read them. A `base` parameter is the absolute file offset of the
// first byte of the bytes passed alongside it; every `ColumnError.offset` is absolute in
// the file (see Columns.swift).

// MARK: - LEB128 primitives

/// LEB128 varint primitives shared by `ByteWriter`, `ByteReader` and the
/// column codecs.
///
/// Unsigned values use ULEB128; signed values use two's-complement SLEB128 (as
/// in DWARF and Automerge, not zigzag). Writers always emit the minimal
/// encoding; readers accept at most 10 bytes, reject values that do not fit in
/// 64 bits, reject non-minimal encodings (e.g. `80 00` for 0) and reject
/// truncation. On failure the index is left unchanged.
enum LEB128 {
    /// Appends the minimal ULEB128 encoding of `value`.
    @inline(__always)
    static func appendUnsigned(_ value: UInt64, to out: inout [UInt8]) {
        var v = value
        while v >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        out.append(UInt8(truncatingIfNeeded: v))
    }

    /// Appends the minimal SLEB128 (two's complement) encoding of `value`.
    @inline(__always)
    static func appendSigned(_ value: Int64, to out: inout [UInt8]) {
        var v = value
        while true {
            let byte = UInt8(truncatingIfNeeded: v) & 0x7F
            v >>= 7  // arithmetic shift keeps the sign
            if (v == 0 && byte & 0x40 == 0) || (v == -1 && byte & 0x40 != 0) {
                out.append(byte)
                return
            }
            out.append(byte | 0x80)
        }
    }

    /// Reads a ULEB128 value from `p` at `i`, advancing `i` past it.
    /// `base` is the absolute offset of `p[0]`.
    @inline(__always)
    static func readUnsigned(
        _ p: UnsafeBufferPointer<UInt8>, _ i: inout Int, base: Int
    ) throws(ColumnError) -> UInt64 {
        let start = i
        guard start < p.count else {
            throw ColumnError(offset: base + start, message: "truncated LEB128 (no bytes left)")
        }
        let first = p[start]
        if first < 0x80 {  // fast path: one byte
            i = start + 1
            return UInt64(first)
        }
        var result = UInt64(first & 0x7F)
        var shift: UInt64 = 7
        var j = start + 1
        while true {
            guard j < p.count else {
                throw ColumnError(offset: base + start, message: "truncated LEB128")
            }
            let b = p[j]
            j += 1
            if shift == 63 {
                // Tenth byte: only bit 63 remains, so it must be exactly 0x01
                // (0x00 would be non-minimal; anything else overflows or continues).
                guard b == 0x01 else {
                    throw ColumnError(
                        offset: base + start,
                        message: b == 0 ? "non-minimal LEB128" : "LEB128 value exceeds 64 bits")
                }
                i = j
                return result | (1 << 63)
            }
            result |= UInt64(b & 0x7F) << shift
            if b < 0x80 {
                guard b != 0 else {
                    throw ColumnError(offset: base + start, message: "non-minimal LEB128")
                }
                i = j
                return result
            }
            shift += 7
        }
    }

    /// Reads an SLEB128 value from `p` at `i`, advancing `i` past it.
    /// `base` is the absolute offset of `p[0]`.
    @inline(__always)
    static func readSigned(
        _ p: UnsafeBufferPointer<UInt8>, _ i: inout Int, base: Int
    ) throws(ColumnError) -> Int64 {
        let start = i
        guard start < p.count else {
            throw ColumnError(offset: base + start, message: "truncated signed LEB128 (no bytes left)")
        }
        let first = p[start]
        if first < 0x80 {  // fast path: one byte, sign-extend bit 6
            i = start + 1
            return Int64(Int8(bitPattern: first << 1) >> 1)
        }
        var result = UInt64(first & 0x7F)
        var shift: UInt64 = 7
        var prev = first
        var j = start + 1
        while true {
            guard j < p.count else {
                throw ColumnError(offset: base + start, message: "truncated signed LEB128")
            }
            let b = p[j]
            j += 1
            let isFinal = b < 0x80
            if shift == 63 {
                // Tenth byte holds bit 63 plus its sign extension: 0x00 or 0x7F.
                guard b == 0x00 || b == 0x7F else {
                    throw ColumnError(offset: base + start, message: "signed LEB128 value exceeds 64 bits")
                }
            }
            if isFinal {
                // A last byte that only repeats the previous byte's sign is redundant.
                if (b == 0x00 && prev & 0x40 == 0) || (b == 0x7F && prev & 0x40 != 0) {
                    throw ColumnError(offset: base + start, message: "non-minimal signed LEB128")
                }
                if shift == 63 {
                    result |= UInt64(b & 1) << 63
                } else {
                    result |= UInt64(b & 0x7F) << shift
                    if b & 0x40 != 0 {
                        result |= UInt64.max << (shift + 7)
                    }
                }
                i = j
                return Int64(bitPattern: result)
            }
            result |= UInt64(b & 0x7F) << shift
            prev = b
            shift += 7
        }
    }
}

// MARK: - ByteWriter / ByteReader

/// An append-only byte buffer with varint writers.
///
/// Invariant: `bytes` is exactly what was appended, in order; varints are
/// written in their minimal form.
struct ByteWriter {
    var bytes: [UInt8] = []

    init() {}

    /// Appends an unsigned LEB128 varint.
    mutating func uleb(_ v: UInt64) { LEB128.appendUnsigned(v, to: &bytes) }

    /// Appends a signed (two's complement, not zigzag) LEB128 varint.
    mutating func sleb(_ v: Int64) { LEB128.appendSigned(v, to: &bytes) }

    /// Appends raw bytes.
    mutating func append(_ b: [UInt8]) { bytes.append(contentsOf: b) }

    /// Appends raw bytes.
    mutating func append(_ b: ArraySlice<UInt8>) { bytes.append(contentsOf: b) }
}

/// A forward cursor over a slice of a file that reads varints and byte runs.
///
/// `base` is the absolute file offset of the slice's first byte, so `position`
/// and every thrown `ColumnError.offset` are absolute. Invariant: the cursor
/// stays within the slice; a read that throws does not move it.
struct ByteReader {
    private let data: ArraySlice<UInt8>
    private let base: Int
    /// Index into `data` (slice indices) of the next unread byte.
    private var index: Int

    /// - Parameters:
    ///   - bytes: the bytes to read; its indices may be anything.
    ///   - base: absolute file offset of `bytes.first`.
    init(_ bytes: ArraySlice<UInt8>, base: Int) {
        self.data = bytes
        self.base = base
        self.index = bytes.startIndex
    }

    /// - Parameters:
    ///   - bytes: the bytes to read.
    ///   - base: absolute file offset of `bytes[0]`.
    init(_ bytes: [UInt8], base: Int) {
        self.init(bytes[...], base: base)
    }

    /// True when every byte has been consumed.
    var isAtEnd: Bool { index == data.endIndex }

    /// Absolute file offset of the next unread byte.
    var position: Int { base + (index - data.startIndex) }

    /// Number of bytes not yet consumed.
    var remaining: Int { data.endIndex - index }

    /// Reads an unsigned LEB128 varint (at most 10 bytes, minimal, ≤ 64 bits).
    mutating func uleb() throws(ColumnError) -> UInt64 {
        var i = index - data.startIndex
        let base = self.base
        let v = try data.withUnsafeBufferPointer { (p) throws(ColumnError) -> UInt64 in
            try LEB128.readUnsigned(p, &i, base: base)
        }
        index = data.startIndex + i
        return v
    }

    /// Reads a signed (two's complement) LEB128 varint (at most 10 bytes, minimal).
    mutating func sleb() throws(ColumnError) -> Int64 {
        var i = index - data.startIndex
        let base = self.base
        let v = try data.withUnsafeBufferPointer { (p) throws(ColumnError) -> Int64 in
            try LEB128.readSigned(p, &i, base: base)
        }
        index = data.startIndex + i
        return v
    }

    /// Reads the next `n` bytes. The returned slice shares indices with the
    /// reader's input; its absolute offset is `position` before the call.
    mutating func bytes(_ n: Int) throws(ColumnError) -> ArraySlice<UInt8> {
        guard n >= 0 else {
            throw ColumnError(offset: position, message: "negative byte count \(n)")
        }
        guard n <= remaining else {
            throw ColumnError(
                offset: position,
                message: "need \(n) bytes but only \(remaining) remain")
        }
        let slice = data[index..<(index + n)]
        index += n
        return slice
    }
}
