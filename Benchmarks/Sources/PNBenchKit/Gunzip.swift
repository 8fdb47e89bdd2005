import CLibDeflateBench

/// gunzip (RFC 1952, one or more members) through the system libdeflate, for the `.json.gz`
/// traces.
enum Gunzip {
    /// Why a gzip stream could not be inflated; `offset` is the input byte offset of the member
    /// that failed.
    struct Failure: Error, CustomStringConvertible {
        var offset: Int
        var message: String
        var description: String { "offset \(offset): \(message)" }
    }

    /// The decompressed bytes of `input`. Corrupt or truncated data, trailing garbage
    /// and output beyond `maxOutput` bytes throw.
    static func decompress(_ input: [UInt8], maxOutput: Int = 1 << 30) throws(Failure) -> [UInt8] {
        guard !input.isEmpty else { throw Failure(offset: 0, message: "empty file, not gzip data") }
        guard let decompressor = libdeflate_alloc_decompressor() else { throw Failure(offset: 0, message: "out of memory") }
        defer { libdeflate_free_decompressor(decompressor) }
        var output: [UInt8] = []
        var offset = 0
        while offset < input.count {
            // Each member's last 4 bytes hold its size (mod 2^32); libdeflate is given a buffer
            // that grows until the member fits.
            var room = min(maxOutput - output.count, max(1 << 16, (input.count - offset) * 8))
            while true {
                var used = 0, made = 0
                var status = LIBDEFLATE_SUCCESS
                let member = input.withUnsafeBufferPointer { inp in
                    [UInt8](unsafeUninitializedCapacity: room) { out, count in
                        status = libdeflate_gzip_decompress_ex(decompressor, inp.baseAddress.map { $0 + offset }, inp.count - offset,
                                                               out.baseAddress, out.count, &used, &made)
                        count = status == LIBDEFLATE_SUCCESS ? made : 0
                    }
                }
                if status == LIBDEFLATE_SUCCESS {
                    output += member
                    offset += used
                    break
                }
                guard status == LIBDEFLATE_INSUFFICIENT_SPACE else {
                    throw Failure(offset: offset, message: "corrupt or truncated gzip data")
                }
                guard room < maxOutput - output.count else {
                    throw Failure(offset: offset, message: "decompressed data exceeds \(maxOutput) bytes")
                }
                room = min(maxOutput - output.count, room * 2)
            }
        }
        return output
    }
}
