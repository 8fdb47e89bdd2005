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
        var edits: [LocalID: NoteEdits] = [:]
        var hint = 0
        for op in log.ops {
            let note: LocalID
            switch op.body {
            case .insertText(let n, _, _, _), .deleteText(let n, _, _): note = n
            default: continue
            }
            // Each unit of the op may lie in a different change: take them a change at a time.
            var lv = op.lv
            while lv < op.lv + op.length {
                let ci = log.changeIndex(containingLV: lv, from: hint)
                hint = ci
                let end = min(log.changes.lvEnd(ci), op.lv + op.length)
                let agent = Int(log.changes.agent(ci)), seq = Int(log.changes.seq(ci))
                let mine = sides.mine.count(of: agent) >= seq, theirs = sides.theirs.count(of: agent) >= seq
                if mine != theirs {
                    let k = lv - op.lv, n = end - lv
                    switch op.body {
                    case .insertText:
                        let first = log.localID(ofLV: lv, change: ci)
                        edits[note, default: NoteEdits()].add(.init(first: first, count: n), inserted: true, mine: mine)
                    case .deleteText(_, let target, let reversed):
                        let first = reversed ? LocalID(agent: target.agent, counter: target.counter - UInt32(k + n - 1))
                            : target.advanced(by: k)
                        edits[note, default: NoteEdits()].add(.init(first: first, count: n), inserted: false, mine: mine)
                    default: break
                    }
                }
                lv = end
            }
        }
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

    /// Walks `body` in order: a place is a stretch of elements either side inserted or deleted,
    /// old tombstones (deleted before either side's edits) passed over, ended by a visible
    /// element neither side touched.
    func overlaps(in body: ListCRDT<Unicode.Scalar>) -> [(TextOverlap.Kind, Int)] {
        var found: [(TextOverlap.Kind, Int)] = []
        var line = 1, placeLine = 1
        var open = false
        var mineIns = false, theirsIns = false, mineDel = false, theirsDel = false
        // Inside: one side's insert with text only the other side deleted before it and after it
        // in the place (an insert next to a deletion, as at the start of the paragraph after a
        // deleted one, is not inside it).
        var onlyMineDeletedSeen = false, onlyTheirsDeletedSeen = false
        var theirsInsAfterMineDel = false, mineInsAfterTheirsDel = false
        var inside = false
        func close() {
            if open {
                if mineIns && theirsIns && (mineDel || theirsDel) {
                    found.append((.sameText, placeLine))
                } else if inside {
                    found.append((.insideDeleted, placeLine))
                }
            }
            open = false
            mineIns = false; theirsIns = false; mineDel = false; theirsDel = false
            onlyMineDeletedSeen = false; onlyTheirsDeletedSeen = false
            theirsInsAfterMineDel = false; mineInsAfterTheirsDel = false
            inside = false
        }
        body.forEachElement { id, scalar, deleted in
            let mi = Self.contains(runs[0][0], id), ti = Self.contains(runs[1][0], id)
            let md = Self.contains(runs[0][1], id), td = Self.contains(runs[1][1], id)
            if mi || ti || md || td {
                if !open {
                    open = true
                    placeLine = line
                }
                mineIns = mineIns || mi
                theirsIns = theirsIns || ti
                mineDel = mineDel || md
                theirsDel = theirsDel || td
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
            if !deleted && scalar == "\n" { line += 1 }
        }
        close()
        return found
    }
}
