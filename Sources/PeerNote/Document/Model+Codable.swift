#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The reader's values are Codable, so that an app can keep a snapshot (state restoration, a
// cache, a widget's timeline), hand one to another process or show one in a preview. A
// snapshot is a plain value: decoding it gives the same `Notebook`, not a document; the
// document itself is saved and read with `Document.save` and `Document.load`.
//
// The conformances of `Note`, `Notebook`, `Conflict`, `ConflictValue`, `Attribution`, `NoteID`
// and `ChangeID` are declared with the types (synthesized); `ReplicaID`'s is here.
// Ids are encoded so that they decode to the same id: a replica as its 32 hex digits, a note id
// and a change id as their replica and counter (`seq` for a change) (a note id's `description`, 16 digits of a
// hash, names it on a command line but does not give it back). Dates and UUIDs are as the
// encoder's strategies encode them; strings keep their exact scalars.

extension ReplicaID: Codable {
    /// Decodes 32 hex digits (either case), as `description` writes them.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let replica = ReplicaID(hex: text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "a replica id is 32 hex digits, not \"\(text)\"")
        }
        self = replica
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    /// The replica whose `description` is `hex` (32 hex digits, either case); nil otherwise.
    public init?(hex: String) {
        let utf8 = Array(hex.utf8)
        guard utf8.count == 32 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        var i = 0
        while i < 32 {
            guard let high = Self.nibble(utf8[i]), let low = Self.nibble(utf8[i + 1]) else { return nil }
            bytes.append(high << 4 | low)
            i += 2
        }
        self.init(bytes: bytes)
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0") ... UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a") ... UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A") ... UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

