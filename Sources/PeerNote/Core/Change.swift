/// A change: a group of op units made together by one replica.
///
/// It covers the local versions `lvStart ..< lvStart + length` of its op log,
/// and the replica's op counters `counterStart ..< counterStart + length`.
/// `seq` numbers a replica's changes 1, 2, 3, ...; change `seq` of a replica
/// always has change `seq - 1` in its causal past. `lamport` is the Lamport
/// timestamp of its first op unit (unit k has `lamport + k`): one more than
/// the largest of its dependencies' last units, so sorting by
/// (lamport, replica id) is a causal order. `deps` are the heads the author saw,
/// as indices into the op log's change list (always earlier changes).
struct ChangeRecord: Sendable, Equatable {
    var agent: UInt32
    var seq: UInt32
    var counterStart: UInt32
    var length: Int
    var lvStart: Int
    var lamport: UInt64
    var deps: [Int]
    /// Wall-clock time, seconds since 1970 (the author's clock: informative only).
    var time: Int64
    var author: String
    var message: String
    /// Fields of the change this version does not know, kept verbatim (CBOR map entries).
    var extra: [UInt8]

    var lvEnd: Int { lvStart + length }
    var lamportEnd: UInt64 { lamport + UInt64(length) - 1 }
}
