#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Comparing the changes that two op logs both hold.
///
/// Two copies of a document share history when every change both hold has the same content in
/// both: for each replica, its changes numbered 1 up to the smaller of the two copies' counts
/// (every dependency of such a change is itself one of them, so this covers their whole common
/// past). Content is what goes on the wire: seq, op counters, length, time, author, message,
/// extra fields, dependencies (as change ids) and ops (as cut at the change's boundaries, with
/// ids in replica terms and inserted text).
///
/// The comparison is direct (no hashing) and walks both logs a stretch at a time. A stretch is
/// a change and the changes after it that both logs hold in one run of the change table: the
/// first is compared in full, and the others, which by the run's invariants repeat its author,
/// message, extra fields and time and each depend only on the one before, by their lengths and
/// op units. Op units are compared a piece at a time (a piece lies inside one op in each log),
/// inserted text with one memory comparison. A typing session of many thousand keystrokes
/// costs a comparison per cursor jump, not per keystroke.
///
/// The same question can be answered by fingerprints (`sharesHistoryByFingerprints`), which hash
/// every change once (about 1,150 instructions each, SipHash) and cache the result: dearer the
/// first time, cheaper for documents kept in memory and merged again and again (only their new
/// changes are hashed). `Document.relation(to:)` compares directly the first two times a log
/// is checked (pnmerge checks, then merges), and by fingerprints after that.
extension OpLog {
    /// Per agent of `other`, this log's agent for the same replica, or `Self.unknownAgent`.
    ///
    /// Copies of one document kept in memory list the replicas of their common past in the same
    /// order (a fork starts from its original's log, and logs only ever append replicas), so an
    /// agent is first looked for at its own index: a comparison of 16 bytes, where the lookup
    /// hashes them. A document gains a replica for every copy that edits it (every fork, every
    /// editing session of a file), so a merge between copies of a much-edited document would
    /// otherwise hash thousands of replica ids, most of them of its shared past.
    func agentMap(from other: OpLog) -> [UInt32] {
        let mine = replicas, theirs = other.replicas
        return theirs.indices.map { b in
            b < mine.count && mine[b] == theirs[b] ? UInt32(b) : existingAgent(for: theirs[b]) ?? Self.unknownAgent
        }
    }

    /// The agent that `agentMap(from:)` gives a replica this log does not know: no real agent
    /// (agents are indices below `UInt32.max - 1`) and not `LocalID.none`'s.
    static let unknownAgent = UInt32.max - 1

    /// Whether every change that both logs hold has the same content in both, by fingerprints
    /// (`fingerprint(ofChange:)`): agreeing on each replica's last shared change means agreeing
    /// on every shared change, each being in its causal past. Fingerprints are cached, so a log
    /// that is checked again pays only for its new changes.
    mutating func sharesHistoryByFingerprints(with other: inout OpLog) -> Bool {
        let map = agentMap(from: other)
        for b in map.indices {
            let a = map[b]
            guard a != Self.unknownAgent else { continue }
            let mineCount = changes.changeCount(agent: a), theirCount = other.changes.changeCount(agent: UInt32(b))
            let shared = min(mineCount, theirCount)
            // The last shared change is one copy's last change of the replica, found directly
            // (for both, when neither has changes of it the other lacks: most replicas of a
            // much-edited document), the other's searched for.
            guard shared > 0,
                  let ours = shared == mineCount ? changes.lastIndex(agent: a) : changes.index(agent: a, seq: UInt32(shared)),
                  let theirs = shared == theirCount ? other.changes.lastIndex(agent: UInt32(b)) : other.changes.index(agent: UInt32(b), seq: UInt32(shared))
            else { continue }
            if fingerprint(ofChange: ours) != other.fingerprint(ofChange: theirs) { return false }
        }
        return true
    }

    /// Whether every change that both logs hold has the same content in both, compared
    /// directly (see above): no hashing, but every shared stretch is visited on every call.
    /// From `concurrentFrom` shared op units, the units are compared half on each thread
    /// (`Concurrently`): a notebook made in a few large changes shares millions of them.
    /// `splitAt` is where the second half starts, in units from the first shared one (half of
    /// them unless given; tests move it).
    /// The changes `other` holds without their content (`changesWithoutContent`) are not
    /// compared: its caller has made sure that this log holds them as that log did (the bytes
    /// both were read from agree up to them: `Document.checkMergeable(with:)`).
    func sharesHistory(with other: OpLog, concurrentFrom: Int = Self.sharedUnitsConcurrentFrom, splitAt: Int? = nil) -> Bool {
        precondition(changesWithoutContent == 0, "the log compared holds the content of all its changes")
        let map = agentMap(from: other)
        // The stretches' first changes and run tails, each compared by its fields here and by its
        // op units below (as `sameChange` compares one change).
        var segments: [UnitSegment] = []
        var units = 0
        for b in 0 ..< other.replicas.count {
            let a = map[b]
            guard a != Self.unknownAgent else { continue }
            let shared = min(changes.changeCount(agent: a), other.changes.changeCount(agent: UInt32(b)))
            var seq = 1
            while seq <= shared {
                guard let i = changes.index(agent: a, seq: UInt32(seq)),
                      let j = other.changes.index(agent: UInt32(b), seq: UInt32(seq)) else { return false }
                // The stretch: change `seq` and those after it inside its run in both logs.
                var n = min(changes.runEnd(of: i) - i, other.changes.runEnd(of: j) - j, shared - seq + 1)
                // Changes whose content `other` let go: this log holds them byte for byte
                // (`OpLog.dropContent(ofChangesBelow:)`), and they are not compared.
                if j < other.changesWithoutContent {
                    n = min(n, other.changesWithoutContent - j)
                    seq += n
                    continue
                }
                guard sameFields(i, other, j, map) else { return false }
                if n > 1 && !changes.sameLengths(i + 1, other.changes, j + 1, count: n - 1) { return false }
                for (first, count) in n > 1 ? [(0, 1), (1, n - 1)] : [(0, 1)] {
                    let length = changes.lvEnd(i + first + count - 1) - changes.lvStart(i + first)
                    segments.append(UnitSegment(i: i + first, j: j + first, count: count, units: 0 ..< length))
                    units += length
                }
                seq += n
            }
        }
        let compare = { @Sendable [self] (part: [UnitSegment]) -> Bool in
            // The texts' views made once: each holds references that a view per op piece would
            // retain and release again.
            let texts = (mine: textView, theirs: other.textView)
            return part.allSatisfy { sameUnits($0.i, other, $0.j, count: $0.count, map, texts: texts, within: $0.units) }
        }
        guard units >= concurrentFrom else { return compare(segments) }
        let (first, second) = Self.split(segments, at: min(max(splitAt ?? units / 2, 0), units))
        let (a, b) = Concurrently.run({ compare(first) }, alongside: { compare(second) })
        return a && b
    }

    /// Shared op units from which `sharesHistory` compares them on two threads: about ten
    /// instructions a unit, so a half is then a few hundred microseconds or more.
    static let sharedUnitsConcurrentFrom = 1 << 17

    /// Op units of our changes `i ..< i + count` and `other`'s `j ..< j + count` to compare, as
    /// offsets from the first one's start.
    struct UnitSegment: Sendable {
        var i: Int
        var j: Int
        var count: Int
        var units: Range<Int>
    }

    /// The segments' units before `cut` (counted over all of them, in order) and from it on,
    /// the segment that holds the cut in both halves, each with its part.
    static func split(_ segments: [UnitSegment], at cut: Int) -> ([UnitSegment], [UnitSegment]) {
        var first: [UnitSegment] = [], second: [UnitSegment] = []
        var start = 0
        for s in segments {
            let end = start + s.units.count
            if end <= cut {
                first.append(s)
            } else if start >= cut {
                second.append(s)
            } else {
                var before = s, after = s
                before.units = s.units.lowerBound ..< s.units.lowerBound + (cut - start)
                after.units = before.units.upperBound ..< s.units.upperBound
                first.append(before)
                second.append(after)
            }
            start = end
        }
        return (first, second)
    }

    /// Whether our change `i` and `other`'s change `j` (the same replica and seq) have the same
    /// content. `map` is `agentMap(from: other)`.
    func sameChange(_ i: Int, _ other: OpLog, _ j: Int, _ map: [UInt32]) -> Bool {
        sameFields(i, other, j, map) && sameUnits(i, other, j, count: 1, map, texts: (textView, other.textView))
    }

    /// Whether our change `i` and `other`'s change `j` have the same content but their op units:
    /// length, counters, time, author, message, extra fields and dependencies.
    private func sameFields(_ i: Int, _ other: OpLog, _ j: Int, _ map: [UInt32]) -> Bool {
        let a = changes[i], b = other.changes[j]
        guard a.length == b.length, a.counterStart == b.counterStart, a.time == b.time, a.depCount == b.depCount,
              strings[Int(a.author)].hasSameScalars(as: other.strings[Int(b.author)]),
              strings[Int(a.message)].hasSameScalars(as: other.strings[Int(b.message)]),
              extras[Int(a.extra)] == other.extras[Int(b.extra)] else { return false }
        let depsA = deps(of: i), depsB = other.deps(of: j)
        if depsA.count == 1 {
            let x = depsA[0], y = depsB[0]
            guard changes.agent(x) == map[Int(other.changes.agent(y))], changes.seq(x) == other.changes.seq(y) else { return false }
        } else if depsA.count > 1 {
            guard depsA.map(changeID).sorted() == depsB.map(other.changeID).sorted() else { return false }
        }
        return true
    }

    /// Whether the ops of our changes `i ..< i + count` and `other`'s `j ..< j + count` (of equal
    /// lengths, change by change) are the same when each is cut at its change's boundaries.
    /// Walks pieces: stretches that lie inside one op in each log. An op that ends inside a
    /// change in one log must end there in the other too (or that change's ops differ).
    /// `within` limits the comparison to those units (offsets from the first change's start);
    /// an op end inside it is checked as in the whole walk (the pieces are cut at its ends too).
    /// `texts` are this log's and `other`'s `textView`.
    private func sameUnits(_ i: Int, _ other: OpLog, _ j: Int, count: Int, _ map: [UInt32], texts: (mine: LogTextView, theirs: LogTextView),
                           within: Range<Int>? = nil) -> Bool {
        let startA = changes.lvStart(i), startB = other.changes.lvStart(j)
        let total = changes.lvEnd(i + count - 1) - startA
        let range = within?.clamped(to: 0 ..< total) ?? 0 ..< total
        guard !range.isEmpty else { return true }
        var pa = opIndex(containingLV: startA + range.lowerBound), pb = other.opIndex(containingLV: startB + range.lowerBound)
        var ca = i, cb = j        // the changes holding the piece's first unit, in each log
        var off = range.lowerBound
        while off < range.upperBound {
            // The changes holding the piece's first unit (a search from the last ones: a piece
            // may start many keystrokes' changes further on).
            if changes.lvEnd(ca) <= startA + off { ca = changeIndex(containingLV: startA + off, from: ca) }
            if other.changes.lvEnd(cb) <= startB + off { cb = other.changeIndex(containingLV: startB + off, from: cb) }
            let endA = ops[pa].lv + ops[pa].length - startA, endB = other.ops[pb].lv + other.ops[pb].length - startB
            let q = min(endA, endB, range.upperBound)
            if q < total && q == min(endA, endB) && endA != endB {
                // One log's op ends at `q` and the other's goes on: only allowed at a change
                // boundary. (`appendOp` merges every op into the one before when it continues it,
                // so two valid logs do not differ so; kept to compare exactly what a change-by-change
                // comparison of cut ops would.)
                var c = ca
                while changes.lvEnd(c) - startA < q { c += 1 }
                guard changes.lvEnd(c) - startA == q else { return false }
            }
            let x = slice(ops[pa], from: startA + off, to: startA + q, change: ca)
            let y = other.slice(other.ops[pb], from: startB + off, to: startB + q, change: cb)
            guard samePiece(x, other, y, map, texts) else { return false }
            off = q
            if endA == q { pa += 1 }
            if endB == q { pb += 1 }
        }
        return true
    }

    /// Whether our op piece `x` and `other`'s piece `y` (of equal lengths) say the same thing;
    /// `texts` are the two logs' `textView`.
    private func samePiece(_ x: Op, _ other: OpLog, _ y: Op, _ map: [UInt32], _ texts: (mine: LogTextView, theirs: LogTextView)) -> Bool {
        @inline(__always) func mapped(_ id: LocalID) -> LocalID {
            id.isNone ? id : LocalID(agent: map[Int(id.agent)], counter: id.counter)
        }
        switch (x.body, y.body) {
        case let (.insertText(n1, l1, r1, s1), .insertText(n2, l2, r2, s2)):
            guard n1 == mapped(n2), l1 == mapped(l2), r1 == mapped(r2) else { return false }
            return texts.mine.sameScalars(s1 ..< s1 + x.length, as: texts.theirs, from: s2)
        case let (.deleteText(n1, t1, r1), .deleteText(n2, t2, r2)):
            return n1 == mapped(n2) && t1 == mapped(t2) && r1 == r2
        default:
            return x.body == y.body.mapIDs(mapped)
        }
    }
}
