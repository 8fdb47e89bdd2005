import Crypto

/// Derives the printable id of a note from the id of the op that created it.
enum NoteIDHash {
    static func hex(replica: ReplicaID, counter: UInt32) -> String {
        var input = replica.bytes
        for shift in stride(from: 24, through: 0, by: -8) { input.append(UInt8(truncatingIfNeeded: counter >> UInt32(shift))) }
        return Hex.string(SHA256.hash(data: input).prefix(8))
    }
}
