#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The globally unique id of one editing session (a replica): 16 random bytes.
///
/// A fresh replica id is drawn every time a document is opened for editing, so
/// two copies of one file edited on two machines never mint the same change id.
/// Replica ids order lexicographically by their bytes; that order breaks ties
/// between concurrent edits identically on every copy.
public struct ReplicaID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var high: UInt64
    public var low: UInt64

    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// A new random replica id.
    public static func random() -> ReplicaID {
        var rng = SystemRandomNumberGenerator()
        return ReplicaID(high: rng.next(), low: rng.next())
    }

    /// Reads 16 big-endian bytes; nil when `bytes` is not exactly 16 long.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 16 else { return nil }
        var h: UInt64 = 0
        var l: UInt64 = 0
        for (i, b) in bytes.enumerated() {
            if i < 8 { h = h << 8 | UInt64(b) } else { l = l << 8 | UInt64(b) }
        }
        self.init(high: h, low: l)
    }

    public var bytes: [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(16)
        for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: high >> UInt64(shift))) }
        for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: low >> UInt64(shift))) }
        return out
    }

    public static func < (a: ReplicaID, b: ReplicaID) -> Bool {
        (a.high, a.low) < (b.high, b.low)
    }

    /// 32 lowercase hex digits.
    public var description: String { Hex.string(bytes) }

    /// The first 8 hex digits, for display.
    public var short: String { String(description.prefix(8)) }
}

/// An op unit's id inside one `OpLog`: the replica's index in that log's
/// replica table (`agent`) and the replica's op counter.
///
/// Local ids are only meaningful within the op log that made them; on the
/// wire and across logs they are translated through the replica table.
/// `LocalID.none` stands for "no item" (the start or end of a list).
struct LocalID: Hashable, Comparable, Sendable {
    var agent: UInt32
    var counter: UInt32

    static let none = LocalID(agent: .max, counter: .max)
    var isNone: Bool { agent == .max }
    /// An insert's origin that its block does not store (format version 3: it follows from the
    /// note body's structure). Only between reading such a block's ops and building its bodies,
    /// which replaces every one (`OpLog.buildBodies(from:)`); never equal to a real id or `none`.
    static let unstated = LocalID(agent: .max - 1, counter: .max)
    var isUnstated: Bool { self == .unstated }

    func advanced(by n: Int) -> LocalID {
        LocalID(agent: agent, counter: UInt32(truncatingIfNeeded: Int(counter) + n))
    }

    static func < (a: LocalID, b: LocalID) -> Bool { (a.agent, a.counter) < (b.agent, b.counter) }
}

/// The id of a change as it goes on the wire: the replica that made it and the
/// change's sequence number within that replica (1, 2, 3, ... without gaps).
public struct ChangeID: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    public var replica: ReplicaID
    public var seq: UInt32

    public init(replica: ReplicaID, seq: UInt32) {
        self.replica = replica
        self.seq = seq
    }

    public static func < (a: ChangeID, b: ChangeID) -> Bool { (a.replica, a.seq) < (b.replica, b.seq) }

    /// `SEQ@REPLICA` with the replica's first 8 hex digits, e.g. `12@3fa9c1d0`.
    public var description: String { "\(seq)@\(replica.short)" }
    /// `SEQ@REPLICA` with all 32 hex digits.
    public var fullDescription: String { "\(seq)@\(replica)" }
}

/// A note's identity: the id of the operation that created it. Stable across
/// copies and merges.
///
/// Its text form (`description`) is 16 hex digits of a SHA-256 over the
/// creating replica and counter, so that, like git commit ids, any short
/// prefix is very likely unique and can name the note on a command line.
public struct NoteID: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    public var replica: ReplicaID
    public var counter: UInt32

    public init(replica: ReplicaID, counter: UInt32) {
        self.replica = replica
        self.counter = counter
    }

    public static func < (a: NoteID, b: NoteID) -> Bool { (a.replica, a.counter) < (b.replica, b.counter) }

    public var description: String { NoteIDHash.hex(replica: replica, counter: counter) }
    /// The first 8 hex digits of `description`.
    public var short: String { NoteIDHash.hex(replica: replica, counter: counter, digits: 8) }

    /// The `short` form of each of `ids`, in order. A long list is hashed half on each of two
    /// threads (`Concurrently`): listing 20,000 notes spends more time on their ids' SHA-256
    /// than on anything but reading the file.
    /// - Complexity: O(n): one SHA-256 an id.
    public static func shortForms(of ids: [NoteID]) -> [String] {
        guard ids.count >= concurrentShortForms else { return ids.map(\.short) }
        let half = ids.count / 2
        let (front, back) = Concurrently.run({ ids[..<half].map(\.short) }, alongside: { ids[half...].map(\.short) })
        return front + back
    }

    /// From how many ids `shortForms` hashes on two threads: a thousand hashes take about a
    /// millisecond, many times what handing half of them to the other thread costs.
    static let concurrentShortForms = 1_024

    /// The fewest hex digits that name a note by a prefix of its id (as git's shortest
    /// abbreviation): a shorter query is only ever a title, so that a note titled "B" or "42"
    /// is not taken for the note whose id starts that way (one in 16 notes for one digit).
    public static let shortestPrefix = 4
}
