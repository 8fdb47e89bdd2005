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
        overlapSearch(of: summary).run()
    }

    /// `textOverlaps(of:)`, to run later or on another thread (while the document is saved, say):
    /// the search holds the document's history and state as they are now (shared, not copied,
    /// until the document changes). Take it right after the merge that returned `summary`.
    public func overlapSearch(of summary: MergeSummary) -> OverlapSearch {
        OverlapSearch(log: log, state: state, sides: summary.sides)
    }
}

/// The search of `Document.textOverlaps(of:)`, taken from a document right after a merge and
/// independent of it from then on: `run()` gives the same places on any thread.
public struct OverlapSearch: Sendable {
    let log: OpLog
    let state: DocState
    let sides: MergeSides?

    /// The places, in note order, then body order.
    public func run() -> [TextOverlap] {
        guard let sides, !sides.mine.isEmpty, !sides.theirs.isEmpty else { return [] }
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
            e.prepare()
            let title = n.title.value ?? ""
            for (kind, line) in e.overlaps(in: n.body) {
                out.append(TextOverlap(note: NoteID(replica: log.replicas[Int(n.id.agent)], counter: n.id.counter), noteTitle: title, kind: kind, line: line))
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
struct IDRun: Sendable, Equatable {
    var first: LocalID
    var count: Int
}

/// The ids one note's body had inserted and deleted by each side of a merge.
private struct NoteEdits {
    /// Indexed [mine, theirs][inserted, deleted], in the order the ops came.
    var runs: [[[IDRun]]] = [[[], []], [[], []]]
    /// The four lists as one partition of the id space, built by `prepare()`.
    var segments = EditSegments([])

    var bothSides: Bool { !(runs[0][0].isEmpty && runs[0][1].isEmpty) && !(runs[1][0].isEmpty && runs[1][1].isEmpty) }

    mutating func add(_ run: IDRun, inserted: Bool, mine: Bool) {
        runs[mine ? 0 : 1][inserted ? 0 : 1].append(run)
    }

    /// Builds `segments` from the four lists (bit 0 mine inserted, 1 theirs inserted, 2 mine
    /// deleted, 3 theirs deleted).
    mutating func prepare() {
        segments = EditSegments([runs[0][0], runs[1][0], runs[0][1], runs[1][1]])
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
        let segments = self.segments
        var hint = -1
        body.forEachRun { id, length, deleted, content in
            // The run is cut where any side's membership changes; each piece is one kind throughout.
            segments.forEachPiece(id, length, hint: &hint) { start, end, mask in
                let mi = mask & 1 != 0, ti = mask & 2 != 0, md = mask & 4 != 0, td = mask & 8 != 0
                if mask != 0 {
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

/// Which of up to eight lists of id runs hold each id, as one partition of the id space into
/// segments: a segment starts at an id and reaches to the next segment's start (within its
/// agent; an agent's last segment holds no list and reaches to the end of its ids), and every
/// id in it is held by exactly the lists of its mask (bit k for list k). Runs in a list may
/// overlap or touch. Cutting a body's run into pieces of one membership then takes one search
/// per run, and the pieces come already in order.
///
/// Invariant: segments sorted by (agent, start), starts distinct within an agent, neighbours
/// of one agent with different masks.
struct EditSegments: Sendable {
    struct Segment: Sendable, Equatable {
        var agent: UInt32
        var start: Int
        var mask: UInt8
    }

    private(set) var segments: [Segment] = []

    init(_ lists: [[IDRun]]) {
        precondition(lists.count <= 8, "at most eight lists")
        // Each run gives two events: list k starts holding ids at one place and stops at another.
        // The key packs (agent, place) into one integer that sorts as the pair does: an agent's
        // places reach at most 2^32 (33 bits), and agent numbers index a log's replica table, so
        // they stay far below 2^31 (the tuple comparison is the fallback).
        var events: [(key: UInt64, agent: UInt32, list: Int, delta: Int)] = []
        var packable = true
        for (k, list) in lists.enumerated() {
            for r in list where r.count > 0 {
                packable = packable && r.first.agent < 1 << 31
                let base = UInt64(r.first.agent & (1 << 31 - 1)) << 33
                events.append((base | UInt64(r.first.counter), r.first.agent, k, 1))
                events.append((base | UInt64(Int(r.first.counter) + r.count), r.first.agent, k, -1))
            }
        }
        if packable {
            events.sort { $0.key < $1.key }
        } else {
            events.sort { ($0.agent, $0.key & (1 << 33 - 1)) < ($1.agent, $1.key & (1 << 33 - 1)) }
        }
        var depth = [Int](repeating: 0, count: lists.count)
        var i = 0
        while i < events.count {
            let key = events[i].key, agent = events[i].agent
            while i < events.count && events[i].key == key && events[i].agent == agent {
                depth[events[i].list] += events[i].delta
                i += 1
            }
            var mask: UInt8 = 0
            for k in depth.indices where depth[k] > 0 { mask |= 1 << UInt8(k) }
            let position = Int(key & (1 << 33 - 1))
            if let last = segments.last, last.agent == agent, last.mask == mask { continue }
            segments.append(Segment(agent: agent, start: position, mask: mask))
        }
    }

    /// The lists holding `id`, as a mask.
    func mask(of id: LocalID) -> UInt8 {
        let i = lastSegment(atOrBefore: id)
        return i >= 0 && segments[i].agent == id.agent ? segments[i].mask : 0
    }

    /// Calls `body(from, to, mask)` for the pieces of the id run `first ..< first + length`, in
    /// order: offsets from `first`, each piece as long as its ids' membership stays the same.
    /// `hint` is where the last call ended; the search starts there (a body's runs often
    /// continue one another's ids).
    func forEachPiece(_ first: LocalID, _ length: Int, hint: inout Int, _ body: (Int, Int, UInt8) -> Void) {
        let start = Int(first.counter), end = start + length
        var i = covers(hint, first) ? hint : covers(hint + 1, first) ? hint + 1 : lastSegment(atOrBefore: first)
        var p = start
        while p < end {
            let mask = i >= 0 && segments[i].agent == first.agent ? segments[i].mask : 0
            var stop = end
            let next = i + 1
            if next < segments.count, segments[next].agent == first.agent, segments[next].start < end {
                stop = segments[next].start
            }
            body(p - start, stop - start, mask)
            p = stop
            if p < end { i = next }
        }
        hint = i
    }

    /// Whether segment `i` is the last one starting at or before `id` (-1: none does).
    private func covers(_ i: Int, _ id: LocalID) -> Bool {
        guard i >= -1, i < segments.count else { return false }
        let counter = Int(id.counter)
        if i >= 0 && (segments[i].agent, segments[i].start) > (id.agent, counter) { return false }
        return i + 1 == segments.count || (segments[i + 1].agent, segments[i + 1].start) > (id.agent, counter)
    }

    /// The index of the last segment starting at or before `id` (in (agent, counter) order), or -1.
    private func lastSegment(atOrBefore id: LocalID) -> Int {
        var lo = 0, hi = segments.count
        let counter = Int(id.counter)
        while lo < hi {
            let mid = (lo + hi) / 2
            let s = segments[mid]
            if (s.agent, s.start) <= (id.agent, counter) { lo = mid + 1 } else { hi = mid }
        }
        return lo - 1
    }
}
