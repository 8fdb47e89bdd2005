/// A change: a group of op units made together by one replica.
///
/// It covers the local versions `lvStart ..< lvStart + length` of its op log,
/// and the replica's op counters `counterStart ..< counterStart + length`.
/// `seq` numbers a replica's changes 1, 2, 3, ...; change `seq` of a replica
/// always has change `seq - 1` in its causal past. `lamport` is the Lamport
/// timestamp of its first op unit (unit k has `lamport + k`): one more than
/// the largest of its dependencies' last units, so sorting by
/// (lamport, replica id) is a causal order. Its dependencies (the heads the author
/// saw, as indices of earlier changes) are `OpLog.deps(of:)`.
///
/// A plain value with no references (strings are interned in the op log, and
/// dependencies live in one shared pool), so that a log of millions of changes
/// is one flat array: appending or copying a change costs no reference counting.
struct ChangeRecord: Sendable, Equatable {
    var agent: UInt32
    var seq: UInt32
    var counterStart: UInt32
    /// The author's name: an index into `OpLog.strings`.
    var author: UInt32
    /// The change's message: an index into `OpLog.strings` (0 is the empty string).
    var message: UInt32
    /// Fields of the change this version does not know, kept verbatim (CBOR map
    /// entries): an index into `OpLog.extras` (0 is none).
    var extra: UInt32
    /// How many dependencies the change has; they are `OpLog.depPool[depStart ..< depStart + depCount]`.
    var depCount: UInt32
    var depStart: Int
    var length: Int
    var lvStart: Int
    var lamport: UInt64
    /// Wall-clock time, seconds since 1970 (the author's clock: informative only).
    var time: Int64

    var lvEnd: Int { lvStart + length }
    var lamportEnd: UInt64 { lamport + UInt64(length) - 1 }
}
