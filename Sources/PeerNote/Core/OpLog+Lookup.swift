#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension OpLog {
    // MARK: Lookup

    func changeID(_ index: Int) -> ChangeID {
        ChangeID(replica: replicas[Int(changes.agent(index))], seq: changes.seq(index))
    }

    func changeIndex(of id: ChangeID) -> Int? {
        guard let a = replicaIndex[id.replica] else { return nil }
        return changes.index(agent: a, seq: id.seq)
    }

    /// The change holding local version `lv`.
    func changeIndex(containingLV lv: Int) -> Int {
        changes.isEmpty ? 0 : changes.index(containingLV: lv)
    }

    /// `changeIndex(containingLV:)` for an `lv` at or after change `hint`'s start: steps forward
    /// from the hint's run, doubling, then searches (for callers walking the log in order, which
    /// make tens of thousands of calls in a merge of long histories).
    func changeIndex(containingLV lv: Int, from hint: Int) -> Int {
        changes.isEmpty ? 0 : changes.index(containingLV: lv, from: hint)
    }

    /// The change holding the op unit `id`, if this log has it.
    func changeIndex(containing id: LocalID) -> Int? {
        changes.index(agent: id.agent, counter: id.counter)
    }

    /// The local version of op unit `id` (its place in this log's order), if this log has it.
    func lv(of id: LocalID) -> Int? {
        guard let ci = changeIndex(containing: id) else { return nil }
        return changes.lvStart(ci) + Int(id.counter) - Int(changes.counterStart(ci))
    }

    /// The local version of every element of `structure` (runs of one agent's consecutive ids),
    /// in order, for `total` elements in all: a run of the change table at a time (its units
    /// have consecutive counters and local versions, so a typing run is one lookup). Nil when
    /// the log lacks one of them.
    func localVersions(of structure: [StructureRun], total: Int) -> [Int]? {
        var out = [Int](repeating: 0, count: total)
        let complete = out.withUnsafeMutableBufferPointer { buffer -> Bool in
            var k = 0
            for run in structure {
                var counter = run.id.counter, remaining = run.length
                while remaining > 0 {
                    guard let (lv, count) = changes.lvSpan(agent: run.id.agent, counter: counter), k + remaining <= buffer.count else { return false }
                    let take = min(remaining, count)
                    for t in 0 ..< take { buffer[k + t] = lv + t }
                    k += take
                    remaining -= take
                    counter &+= UInt32(take)
                }
            }
            return k == buffer.count
        }
        return complete ? out : nil
    }

    @inline(__always) func localID(ofLV lv: Int, change: Int) -> LocalID {
        LocalID(agent: changes.agent(change), counter: changes.counterStart(change)).advanced(by: lv - changes.lvStart(change))
    }

    func lamport(of id: LocalID) -> UInt64? {
        guard let ci = changeIndex(containing: id) else { return nil }
        return changes[ci].lamport + UInt64(Int(id.counter) - Int(changes[ci].counterStart))
    }

    /// The index of the op covering `lv`.
    func opIndex(containingLV lv: Int) -> Int {
        assert(!isAdoptingOps, "ops are read whole only once adopted")
        var lo = 0, hi = ops.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if ops[mid].lv <= lv { lo = mid } else { hi = mid - 1 }
        }
        return lo
    }

    /// The ops of change `index`, cut at its boundaries.
    func ops(ofChange index: Int) -> [Op] {
        var out: [Op] = []
        forEachOp(ofChange: index) { out.append($0) }
        return out
    }

    /// Visits the ops of change `index`, cut at its boundaries, without collecting them.
    func forEachOp(ofChange index: Int, _ body: (Op) -> Void) {
        let c = changes[index]
        guard c.length > 0 else { return }
        var i = opIndex(containingLV: c.lvStart)
        while i < ops.count && ops[i].lv < c.lvEnd {
            let op = ops[i]
            if op.lv >= c.lvStart && op.lv + op.length <= c.lvEnd {
                body(op)
            } else {
                body(slice(op, from: max(c.lvStart, op.lv), to: min(c.lvEnd, op.lv + op.length), change: index))
            }
            i += 1
        }
    }

    /// The part of `op` covering LVs `from ..< to`, with its body adjusted.
    /// `change`, when given, is the change holding LV `from` (saves a search).
    func slice(_ op: Op, from: Int, to: Int, change: Int? = nil) -> Op {
        if from == op.lv && to == op.lv + op.length { return op }
        let k = from - op.lv
        var body = op.body
        switch op.body {
        case .insertText(let note, let left, let right, let start):
            // Unit k's left origin is unit k - 1 of the same run (an op's units have consecutive ids).
            let leftK = k == 0 ? left : localID(ofLV: from, change: change ?? changeIndex(containingLV: from)).advanced(by: -1)
            body = .insertText(note: note, originLeft: leftK, originRight: right, contentStart: start + k)
        case .deleteText(let note, let target, let reversed):
            // A one-unit delete has no direction: always `reversed: false` (one canonical form).
            body = .deleteText(note: note, target: target.advanced(by: reversed ? -k : k), reversed: reversed && to - from > 1)
        default:
            break
        }
        return Op(lv: from, length: to - from, body: body)
    }

    // MARK: Causality

    /// Per agent, the highest seq in the causal past of `changes` (inclusive); 0 = none.
    func versionVector(of roots: [Int]) -> [UInt32] {
        var vv = [UInt32](repeating: 0, count: replicas.count)
        var stack = roots
        while let c = stack.popLast() {
            let rec = changes[c]
            if vv[Int(rec.agent)] >= rec.seq { continue }
            // Everything of this agent up to rec.seq is in the past: walk the chain down to what
            // we had, a run at a time (inside a run, a change depends only on the one before).
            var ci = c
            let had = Int(vv[Int(rec.agent)])
            vv[Int(rec.agent)] = rec.seq
            while true {
                let first = changes.runStart(of: ci)
                stack.append(contentsOf: deps(of: first))
                let firstSeq = Int(changes.seq(first))
                guard firstSeq - 1 > had, let before = changes.index(agent: rec.agent, seq: UInt32(firstSeq - 1)) else { break }
                ci = before
            }
        }
        return vv
    }

    func contains(_ id: LocalID, in vv: [UInt32]) -> Bool {
        guard let ci = changeIndex(containing: id), Int(id.agent) < vv.count else { return false }
        return changes[ci].seq <= vv[Int(id.agent)]
    }
}
