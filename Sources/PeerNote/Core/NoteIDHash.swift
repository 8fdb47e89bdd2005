import Crypto

/// Derives the printable id of a note from the id of the op that created it: the first 8 bytes
/// of SHA-256 over the replica id (16 bytes, big-endian high then low) and the counter (4 bytes,
/// big-endian), as 16 lowercase hex digits (peernote(5), IDENTIFIERS AND DERIVED NUMBERS).
enum NoteIDHash {
    /// The id's first `digits` hex digits (16, the whole id, unless a shorter prefix is wanted:
    /// `NoteID.short`).
    static func hex(replica: ReplicaID, counter: UInt32, digits: Int = 16) -> String {
        // In fixed storage and written straight into the string: listing the ids of 20,000 notes
        // spent half its time building arrays around a 20-byte hash.
        let input = (replica.high.bigEndian, replica.low.bigEndian, counter.bigEndian)
        var hasher = SHA256()
        withUnsafeBytes(of: input) { hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: $0.prefix(20))) }
        let digest = hasher.finalize()
        return digest.withUnsafeBytes { hash in
            String(unsafeUninitializedCapacity: digits) { out in
                for i in 0 ..< digits {
                    let b = hash[i / 2]
                    out[i] = Hex.digit(i % 2 == 0 ? b >> 4 : b & 0x0F)
                }
                return digits
            }
        }
    }
}
