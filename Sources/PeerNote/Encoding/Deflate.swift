// DEFLATE, gzip and CRC-32 through the system zlib. This is the only file in
// PeerNote that imports CZlib.
//
// Every call uses its own heap-allocated z_stream (zlib checks that the stream
// does not move between calls, so it must not live in a Swift `var` passed with
// `&`), and always ends it with deflateEnd/inflateEnd. There is no global state,
// so all entry points are safe to call concurrently.

import CZlib

/// Why compressed data could not be inflated (or zlib could not be set up).
struct DeflateError: Error, Equatable, CustomStringConvertible {
    var message: String

    var description: String { "compressed data invalid: \(message)" }
}

/// Raw DEFLATE (RFC 1951, no zlib or gzip wrapper) via the system zlib.
///
/// `compress` uses level 6, windowBits -15, memLevel 8 and the default
/// strategy, in two parts for inputs of more than 64 KiB (peernote(5), CANONICAL FORM; level 9 took 14 s on a 35 MB notebook of
/// repetitive text, level 6 about 2 s for 1.7% more bytes), so its output is deterministic for a given zlib build (it may
/// differ across zlib implementations or versions, so never rely on compressed
/// bytes for hashing — hash the uncompressed bytes). `decompress` is strict:
/// corrupt data, truncated data, trailing bytes and oversized output all throw.
enum Deflate {
    /// The compression level of the canonical form.
    static let level: Int32 = 6

    /// Inputs longer than this are compressed in two parts (`compress`).
    static let partThreshold = 1 << 16

    /// How much of the first part the second part's compressor is given as preset dictionary:
    /// a whole DEFLATE window, so that its matches reach back as one stream's would.
    static let windowSize = 1 << 15

    /// Compresses `input` as one raw DEFLATE stream (see `compress(_:concurrent:)`).
    static func compress(_ input: [UInt8], concurrent: Bool = false) -> [UInt8] {
        compress(input[...], concurrent: concurrent)
    }

    /// Compresses `input` as one raw DEFLATE stream. An input of more than `partThreshold` bytes
    /// is compressed in two parts, as pigz does, so that two threads can share the work: its
    /// first `count / 2` bytes end with a sync flush (an empty stored block, byte-aligned, not
    /// final), and the rest is compressed by a second compressor given the first part's last
    /// `windowSize` bytes as preset dictionary, and finished; the two outputs, one after the
    /// other, are one stream that inflates to `input`. (peernote(5), CANONICAL FORM.) With
    /// `concurrent`, the second part is compressed on another thread; the bytes are the same.
    static func compress(_ input: ArraySlice<UInt8>, concurrent: Bool = false) -> [UInt8] {
        guard input.count > partThreshold else { return compressPart(input, dictionary: [], finish: true) }
        let half = input.startIndex + input.count / 2
        let first = input[..<half], second = input[half...]
        let dictionary = input[max(input.startIndex, half - windowSize) ..< half]
        let (a, b) = concurrent
            ? Concurrently.run({ compressPart(first, dictionary: [], finish: false) }, alongside: { compressPart(second, dictionary: dictionary, finish: true) })
            : (compressPart(first, dictionary: [], finish: false), compressPart(second, dictionary: dictionary, finish: true))
        return a + b
    }

    /// `input` as one stream from one compressor, whatever its size (to compare with `compress`).
    static func compressWhole(_ input: ArraySlice<UInt8>) -> [UInt8] {
        compressPart(input, dictionary: [], finish: true)
    }

    /// `input` compressed by a new compressor primed with `dictionary`, ending with the final
    /// block (`finish`) or with a sync flush.
    private static func compressPart(_ input: ArraySlice<UInt8>, dictionary: ArraySlice<UInt8>, finish: Bool) -> [UInt8] {
        let stream = ZStream()
        defer { stream.release() }
        let rc = deflateInit2_(
            stream.pointer, Deflate.level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY,
            ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        // Only fails for bad parameters, a mismatched zlib build or out of memory.
        precondition(rc == Z_OK, "deflateInit2_ failed (\(rc))")
        defer { deflateEnd(stream.pointer) }
        if !dictionary.isEmpty {
            let rc = dictionary.withUnsafeBufferPointer { d in
                deflateSetDictionary(stream.pointer, d.baseAddress, uInt(d.count))
            }
            precondition(rc == Z_OK, "deflateSetDictionary failed (\(rc))")
        }

        // deflateBound is for a finished stream; a sync flush adds an empty stored block.
        let bound = Int(deflateBound(stream.pointer, uLong(input.count))) + 16
        var out = [UInt8](repeating: 0, count: max(bound, 64))
        var produced = 0
        input.withUnsafeBufferPointer { inp in
            var consumed = 0
            while true {
                if produced == out.count {  // not expected with deflateBound, but be safe
                    out.append(contentsOf: repeatElement(0, count: out.count))
                }
                let inChunk = min(inp.count - consumed, zlibChunkLimit)
                let isLast = consumed + inChunk == inp.count
                stream.pointer.pointee.next_in = inp.baseAddress.map { UnsafeMutablePointer(mutating: $0 + consumed) }
                stream.pointer.pointee.avail_in = UInt32(inChunk)
                let (rc, outLeft) = out.withUnsafeMutableBufferPointer { o -> (Int32, Int) in
                    let outChunk = min(o.count - produced, zlibChunkLimit)
                    stream.pointer.pointee.next_out = o.baseAddress.map { $0 + produced }
                    stream.pointer.pointee.avail_out = UInt32(outChunk)
                    let rc = deflate(stream.pointer, !isLast ? Z_NO_FLUSH : finish ? Z_FINISH : Z_SYNC_FLUSH)
                    produced += outChunk - Int(stream.pointer.pointee.avail_out)
                    return (rc, Int(stream.pointer.pointee.avail_out))
                }
                consumed += inChunk - Int(stream.pointer.pointee.avail_in)
                if rc == Z_STREAM_END { break }
                precondition(rc == Z_OK || rc == Z_BUF_ERROR, "deflate failed (\(rc))")
                // A flush is complete once all input is taken and room was left over.
                if !finish && isLast && stream.pointer.pointee.avail_in == 0 && outLeft > 0 { break }
            }
        }
        return trimmed(out, to: produced)
    }

    /// Inflates one raw DEFLATE stream.
    ///
    /// Throws if the data is corrupt or truncated, if any input remains after
    /// the end of the stream, or as soon as the output would exceed
    /// `maxOutput` bytes. The output buffer never grows beyond `maxOutput`.
    static func decompress(_ input: ArraySlice<UInt8>, maxOutput: Int) throws(DeflateError) -> [UInt8] {
        try inflateAll(input, windowBits: -15, maxOutput: maxOutput, multiMember: false, what: "deflate")
    }

    /// Inflates one raw DEFLATE stream; see `decompress(_:maxOutput:)` for the slice form.
    static func decompress(_ input: [UInt8], maxOutput: Int) throws(DeflateError) -> [UInt8] {
        try decompress(input[...], maxOutput: maxOutput)
    }
}

/// gunzip (RFC 1952) for `.json.gz` inputs via the system zlib.
///
/// Accepts one or more concatenated gzip members (output is their
/// concatenation), verifies each member's CRC-32 and length trailer, and
/// rejects trailing garbage, truncation and output beyond `maxOutput` bytes.
enum Gzip {
    static func decompress(_ input: [UInt8], maxOutput: Int) throws(DeflateError) -> [UInt8] {
        try decompress(input[...], maxOutput: maxOutput)
    }

    static func decompress(_ input: ArraySlice<UInt8>, maxOutput: Int) throws(DeflateError) -> [UInt8] {
        try inflateAll(input, windowBits: 15 + 16, maxOutput: maxOutput, multiMember: true, what: "gzip")
    }
}

/// CRC-32 (ISO-HDLC / zlib / gzip / PNG polynomial) via zlib's `crc32()`.
///
/// `checksum(b, initial: checksum(a)) == checksum(a + b)`; the checksum of no
/// bytes is 0.
enum CRC32 {
    static func checksum(_ bytes: some Collection<UInt8>, initial: UInt32 = 0) -> UInt32 {
        if let crc = bytes.withContiguousStorageIfAvailable({ update(initial, $0) }) {
            return crc
        }
        return Array(bytes).withUnsafeBufferPointer { update(initial, $0) }
    }

    private static func update(_ crc: UInt32, _ buffer: UnsafeBufferPointer<UInt8>) -> UInt32 {
        guard let start = buffer.baseAddress else { return crc }
        var value = uLong(crc)
        var offset = 0
        while offset < buffer.count {
            let chunk = min(buffer.count - offset, zlibChunkLimit)
            value = crc32(value, start + offset, uInt(chunk))
            offset += chunk
        }
        return UInt32(truncatingIfNeeded: value)
    }
}

// MARK: - Internals

/// Largest byte count handed to zlib in one call (its counters are 32-bit).
private let zlibChunkLimit = 1 << 30

/// A heap-allocated z_stream, so its address is stable for zlib's whole use.
private struct ZStream {
    let pointer: UnsafeMutablePointer<z_stream>

    init() {
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: z_stream())
    }

    func release() {
        pointer.deinitialize(count: 1)
        pointer.deallocate()
    }
}

/// Inflates `input` with the given windowBits, enforcing `maxOutput`.
/// With `multiMember`, input left after a stream end starts another stream.
private func inflateAll(
    _ input: ArraySlice<UInt8>, windowBits: Int32, maxOutput: Int, multiMember: Bool, what: String
) throws(DeflateError) -> [UInt8] {
    guard maxOutput >= 0 else {
        throw DeflateError(message: "\(what): negative output limit \(maxOutput)")
    }
    let stream = ZStream()
    defer { stream.release() }
    let rc = inflateInit2_(stream.pointer, windowBits, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
    guard rc == Z_OK else {
        throw DeflateError(message: "\(what): inflateInit2_ failed (\(rc))")
    }
    defer { inflateEnd(stream.pointer) }

    // Start from a guess based on the input size (grown geometrically later),
    // never above maxOutput.
    let guess = input.count.multipliedReportingOverflow(by: 3)
    var out = [UInt8](
        repeating: 0, count: min(maxOutput, max(4096, guess.overflow ? Int.max : guess.partialValue)))
    var produced = 0

    try input.withUnsafeBufferPointer { (inp) throws(DeflateError) in
        var consumed = 0
        var probe: UInt8 = 0
        while true {
            if produced == out.count && out.count < maxOutput {
                // Grow geometrically, capped at maxOutput; reserve exactly.
                let target = out.count > maxOutput / 2 ? maxOutput : max(4096, out.count * 2)
                out.reserveCapacity(target)
                out.append(contentsOf: repeatElement(0, count: target - out.count))
            }
            let inChunk = min(inp.count - consumed, zlibChunkLimit)
            stream.pointer.pointee.next_in = inp.baseAddress.map { UnsafeMutablePointer(mutating: $0 + consumed) }
            stream.pointer.pointee.avail_in = UInt32(inChunk)

            var outChunk: Int
            var rc: Int32
            var madeOutput: Int
            if produced == out.count {
                // At maxOutput: inflate into a 1-byte probe to see whether more output exists.
                outChunk = 1
                rc = withUnsafeMutablePointer(to: &probe) { p in
                    stream.pointer.pointee.next_out = p
                    stream.pointer.pointee.avail_out = 1
                    return inflate(stream.pointer, Z_NO_FLUSH)
                }
                madeOutput = outChunk - Int(stream.pointer.pointee.avail_out)
                if madeOutput > 0 {
                    throw DeflateError(message: "\(what): output exceeds the limit of \(maxOutput) bytes")
                }
            } else {
                outChunk = 0
                rc = out.withUnsafeMutableBufferPointer { o -> Int32 in
                    outChunk = min(o.count - produced, zlibChunkLimit)
                    stream.pointer.pointee.next_out = o.baseAddress.map { $0 + produced }
                    stream.pointer.pointee.avail_out = UInt32(outChunk)
                    return inflate(stream.pointer, Z_NO_FLUSH)
                }
                madeOutput = outChunk - Int(stream.pointer.pointee.avail_out)
                produced += madeOutput
            }
            let usedInput = inChunk - Int(stream.pointer.pointee.avail_in)
            consumed += usedInput
            let outputRoomLeft = Int(stream.pointer.pointee.avail_out) > 0

            switch rc {
            case Z_STREAM_END:
                if consumed == inp.count { return }
                guard multiMember else {
                    throw DeflateError(
                        message: "\(what): \(inp.count - consumed) trailing bytes after the end of the stream")
                }
                guard inflateReset(stream.pointer) == Z_OK else {
                    throw DeflateError(message: "\(what): inflateReset failed")
                }
            case Z_OK, Z_BUF_ERROR:
                // inflate stops early only when it runs out of input or output.
                // Output room left with all input consumed means the stream is cut short.
                if outputRoomLeft && consumed == inp.count {
                    throw DeflateError(message: "\(what): truncated data (stream ends after \(inp.count) bytes)")
                }
                if usedInput == 0 && madeOutput == 0 && outputRoomLeft {
                    throw DeflateError(message: "\(what): inflate made no progress")
                }
            case Z_NEED_DICT:
                throw DeflateError(message: "\(what): stream requires a preset dictionary")
            case Z_DATA_ERROR:
                throw DeflateError(message: "\(what): corrupt data (\(zlibMessage(stream.pointer) ?? "data error"))")
            case Z_MEM_ERROR:
                throw DeflateError(message: "\(what): zlib out of memory")
            default:
                throw DeflateError(message: "\(what): zlib error \(rc) (\(zlibMessage(stream.pointer) ?? "unknown"))")
            }
        }
    }
    return trimmed(out, to: produced)
}

/// The first `count` bytes of `buffer`, copied into a right-sized array when
/// keeping the oversized buffer would waste more than a quarter of it.
private func trimmed(_ buffer: [UInt8], to count: Int) -> [UInt8] {
    if buffer.count - count > buffer.count / 4 {
        return Array(buffer[..<count])
    }
    var out = buffer
    out.removeSubrange(count...)
    return out
}

private func zlibMessage(_ stream: UnsafeMutablePointer<z_stream>) -> String? {
    guard let msg = stream.pointee.msg else { return nil }
    return String(cString: msg)
}
