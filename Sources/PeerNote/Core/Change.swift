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

/// The change records of an op log, stored in 48 bytes a change instead of a
/// `ChangeRecord`'s 72: author, message and extra fields as one index into a table of the
/// distinct triples (consecutive changes almost always share one), and a change's first local
/// version and first dependency not stored but read from the previous change's ends (a log's
/// changes tile both its local versions and its dependency pool, in order). Reading a change
/// rebuilds its `ChangeRecord`.
struct ChangeTable: RandomAccessCollection, Sendable {
    /// One change as stored.
    struct Row: Sendable {
        var agent: UInt32
        var seq: UInt32
        var counterStart: UInt32
        /// An index into `metas`.
        var meta: UInt32
        /// `lvStart + length`.
        var lvEnd: Int
        /// `depStart + depCount`.
        var depEnd: Int
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

    var startIndex: Int { 0 }
    var endIndex: Int { rows.count }

    subscript(i: Int) -> ChangeRecord {
        let r = rows[i]
        let lvStart = i == 0 ? 0 : rows[i - 1].lvEnd
        let depStart = i == 0 ? 0 : rows[i - 1].depEnd
        let m = metas[Int(r.meta)]
        return ChangeRecord(agent: r.agent, seq: r.seq, counterStart: r.counterStart, author: m.author, message: m.message,
                            extra: m.extra, depCount: UInt32(r.depEnd - depStart), depStart: depStart,
                            length: r.lvEnd - lvStart, lvStart: lvStart, lamport: r.lamport, time: r.time)
    }

    /// The local versions the changes cover: the last change's `lvEnd`.
    var lvEnd: Int { rows.last?.lvEnd ?? 0 }

    mutating func reserveCapacity(_ n: Int) { rows.reserveCapacity(n) }

    /// Appends `c`, which must start where the last change ends, in local versions and in the
    /// dependency pool.
    mutating func append(_ c: ChangeRecord) {
        precondition(c.lvStart == lvEnd && c.depStart == (rows.last?.depEnd ?? 0), "a change must start where the last one ends")
        let meta = Meta(author: c.author, message: c.message, extra: c.extra)
        let m: UInt32
        if let last = rows.last, metas[Int(last.meta)] == meta {
            m = last.meta
        } else if let known = metaIndex[meta] {
            m = known
        } else {
            m = UInt32(metas.count)
            metas.append(meta)
            metaIndex[meta] = m
        }
        rows.append(Row(agent: c.agent, seq: c.seq, counterStart: c.counterStart, meta: m, lvEnd: c.lvEnd,
                        depEnd: c.depStart + Int(c.depCount), lamport: c.lamport, time: c.time))
    }

    /// Adds `length` op units to the last change.
    mutating func extendLast(by length: Int) {
        rows[rows.count - 1].lvEnd += length
    }
}
