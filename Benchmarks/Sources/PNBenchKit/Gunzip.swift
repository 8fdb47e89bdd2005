import CZlibBench

/// gunzip (RFC 1952, one or more members) through the system zlib, for the `.json.gz` traces.
enum Gunzip {
    /// Why a gzip stream could not be inflated; `offset` is the input byte offset reached.
    struct Failure: Error, CustomStringConvertible {
        var offset: Int
        var message: String
        var description: String { "offset \(offset): \(message)" }
    }

    /// The decompressed bytes of `input`. Corrupt or truncated data, trailing garbage
    /// and output beyond `maxOutput` bytes throw.
    static func decompress(_ input: [UInt8], maxOutput: Int = 1 << 30) throws(Failure) -> [UInt8] {
        guard !input.isEmpty else { throw Failure(offset: 0, message: "empty file, not gzip data") }
        guard input.count < Int(UInt32.max) else { throw Failure(offset: 0, message: "input larger than 4 GiB") }
        // zlib requires the z_stream not to move between calls: keep it on the heap.
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        defer { stream.deinitialize(count: 1); stream.deallocate() }
        guard inflateInit2_(stream, 15 + 16, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw Failure(offset: 0, message: "zlib could not be initialised")
        }
        defer { inflateEnd(stream) }

        var output: [UInt8] = []
        output.reserveCapacity(min(maxOutput, input.count * 8))
        var chunk = [UInt8](repeating: 0, count: 1 << 18)
        let result: Result<Void, Failure> = input.withUnsafeBufferPointer { inp in
            guard let base = inp.baseAddress else { return .failure(Failure(offset: 0, message: "empty input")) }
            stream.pointee.next_in = UnsafeMutablePointer(mutating: base)
            stream.pointee.avail_in = UInt32(inp.count)
            while true {
                let (rc, produced) = chunk.withUnsafeMutableBufferPointer { c -> (Int32, Int) in
                    stream.pointee.next_out = c.baseAddress
                    stream.pointee.avail_out = UInt32(c.count)
                    let rc = inflate(stream, Z_NO_FLUSH)
                    return (rc, c.count - Int(stream.pointee.avail_out))
                }
                let offset = inp.count - Int(stream.pointee.avail_in)
                if output.count + produced > maxOutput {
                    return .failure(Failure(offset: offset, message: "decompressed data exceeds \(maxOutput) bytes"))
                }
                output.append(contentsOf: chunk[..<produced])
                switch rc {
                case Z_STREAM_END:
                    if stream.pointee.avail_in == 0 { return .success(()) }
                    // Another gzip member follows.
                    guard inflateReset(stream) == Z_OK else {
                        return .failure(Failure(offset: offset, message: "zlib could not be reset"))
                    }
                case Z_OK:
                    continue
                case Z_BUF_ERROR:
                    if stream.pointee.avail_in == 0 || produced == 0 {
                        return .failure(Failure(offset: offset, message: "truncated gzip data"))
                    }
                default:
                    let detail = stream.pointee.msg.map { String(cString: $0) } ?? "zlib error \(rc)"
                    return .failure(Failure(offset: offset, message: "corrupt gzip data (\(detail))"))
                }
            }
        }
        try result.get()
        return output
    }
}
