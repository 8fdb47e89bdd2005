#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One line of a note's body and the change that last edited it (`Document.blame(_:)`).
public struct BlameLine: Equatable, Sendable {
    /// 1 for the first line.
    public var number: Int
    /// The line's text, without its line break (and without a carriage return before it).
    public var text: String
    /// The change of the latest insert among the line's visible characters (of its line break,
    /// for an empty line).
    public var change: ChangeID
    public var author: String
    public var time: Date
}

extension Document {
    /// Each line of a note's body (deleted notes too) with the change that last edited it, as
    /// `git blame` tells: the latest insert among the line's visible characters, by Lamport
    /// timestamp (so an insert made after another in causal order is later), then replica id.
    /// An empty line is the insert of its line break. A body that ends in a line break has no
    /// empty line after it; an empty body has no lines.
    ///
    /// - Complexity: O(b log n) for a body of b characters (tombstones included) and a history
    ///   of n op units: one look-up in the change table per run of the body and per change
    ///   boundary inside a run.
    public func blame(_ note: NoteID) throws(PeerNoteError) -> [BlameLine] {
        guard let local = localID(note), let ns = state.note(local) else { throw .noSuchNote(note.description) }
        let log = self.log
        var lines: [BlameLine] = []
        var text: [Unicode.Scalar] = []
        // The line's latest insert so far: Lamport timestamp, replica, change.
        var best: (lamport: UInt64, replica: ReplicaID, change: Int)?
        func finish(breakAt unit: (lamport: UInt64, replica: ReplicaID, change: Int)?) {
            let latest = best ?? unit
            guard let latest else { return }
            if text.last == "\r" { text.removeLast() }
            lines.append(BlameLine(number: lines.count + 1, text: String(scalars: text), change: log.changeID(latest.change),
                                   author: log.author(of: latest.change),
                                   time: Date(timeIntervalSince1970: TimeInterval(log.changes.time(latest.change)))))
            text = []
            best = nil
        }
        ns.body.forEachRun { first, length, isDeleted, content in
            guard !isDeleted else { return }
            var k = 0
            while k < length {
                let id = first.advanced(by: k)
                guard let ci = log.changeIndex(containing: id) else { return }
                let offset = Int(id.counter) - Int(log.changes.counterStart(ci))
                // The elements of this run the change holds.
                let span = min(length - k, log.changes.counterEnd(ci) - Int(id.counter))
                guard span > 0 else { return }
                let replica = log.replicas[Int(id.agent)]
                let lamport0 = log.changes.lamport(ci) + UInt64(offset)
                for j in 0 ..< span {
                    let scalar = content[content.startIndex + k + j]
                    let unit = (lamport: lamport0 + UInt64(j), replica: replica, change: ci)
                    if scalar == "\n" {
                        finish(breakAt: unit)
                        continue
                    }
                    text.append(scalar)
                    if best.map({ ($0.lamport, $0.replica) < (unit.lamport, unit.replica) }) ?? true { best = unit }
                }
                k += span
            }
        }
        if !text.isEmpty { finish(breakAt: nil) }
        return lines
    }

    /// The history newest first, or only the changes that touched `note` (created, retitled,
    /// typed in, tagged, prioritized, moved, deleted or restored it). Newest by time, where a
    /// change's time counts as no earlier than any change it depends on (a clock running behind
    /// cannot put a change below one it builds on), then by Lamport timestamp and replica id:
    /// a change always comes before the changes it depends on.
    ///
    /// - Complexity: O(n + o) for n changes and o stored ops to choose the changes (one pass
    ///   over the ops beside the change table), then O(k log k) to order the k chosen and
    ///   O(k log n) to describe them.
    public func historyNewestFirst(touching note: NoteID? = nil) -> [HistoryEntry] {
        let log = self.log
        let n = log.changes.count
        var chosen: [Int]
        if let note {
            guard let local = localID(note), state.note(local) != nil else { return [] }
            chosen = changes(touching: local, log: log)
        } else {
            chosen = Array(0 ..< n)
        }
        // Each change's time, raised to its dependencies' (the log is in causal order).
        var effective = [Int64](repeating: 0, count: n)
        for ci in 0 ..< n {
            var t = log.changes.time(ci)
            for d in log.deps(of: ci) where effective[d] > t { t = effective[d] }
            effective[ci] = t
        }
        chosen.sort { a, b in
            (effective[a], log.changes.lamport(a), log.replicas[Int(log.changes.agent(a))])
                > (effective[b], log.changes.lamport(b), log.replicas[Int(log.changes.agent(b))])
        }
        return chosen.map(historyEntry)
    }

    /// The changes (indices, in log order) with an op on note `note` or creating it: one walk
    /// over the stored ops, the change holding each op found from the one before.
    func changes(touching note: LocalID, log: OpLog) -> [Int] {
        var out: [Int] = []
        var ci = 0
        for op in log.ops {
            let touches: Bool
            switch op.body {
            case .createNote: touches = log.localID(ofLV: op.lv, change: log.changeIndex(containingLV: op.lv, from: ci)) == note
            default: touches = op.body.note == note
            }
            guard touches else { continue }
            ci = log.changeIndex(containingLV: op.lv, from: ci)
            // Every change the op spans (a typing run over many keystroke changes is one op).
            while ci < log.changes.count && log.changes.lvStart(ci) < op.lv + op.length {
                if log.changes.length(ci) > 0 && out.last != ci { out.append(ci) }
                ci += 1
            }
            ci = max(ci - 1, 0)
        }
        return out
    }
}
