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

/// The change records of an op log, stored in 56 bytes a change instead of a
/// `ChangeRecord`'s 72: author, message and extra fields as one index into a table of the
/// distinct triples (consecutive changes almost always share one), and the length as 32 bits
/// (a change's units have consecutive 32-bit op counters). Reading a change rebuilds its
/// `ChangeRecord`. (Deriving the first local version and dependency from the previous row
/// would save 8 more bytes, but made every read of a change in load and save 10 % dearer.)
struct ChangeTable: RandomAccessCollection, Sendable {
    /// One change as stored.
    struct Row: Sendable {
        var agent: UInt32
        var seq: UInt32
        var counterStart: UInt32
        /// An index into `metas`.
        var meta: UInt32
        var length: UInt32
        var depCount: UInt32
        var lvStart: Int
        var depStart: Int
        var lamport: UInt64
        var time: Int64
    }

    /// The string and extra indices a change refers to (see `ChangeRecord`).
    struct Meta: Hashable, Sendable {
        var author: UInt32
        var message: UInt32
        var extra: UInt32
    }

    private var rows: [Row] = []
    private var metas: [Meta] = []
    private var metaIndex: [Meta: UInt32] = [:]
    /// The last change's author, message and extra indices, and its index in `metas`.
    private(set) var lastMeta: Meta?
    private var lastMetaIndex: UInt32 = 0

    var startIndex: Int { 0 }
    var endIndex: Int { rows.count }

    @inline(__always)
    subscript(i: Int) -> ChangeRecord {
        let r = rows[i]
        let m = metas[Int(r.meta)]
        return ChangeRecord(agent: r.agent, seq: r.seq, counterStart: r.counterStart, author: m.author, message: m.message,
                            extra: m.extra, depCount: r.depCount, depStart: r.depStart,
                            length: Int(r.length), lvStart: r.lvStart, lamport: r.lamport, time: r.time)
    }

    // Single fields of change `i`, for hot paths that need one or two of them (a record has twelve).
    func agent(_ i: Int) -> UInt32 { rows[i].agent }
    func seq(_ i: Int) -> UInt32 { rows[i].seq }
    func counterStart(_ i: Int) -> UInt32 { rows[i].counterStart }
    func lamport(_ i: Int) -> UInt64 { rows[i].lamport }
    func lvStart(_ i: Int) -> Int { rows[i].lvStart }
    func length(_ i: Int) -> Int { Int(rows[i].length) }
    func lamportEnd(_ i: Int) -> UInt64 { rows[i].lamport + UInt64(length(i)) - 1 }

    /// The local versions the changes cover: the last change's `lvEnd`.
    var lvEnd: Int { rows.last.map { $0.lvStart + Int($0.length) } ?? 0 }

    mutating func reserveCapacity(_ n: Int) { rows.reserveCapacity(n) }

    /// Appends `c`, which must start where the last change ends, in local versions and in the
    /// dependency pool.
    mutating func append(_ c: ChangeRecord) {
        precondition(c.lvStart == lvEnd && c.depStart == (rows.last.map { $0.depStart + Int($0.depCount) } ?? 0), "a change must start where the last one ends")
        appendEmpty(agent: c.agent, seq: c.seq, counterStart: c.counterStart,
                    meta: Meta(author: c.author, message: c.message, extra: c.extra),
                    depEnd: c.depStart + Int(c.depCount), lamport: c.lamport, time: c.time)
        extendLast(by: c.length)
    }

    /// Appends a change with no op units yet (it starts and ends at `lvEnd`) whose dependencies
    /// end at `depEnd` in the pool.
    mutating func appendEmpty(agent: UInt32, seq: UInt32, counterStart: UInt32, meta: Meta, depEnd: Int, lamport: UInt64, time: Int64) {
        if meta != lastMeta {
            if let known = metaIndex[meta] {
                lastMetaIndex = known
            } else {
                lastMetaIndex = UInt32(metas.count)
                metas.append(meta)
                metaIndex[meta] = lastMetaIndex
            }
            lastMeta = meta
        }
        let depStart = rows.last.map { $0.depStart + Int($0.depCount) } ?? 0
        rows.append(Row(agent: agent, seq: seq, counterStart: counterStart, meta: lastMetaIndex, length: 0,
                        depCount: UInt32(depEnd - depStart), lvStart: lvEnd, depStart: depStart, lamport: lamport, time: time))
    }

    /// Adds `length` op units to the last change.
    mutating func extendLast(by length: Int) {
        // A change's units have consecutive op counters (UInt32), so its length fits one too.
        rows[rows.count - 1].length += UInt32(length)
    }
}
