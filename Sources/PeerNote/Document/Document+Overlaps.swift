/// A place in a merged note body where the two copies' text edits met, so that the merged text,
/// though every edit in it survives, may not read as either author meant.
///
/// Two kinds are found (others, such as both copies typing at one place, only put the two
/// texts one after the other, and are not reported):
/// - `sameText`: both copies replaced text at one place (the same typo fixed on two devices):
///   both replacements are kept, side by side ("teh" fixed twice reads "thehe");
/// - `insideDeleted`: text one copy added lies in text only the other copy deleted (a clause
///   added to a paragraph deleted elsewhere): it stays, without the text around it.
public struct TextOverlap: Equatable, Hashable, Sendable {
    public enum Kind: String, Sendable {
        case sameText, insideDeleted
    }

    public var note: NoteID
    public var noteTitle: String
    public var kind: Kind
    /// The line of the merged body (from 1) where the place starts.
    public var line: Int
}

extension Document {
    /// The places where the merge that returned `summary` met two copies' text edits (see
    /// `TextOverlap`), in note order, then body order. Call it right after that merge: it compares
    /// the edits this copy had made with those the merge brought in, on the body as it now is.
    public func textOverlaps(of summary: MergeSummary) -> [TextOverlap] {
        guard let sides = summary.sides, !sides.mine.isEmpty, !sides.theirs.isEmpty else { return [] }
        // Read through a local: each access to `self.log` copies the op log's references.
        let log = self.log
        var edits: [LocalID: NoteEdits] = [:]
        // The edits of the note the last ops edited, kept out of the dictionary while ops go on
        // editing it (each op of a long history would otherwise look it up and copy it).
        var current = (note: LocalID.none, edits: NoteEdits())
        var hint = 0
        for op in log.ops {
            let note: LocalID
            switch op.body {
            case .insertText(let n, _, _, _), .deleteText(let n, _, _): note = n
            default: continue
            }
            // An op's units are consecutive changes of one agent. Those that one copy held and
            // the other did not are the changes numbered past the smaller count, up to the larger.
            let ci = log.changeIndex(containingLV: op.lv, from: hint)
            hint = ci
            let agent = Int(log.changes.agent(ci))
            let m = sides.mine.count(of: agent), t = sides.theirs.count(of: agent)
            guard m != t else { continue }
            let low = min(m, t), high = max(m, t)
            let s1 = Int(log.changes.seq(ci))
            let last = log.changeIndex(containingLV: op.lv + op.length - 1, from: ci)
            let s2 = Int(log.changes.seq(last))
            let lo = max(s1, low + 1), hi = min(s2, high)
            guard lo <= hi else { continue }
            var from = op.lv, to = op.lv + op.length
            if lo > s1, let c = log.changeIndex(agent: UInt32(agent), seq: UInt32(lo)) { from = log.changes.lvStart(c) }
            if hi < s2, let c = log.changeIndex(agent: UInt32(agent), seq: UInt32(hi)) { to = log.changes.lvEnd(c) }
            let k = from - op.lv, n = to - from
            guard n > 0 else { continue }
            if note != current.note {
                if !current.note.isNone { edits[current.note] = current.edits }
                current = (note, edits.removeValue(forKey: note) ?? NoteEdits())
            }
            let mine = m > t
            switch op.body {
            case .insertText:
                let first = log.localID(ofLV: from, change: log.changeIndex(containingLV: from, from: ci))
                current.edits.add(.init(first: first, count: n), inserted: true, mine: mine)
            case .deleteText(_, let target, let reversed):
                let first = reversed ? LocalID(agent: target.agent, counter: target.counter - UInt32(k + n - 1)) : target.advanced(by: k)
                current.edits.add(.init(first: first, count: n), inserted: false, mine: mine)
            default: break
            }
        }
        if !current.note.isNone { edits[current.note] = current.edits }
        var out: [TextOverlap] = []
        for n in state.allNotesInOrder {
            guard var e = edits[n.id], e.bothSides else { continue }
            e.sort()
            let title = n.title.value ?? ""
            for (kind, line) in e.overlaps(in: n.body) {
                out.append(TextOverlap(note: noteID(n.id), noteTitle: title, kind: kind, line: line))
            }
        }
        return out
    }
}

/// Each copy's change count per agent of this log, taken before a merge (see `MergeSummary`).
struct MergeSides: Sendable, Equatable {
    var mine: AgentCounts
    var theirs: AgentCounts
}

/// How many changes of each agent (by this log's agent numbers) a copy holds: its changes of
/// an agent are always that agent's first ones.
struct AgentCounts: Sendable, Equatable {
    var counts: [Int]
    var isEmpty: Bool { counts.allSatisfy { $0 == 0 } }
    func count(of agent: Int) -> Int { agent < counts.count ? counts[agent] : 0 }
}

/// A run of op ids of one agent.
private struct IDRun {
    var first: LocalID
    var count: Int
}

/// The ids one note's body had inserted and deleted by each side of a merge.
private struct NoteEdits {
    /// Indexed [mine, theirs][inserted, deleted]: runs sorted by (agent, counter) once `sort()` ran.
    var runs: [[[IDRun]]] = [[[], []], [[], []]]

    var bothSides: Bool { !(runs[0][0].isEmpty && runs[0][1].isEmpty) && !(runs[1][0].isEmpty && runs[1][1].isEmpty) }

    mutating func add(_ run: IDRun, inserted: Bool, mine: Bool) {
        runs[mine ? 0 : 1][inserted ? 0 : 1].append(run)
    }

    /// Sorts each list and joins runs that overlap or touch (one side may delete an element twice,
    /// in changes of two of its replicas), so that `contains` can search it.
    mutating func sort() {
        for s in 0 ..< 2 {
            for k in 0 ..< 2 {
                let sorted = runs[s][k].sorted { ($0.first.agent, $0.first.counter) < ($1.first.agent, $1.first.counter) }
                var joined: [IDRun] = []
                joined.reserveCapacity(sorted.count)
                for r in sorted {
                    if let last = joined.last, last.first.agent == r.first.agent,
                       Int(r.first.counter) <= Int(last.first.counter) + last.count {
                        let end = max(Int(last.first.counter) + last.count, Int(r.first.counter) + r.count)
                        joined[joined.count - 1].count = end - Int(last.first.counter)
                    } else {
                        joined.append(r)
                    }
                }
                runs[s][k] = joined
            }
        }
    }

    /// Whether `id` lies in one of `runs` (sorted; runs of one side and kind do not overlap).
    static func contains(_ runs: [IDRun], _ id: LocalID) -> Bool {
        var lo = 0, hi = runs.count
        while lo < hi {
            let mid = (lo + hi) / 2
            let r = runs[mid]
            if (r.first.agent, r.first.counter) <= (id.agent, id.counter) { lo = mid + 1 } else { hi = mid }
        }
        guard lo > 0 else { return false }
        let r = runs[lo - 1]
        return r.first.agent == id.agent && Int(id.counter) < Int(r.first.counter) + r.count
    }

    /// Adds to `cuts` the offsets in the id run `id ..< id + length` where `list` (sorted, joined)
    /// starts or stops holding its ids.
    static func addCuts(_ list: [IDRun], _ id: LocalID, _ length: Int, to cuts: inout [Int]) {
        let start = Int(id.counter), end = start + length
        // The first run of `list` that may reach into [start, end): the last one starting at or before `start`.
        var lo = 0, hi = list.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if (list[mid].first.agent, list[mid].first.counter) <= (id.agent, id.counter) { lo = mid + 1 } else { hi = mid }
        }
        var i = max(lo - 1, 0)
        while i < list.count {
            let r = list[i]
            i += 1
            if r.first.agent < id.agent { continue }
            if r.first.agent > id.agent || Int(r.first.counter) >= end { break }
            let a = Int(r.first.counter), b = a + r.count
            if b <= start { continue }
            if a > start { cuts.append(a - start) }
            if b < end { cuts.append(b - start) }
        }
    }

    /// Walks `body` in order: a place is a stretch of elements either side inserted or deleted,
    /// old tombstones (deleted before either side's edits) passed over, ended by a visible
    /// element neither side touched.
    func overlaps(in body: ListCRDT<Unicode.Scalar>) -> [(TextOverlap.Kind, Int)] {
        var found: [(TextOverlap.Kind, Int)] = []
        var line = 1, placeLine = 1
        var open = false
        var anyMineIns = false, anyTheirsIns = false, anyMineDel = false, anyTheirsDel = false
        // Inside: one side's insert with text only the other side deleted before it and after it
        // in the place (an insert next to a deletion, as at the start of the paragraph after a
        // deleted one, is not inside it).
        var onlyMineDeletedSeen = false, onlyTheirsDeletedSeen = false
        var theirsInsAfterMineDel = false, mineInsAfterTheirsDel = false
        var inside = false
        func close() {
            if open {
                if anyMineIns && anyTheirsIns && (anyMineDel || anyTheirsDel) {
                    found.append((.sameText, placeLine))
                } else if inside {
                    found.append((.insideDeleted, placeLine))
                }
            }
            open = false
            anyMineIns = false; anyTheirsIns = false; anyMineDel = false; anyTheirsDel = false
            onlyMineDeletedSeen = false; onlyTheirsDeletedSeen = false
            theirsInsAfterMineDel = false; mineInsAfterTheirsDel = false
            inside = false
        }
        let mineIns = runs[0][0], theirsIns = runs[1][0], mineDel = runs[0][1], theirsDel = runs[1][1]
        var cuts: [Int] = []
        body.forEachRun { id, length, deleted, content in
            // The run cut where any side's membership changes; each piece is one kind throughout.
            cuts.removeAll(keepingCapacity: true)
            cuts.append(0)
            cuts.append(length)
            Self.addCuts(mineIns, id, length, to: &cuts)
            Self.addCuts(theirsIns, id, length, to: &cuts)
            Self.addCuts(mineDel, id, length, to: &cuts)
            Self.addCuts(theirsDel, id, length, to: &cuts)
            if cuts.count > 2 { cuts.sort() }
            var p = 0
            while p + 1 < cuts.count {
                let start = cuts[p], end = cuts[p + 1]
                p += 1
                guard end > start else { continue }
                let first = id.advanced(by: start)
                let mi = Self.contains(mineIns, first), ti = Self.contains(theirsIns, first)
                let md = Self.contains(mineDel, first), td = Self.contains(theirsDel, first)
                if mi || ti || md || td {
                    if !open {
                        open = true
                        placeLine = line
                    }
                    anyMineIns = anyMineIns || mi
                    anyTheirsIns = anyTheirsIns || ti
                    anyMineDel = anyMineDel || md
                    anyTheirsDel = anyTheirsDel || td
                    if ti && onlyMineDeletedSeen { theirsInsAfterMineDel = true }
                    if mi && onlyTheirsDeletedSeen { mineInsAfterTheirsDel = true }
                    if md && !td {
                        if theirsInsAfterMineDel { inside = true }
                        onlyMineDeletedSeen = true
                    }
                    if td && !md {
                        if mineInsAfterTheirsDel { inside = true }
                        onlyTheirsDeletedSeen = true
                    }
                } else if !deleted {
                    close()
                }
                if !deleted {
                    for scalar in content[content.startIndex + start ..< content.startIndex + end] where scalar == "\n" { line += 1 }
                }
            }
        }
        close()
        return found
    }
}
