// DEFLATE, gzip and CRC-32 through the system libdeflate. This is the only file in
// PeerNote that imports CLibDeflate.
//
// libdeflate works on whole buffers: one call compresses or inflates all of its input, with no
// stream state kept between calls. Every call allocates its own compressor or decompressor and
// frees it before returning; there is no global state, so all entry points are safe to call
// concurrently.

import CLibDeflate

/// Why compressed data could not be inflated.
struct DeflateError: Error, Equatable, CustomStringConvertible {
    var message: String

    var description: String { "compressed data invalid: \(message)" }
}

/// Raw DEFLATE (RFC 1951, no zlib or gzip wrapper) via the system libdeflate.
///
/// `compress` writes one stream at libdeflate's level `level` (peernote(5), CANONICAL FORM), so
/// its output is deterministic for a given libdeflate version (another version, or another
/// DEFLATE implementation, may choose other bytes for the same input: never rely on compressed
/// bytes for hashing, hash the uncompressed bytes). `decompress` is strict: corrupt data,
/// truncated data, trailing bytes and output beyond its limit all throw.
enum Deflate {
    /// The compression level of the canonical form: the level that gives the smallest files
    /// whose time stays within what a merge may take. On notebooks (Benchmarks/NOTEBOOK.md has
    /// each level's figures), level 6 compresses to within 0.2% of zlib's level 6 in half its
    /// time; level 7 saves at most 0.4% for half as much time again; levels 8 and 9 save 1 to
    /// 3.5% but take 2 to 9 times as long, and levels 10 to 12 save 4 to 8% in 7 to 100 times
    /// as long: at 20,000 notes, 0.2 s or more for the save alone, more than the whole merge
    /// may take.
    static let level: Int32 = 6

    /// Compresses `input` as one raw DEFLATE stream.
    static func compress(_ input: [UInt8]) -> [UInt8] {
        compress(input[...])
    }

    /// Compresses `input` as one raw DEFLATE stream, at `level`.
    ///
    /// The output is written into libdeflate's bound (about the input's size, which no input
    /// can exceed) and returned in an array of its own size, or, below `scratchFrom` bytes, in
    /// the bound's array when it fills at least half of it. For an input of `scratchFrom` bytes or more the
    /// bound is scratch memory of its own (`ScratchMemory`), of which only the pages written are
    /// touched, given back when this returns: a compact save of a large notebook compresses a
    /// state section of megabytes to a fraction of that, and a bound taken from the heap would
    /// hold that much of the heap at the save's peak, and in the process for good.
    static func compress(_ input: ArraySlice<UInt8>, level: Int32 = Deflate.level) -> [UInt8] {
        // Only fails for a level outside 0...12 or when memory runs out.
        guard let compressor = libdeflate_alloc_compressor(level) else {
            preconditionFailure("libdeflate_alloc_compressor(\(level)) failed")
        }
        defer { libdeflate_free_compressor(compressor) }
        let bound = max(libdeflate_deflate_compress_bound(compressor, input.count), 16)
        return input.withUnsafeBufferPointer { inp in
            let run = { (out: UnsafeMutableRawBufferPointer) -> Int in
                // The bound is enough for any input: a result of 0 (no room) cannot happen.
                let count = libdeflate_deflate_compress(compressor, inp.baseAddress, inp.count, out.baseAddress, out.count)
                precondition(count > 0, "libdeflate_deflate_compress found no room in its own bound")
                return count
            }
            guard input.count >= scratchFrom else {
                let output = [UInt8](unsafeUninitializedCapacity: bound) { out, count in count = run(UnsafeMutableRawBufferPointer(out)) }
                // A result kept until the file is written would otherwise hold all the bound's
                // room unused: a copy of the bytes written is cheaper than the room.
                guard output.count < output.capacity / 2 else { return output }
                return [UInt8](unsafeUninitializedCapacity: output.count) { buffer, count in
                    count = output.withUnsafeBufferPointer { buffer.initialize(fromContentsOf: $0) }
                }
            }
            return ScratchMemory.with(capacity: bound) { out in
                let count = run(out)
                return [UInt8](UnsafeRawBufferPointer(rebasing: out[..<count]))
            }
        }
    }

    /// Inputs from this size on are compressed into scratch memory of their own (`compress`).
    static let scratchFrom = 1 << 20

    /// Inflates one raw DEFLATE stream.
    ///
    /// Throws if the data is corrupt or truncated, if any input remains after the end of the
    /// stream, or if the output would exceed `maxOutput` bytes. The output buffer never grows
    /// beyond `maxOutput`; when `maxOutput` is no more than `input` could inflate to (a size
    /// a file declares, checked against its compressed size), it is the one buffer allocated,
    /// and only the pages the output fills are touched.
    static func decompress(_ input: ArraySlice<UInt8>, maxOutput: Int) throws(DeflateError) -> [UInt8] {
        try inflate(input, maxOutput: maxOutput, what: "deflate") { d, inp, out, consumed, produced in
            libdeflate_deflate_decompress_ex(d, inp.baseAddress, inp.count, out.baseAddress, out.count, &consumed, &produced)
        }
    }

    /// Inflates one raw DEFLATE stream; see `decompress(_:maxOutput:)` for the slice form.
    static func decompress(_ input: [UInt8], maxOutput: Int) throws(DeflateError) -> [UInt8] {
        try decompress(input[...], maxOutput: maxOutput)
    }
}

/// gunzip (RFC 1952) for `.json.gz` inputs via the system libdeflate.
///
/// Accepts one or more concatenated gzip members (output is their concatenation), verifies each
/// member's CRC-32 and length trailer, and rejects trailing garbage, truncation and output
/// beyond `maxOutput` bytes.
enum Gzip {
    static func decompress(_ input: [UInt8], maxOutput: Int) throws(DeflateError) -> [UInt8] {
        try decompress(input[...], maxOutput: maxOutput)
    }

    static func decompress(_ input: ArraySlice<UInt8>, maxOutput: Int) throws(DeflateError) -> [UInt8] {
        var out: [UInt8] = []
        var rest = input
        repeat {
            var consumed = 0
            let member = try inflate(rest, maxOutput: maxOutput - out.count, what: "gzip", stopsEarly: true) { d, inp, o, used, produced in
                libdeflate_gzip_decompress_ex(d, inp.baseAddress, inp.count, o.baseAddress, o.count, &used, &produced)
            } consumed: { consumed = $0 }
            out += member
            rest = rest.dropFirst(consumed)
        } while !rest.isEmpty
        return out
    }
}

/// CRC-32 (ISO-HDLC / zlib / gzip / PNG polynomial) via libdeflate's `libdeflate_crc32`.
///
/// `checksum(b, initial: checksum(a)) == checksum(a + b)`; the checksum of no bytes is 0.
enum CRC32 {
    static func checksum(_ bytes: some Collection<UInt8>, initial: UInt32 = 0) -> UInt32 {
        if let crc = bytes.withContiguousStorageIfAvailable({ update(initial, $0) }) {
            return crc
        }
        return Array(bytes).withUnsafeBufferPointer { update(initial, $0) }
    }

    private static func update(_ crc: UInt32, _ buffer: UnsafeBufferPointer<UInt8>) -> UInt32 {
        guard let start = buffer.baseAddress else { return crc }
        return libdeflate_crc32(crc, start, buffer.count)
    }
}

// MARK: - Internals

/// The most bytes `count` compressed bytes can inflate to: DEFLATE codes a 258-byte match in no
/// less than 2 bits (1,032 bytes a byte), and a few bytes of header and end.
private func mostInflated(from count: Int) -> Int {
    let (product, overflow) = count.multipliedReportingOverflow(by: 1_032)
    return overflow ? Int.max : product.addingReportingOverflow(1 << 10).overflow ? Int.max : product + (1 << 10)
}

/// One libdeflate inflation call: (decompressor, input, output room, input used, output made).
private typealias InflateCall = (
    OpaquePointer, UnsafeBufferPointer<UInt8>, UnsafeMutableBufferPointer<UInt8>, inout Int, inout Int
) -> libdeflate_result

/// Inflates the stream at the start of `input` into at most `maxOutput` bytes. A stream that
/// ends before `input` does is refused (trailing bytes) unless `stopsEarly`, where `consumed`
/// is told how much of `input` it took.
///
/// The output buffer is `maxOutput` bytes when `input` could inflate to that much, else a
/// guess that is doubled, and the stream inflated again, while libdeflate finds it too small.
private func inflate(
    _ input: ArraySlice<UInt8>, maxOutput: Int, what: String, stopsEarly: Bool = false,
    _ call: InflateCall, consumed report: (Int) -> Void = { _ in }
) throws(DeflateError) -> [UInt8] {
    guard maxOutput >= 0 else {
        throw DeflateError(message: "\(what): negative output limit \(maxOutput)")
    }
    guard let decompressor = libdeflate_alloc_decompressor() else {
        throw DeflateError(message: "\(what): out of memory for a decompressor")
    }
    defer { libdeflate_free_decompressor(decompressor) }
    let ceiling = min(maxOutput, mostInflated(from: input.count))
    var room = ceiling
    if maxOutput > ceiling {
        // No declared size to trust: start from a guess based on the input size.
        let guess = input.count.multipliedReportingOverflow(by: 4)
        room = min(ceiling, max(1 << 12, guess.overflow ? Int.max : guess.partialValue))
    }
    while true {
        var result = LIBDEFLATE_SUCCESS
        var used = 0
        let out = input.withUnsafeBufferPointer { inp in
            [UInt8](unsafeUninitializedCapacity: room) { buffer, count in
                var produced = 0
                result = call(decompressor, inp, buffer, &used, &produced)
                count = result == LIBDEFLATE_SUCCESS ? produced : 0
            }
        }
        switch result {
        case LIBDEFLATE_SUCCESS:
            if used < input.count && !stopsEarly {
                throw DeflateError(message: "\(what): \(input.count - used) trailing bytes after the end of the stream")
            }
            report(used)
            return out
        case LIBDEFLATE_INSUFFICIENT_SPACE:
            guard room < ceiling else {
                throw DeflateError(message: "\(what): output exceeds the limit of \(maxOutput) bytes")
            }
            room = room > ceiling / 2 ? ceiling : room * 2
        default:
            throw DeflateError(message: "\(what): corrupt or truncated data")
        }
    }
}
