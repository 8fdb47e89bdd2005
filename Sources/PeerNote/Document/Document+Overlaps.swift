/// A place in a merged note body where the two copies' text edits met, so that the merged text,
/// though every edit in it survives, may not read as either author meant.
///
/// Two kinds are found (others, such as both copies typing at one place, only put the two
/// texts one after the other, and are not reported):
/// - `sameText`: both copies put text at one place where at least one of them replaced text
///   (the same typo fixed on two devices; a word replaced on one and a word typed before it on
///   the other): both are kept, side by side ("teh" fixed twice reads "thehe"; "Monday"
///   replaced by "Friday" where "next " was typed before it may read "Frinext day");
/// - `insideDeleted`: text one copy added lies in text only the other copy deleted, or at its
///   edge and belonging with it (a clause added to a paragraph deleted elsewhere, "See: " typed
///   before it, a sentence added after a deleted one): it stays, without the text around it.
public struct TextOverlap: Equatable, Hashable, Sendable {
    public enum Kind: String, Sendable {
        case sameText, insideDeleted
    }

    public var note: NoteID
    public var noteTitle: String
    public var kind: Kind
    /// The line of the merged body (from 1) where the place starts.
    public var line: Int

    /// The note title compared by its exact Unicode scalars, as every string of a document is.
    public static func == (a: TextOverlap, b: TextOverlap) -> Bool {
        a.note == b.note && a.noteTitle.hasSameScalars(as: b.noteTitle) && a.kind == b.kind && a.line == b.line
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(note)
        hasher.combine(ExactString(noteTitle))
        hasher.combine(kind)
        hasher.combine(line)
    }
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
        // The units one copy held and the other did not, as spans of local versions in log order:
        // an agent's such changes are those numbered past the smaller count, up to the larger.
        // Found run by run of the change table (a long history is mostly runs of typing), so
        // that an op, below, is matched against them without looking up its change.
        var spans: [DifferingSpan] = []
        let changes = log.changes
        changes.forEachRun { agent, seqStart, firstIndex, count in
            let m = sides.mine.count(of: Int(agent)), t = sides.theirs.count(of: Int(agent))
            guard m != t else { return }
            // Seqs lo ... hi of this run (its seqs are seqStart ..< seqStart + count).
            let lo = max(Int(seqStart), min(m, t) + 1), hi = min(Int(seqStart) + count - 1, max(m, t))
            guard lo <= hi else { return }
            let first = firstIndex + (lo - Int(seqStart)), last = firstIndex + (hi - Int(seqStart))
            let span = DifferingSpan(lvStart: changes.lvStart(first), lvEnd: changes.lvEnd(last), agent: agent,
                                     counterStart: changes.counterStart(first), mine: m > t)
            if let previous = spans.last, previous.continues(into: span) {
                spans[spans.count - 1].lvEnd = span.lvEnd
            } else if span.lvEnd > span.lvStart {
                spans.append(span)
            }
        }
        var s = 0
        for op in log.ops {
            let note: LocalID
            switch op.body {
            case .insertText(let n, _, _, _), .deleteText(let n, _, _): note = n
            default: continue
            }
            // An op's units are consecutive changes of one agent: the part of it one copy held and
            // the other did not is one stretch, in one span (or in spans that continue each other).
            let opEnd = op.lv + op.length
            while s < spans.count && spans[s].lvEnd <= op.lv { s += 1 }
            guard s < spans.count, spans[s].lvStart < opEnd else { continue }
            let span = spans[s]
            let from = max(op.lv, span.lvStart)
            var to = min(opEnd, span.lvEnd)
            while to < opEnd, s + 1 < spans.count, spans[s + 1].lvStart == to {
                s += 1
                to = min(opEnd, spans[s].lvEnd)
            }
            let k = from - op.lv, n = to - from
            guard n > 0 else { continue }
            if note != current.note {
                if !current.note.isNone { edits[current.note] = current.edits }
                current = (note, edits.removeValue(forKey: note) ?? NoteEdits())
            }
            switch op.body {
            case .insertText:
                let first = LocalID(agent: span.agent, counter: span.counterStart).advanced(by: from - span.lvStart)
                current.edits.add(.init(first: first, count: n), inserted: true, mine: span.mine)
            case .deleteText(_, let target, let reversed):
                let first = reversed ? LocalID(agent: target.agent, counter: target.counter - UInt32(k + n - 1)) : target.advanced(by: k)
                current.edits.add(.init(first: first, count: n), inserted: false, mine: span.mine)
            default: break
            }
        }
        if !current.note.isNone { edits[current.note] = current.edits }
        var out: [TextOverlap] = []
        let state = self.state
        for slot in state.allNoteSlotsInOrder {
            guard var e = edits[state.noteStates[slot].id], e.bothSides else { continue }
            let n = state.noteStates[slot]
            e.prepare()
            let title = n.title.value ?? ""
            for (kind, line) in e.overlaps(in: n.body) {
                out.append(TextOverlap(note: NoteID(replica: log.replicas[Int(n.id.agent)], counter: n.id.counter), noteTitle: title, kind: kind, line: line))
            }
        }
        return out
    }
}

/// Op units (local versions `lvStart ..< lvEnd`) of changes that one copy of a merge held and
/// the other did not: one agent's, with consecutive op counters from `counterStart`; `mine`
/// when the copy merged into held them.
private struct DifferingSpan {
    var lvStart: Int
    var lvEnd: Int
    var agent: UInt32
    var counterStart: UInt32
    var mine: Bool

    /// Whether `next` goes on where this ends: the same agent's next units, on the same side.
    func continues(into next: DifferingSpan) -> Bool {
        next.lvStart == lvEnd && next.agent == agent && next.mine == mine
            && Int(next.counterStart) == Int(counterStart) + (lvEnd - lvStart)
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

    /// Adds `run` to a list; a run that continues the list's last one extends it (typing, one
    /// op per burst, gives thousands that continue each other; each would be two events to sort).
    mutating func add(_ run: IDRun, inserted: Bool, mine: Bool) {
        let side = mine ? 0 : 1, kind = inserted ? 0 : 1
        if let last = runs[side][kind].last, last.first.agent == run.first.agent,
           Int(last.first.counter) + last.count == Int(run.first.counter) {
            runs[side][kind][runs[side][kind].count - 1].count += run.count
        } else {
            runs[side][kind].append(run)
        }
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
        // Every place, with the line it starts on and what it was found to be (nil: nothing).
        var places: [(line: Int, kind: TextOverlap.Kind?)] = []
        var line = 1, placeLine = 1
        var open = false
        var anyMineIns = false, anyTheirsIns = false, anyMineDel = false, anyTheirsDel = false
        // Inside: one side's insert with text only the other side deleted before it and after it
        // in the place. (An insert at the edge of the other side's deletion is for `EditedText`,
        // which reads the text around it.)
        var onlyMineDeletedSeen = false, onlyTheirsDeletedSeen = false
        var theirsInsAfterMineDel = false, mineInsAfterTheirsDel = false
        var inside = false
        func close() {
            if open {
                // Text inside what the other side deleted says more than text side by side: the
                // place of "Line one!" (one side added "!" and deleted the paragraph after it)
                // where the other side added words inside that paragraph is both, and those words
                // are what now reads out of place (so the case is not called sameText).
                if inside {
                    places.append((placeLine, .insideDeleted))
                } else if anyMineIns && anyTheirsIns && (anyMineDel || anyTheirsDel) {
                    places.append((placeLine, .sameText))
                } else {
                    places.append((placeLine, nil))
                }
            }
            open = false
            anyMineIns = false; anyTheirsIns = false; anyMineDel = false; anyTheirsDel = false
            onlyMineDeletedSeen = false; onlyTheirsDeletedSeen = false
            theirsInsAfterMineDel = false; mineInsAfterTheirsDel = false
            inside = false
        }
        // The text around the edits, when one side inserted and the other deleted.
        let lookAtMine = !runs[0][0].isEmpty && !runs[1][1].isEmpty, lookAtTheirs = !runs[1][0].isEmpty && !runs[0][1].isEmpty
        let edges = lookAtMine || lookAtTheirs
        // The body's pieces in order, for the edge check (`EditedText.insertsAtDeletedEdges(of:)`).
        var pieces: [EditedText.Piece] = []
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
                if edges {
                    pieces.append(.init(content: content[content.startIndex + start ..< content.startIndex + end], mask: mask, deleted: deleted, place: places.count))
                }
                if !deleted {
                    for scalar in content[content.startIndex + start ..< content.startIndex + end] where scalar == "\n" { line += 1 }
                }
            }
        }
        close()
        if edges {
            for p in EditedText.insertsAtDeletedEdges(of: pieces, mine: lookAtMine, theirs: lookAtTheirs) where places[p].kind == nil {
                places[p].kind = .insideDeleted
            }
        }
        return places.compactMap { place in place.kind.map { ($0, place.line) } }
    }
}

/// One body's text around its edits, in body order, to find text one side added at the edge of
/// text only the other side deleted, where it belongs with that text: "See: "
/// typed before a paragraph the other side deleted, " Added!" typed after a deleted sentence.
/// Text typed next to a deletion is not always part of it: a word typed at the start of the
/// paragraph after a deleted one, or at the end of the line before a deleted line, reads as
/// meant. Which side text belongs with is read from the characters it joins:
/// - an insert joins the neighbour it runs into, in this copy's text: a letter or digit more
///   than punctuation, punctuation more than a space; a line break, the start or end of the
///   body, or an insert's own line break at that end joins nothing. Equal neighbours (inside a
///   word) both hold it. It is reported when a neighbour it joins was deleted by the other side
///   only (or both its neighbours were).
/// - a deletion may be recorded at any of the placements that take out the same text ("Para two
///   is here.\n\n" before "Para three." is also "wo is here.\n\nPara t"), and text typed a few
///   characters away merges the same as text typed at its edge. So the deletion is read where
///   `TextDiff.cleanupLossless` would put it (its ends on the best boundaries, the later one on
///   a tie) among the placements that give the merged text, before the neighbours are looked
///   at. It is slid only across text neither side touched, and not at all when other edits
///   adjoin it.
///
/// Only the ends of runs are read, so a long run keeps only its ends: untouched text `context`
/// elements at each end, with a barrier between that no deletion slides across; an edited run
/// (which a slide or a score reaches at most one untouched run's length into) a little more,
/// with nothing between.
struct EditedText {
    /// Whether to look at mine's inserts (theirs deleted text) and at theirs' (mine did).
    let mine: Bool, theirs: Bool
    /// Untouched text kept on each side of an edit: a longer stretch keeps this much at each end
    /// with a barrier between (a deletion does not slide across it).
    let context: Int
    /// A mask for the barrier element.
    static let barrier: UInt8 = 16

    /// The elements: untouched visible text, and text either side inserted or deleted (not text
    /// deleted before the merge, nor text one side inserted and deleted itself, which neither
    /// side's text holds now).
    private(set) var scalars: [Unicode.Scalar] = []
    /// Each element's lists as an `EditSegments` mask (1 mine inserted, 2 theirs inserted, 4 mine
    /// deleted, 8 theirs deleted), or `barrier`.
    private(set) var masks: [UInt8] = []
    /// Where each place (in `NoteEdits.overlaps`) with elements here starts: its first element
    /// and its number, in order.
    private var placeStarts: [(element: Int, place: Int)] = []
    /// Where each run of elements with one mask starts, in order.
    private(set) var runStarts: [Int] = []
    /// Where the untouched stretch at the end starts.
    private var stretchStart = 0

    init(mine: Bool = true, theirs: Bool = true, context: Int = 1_000) {
        precondition(context > 0)
        (self.mine, self.theirs, self.context) = (mine, theirs, context)
    }

    /// Appends the body's next elements: `mask` as in `EditSegments` (one membership throughout),
    /// `deleted` whether the merged body has them deleted, `place` the place they are in.
    mutating func append(_ content: ArraySlice<Unicode.Scalar>, mask: UInt8, deleted: Bool, place: Int) {
        guard !content.isEmpty else { return }
        if mask == 0 {
            if !deleted { appendUntouched(content) }
            return
        }
        if mask & 5 == 5 || mask & 10 == 10 { return }
        if placeStarts.last?.place != place { placeStarts.append((scalars.count, place)) }
        // A side's inserts that are not looked at are only text the other side does not hold:
        // one element stands for a run of them.
        if (mask == 1 && !mine) || (mask == 2 && !theirs) {
            if masks.last != mask { add(content.prefix(1), mask: mask) }
        } else {
            // An untouched run holds at most 3 * context elements, and a slide or a score reads
            // at most that far, plus two, into an edited run from either end (`touchesDeletion`).
            let start = masks.last == mask ? runStarts[runStarts.count - 1] : scalars.count
            appendCapped(content, mask: mask, from: start, keeping: 3 * context + 3, barrier: false)
        }
        stretchStart = scalars.count
    }

    /// The place of the edited element at `k` (-1 for untouched text).
    func place(of k: Int) -> Int {
        guard masks[k] != 0 && masks[k] != Self.barrier else { return -1 }
        var lo = 0, hi = placeStarts.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if placeStarts[mid].element <= k { lo = mid + 1 } else { hi = mid }
        }
        return placeStarts[lo - 1].place
    }

    private mutating func add(_ content: some Collection<Unicode.Scalar>, mask: UInt8) {
        if masks.last != mask && !content.isEmpty { runStarts.append(scalars.count) }
        scalars.append(contentsOf: content)
        masks.append(contentsOf: repeatElement(mask, count: content.count))
    }

    /// Appends untouched text. A stretch longer than three times `context` keeps its first and
    /// last `context` elements, with a barrier between.
    private mutating func appendUntouched(_ content: ArraySlice<Unicode.Scalar>) {
        appendCapped(content, mask: 0, from: stretchStart, keeping: context, barrier: true)
    }

    /// Appends `content` with `mask` to the stretch of elements with that mask that starts at
    /// `start`: a stretch longer than three times `keep` keeps its first and last `keep`
    /// elements, with a barrier between if `barrier`.
    private mutating func appendCapped(_ content: ArraySlice<Unicode.Scalar>, mask: UInt8, from start: Int, keeping keep: Int, barrier: Bool) {
        let head = min(content.count, max(0, keep - (scalars.count - start)))
        add(content.prefix(head), mask: mask)
        let rest = content.dropFirst(head)
        guard scalars.count - start + rest.count > 3 * keep else {
            add(rest, mask: mask)
            return
        }
        let tailStart = start + keep
        var tail: [Unicode.Scalar] = []
        if rest.count < keep {
            let kept = zip(scalars[tailStart...], masks[tailStart...]).filter { $0.1 == mask }.map(\.0)
            tail = Array(kept.suffix(keep - rest.count))
        }
        tail += rest.suffix(keep)
        scalars.removeSubrange(tailStart...)
        masks.removeSubrange(tailStart...)
        while let last = runStarts.last, last >= tailStart { runStarts.removeLast() }
        if barrier { add(CollectionOfOne(" "), mask: Self.barrier) }
        add(tail, mask: mask)
    }

    /// A stretch of a body, as `append` takes it.
    struct Piece {
        var content: ArraySlice<Unicode.Scalar>
        var mask: UInt8
        var deleted: Bool
        var place: Int
    }

    /// `insertsAtDeletedEdges()` of an `EditedText` given all of `pieces` in order, computed on
    /// fewer of them: only around the inserts it looks at. Untouched text long enough to get a
    /// barrier (more than three times `context` elements between two edited pieces) cuts the
    /// body into clusters that cannot see each other: no walk, slide or score crosses a barrier,
    /// and what is read past one (up to two elements, by `baseElements`) lies in that same
    /// untouched stretch. So each run of clusters holding such an insert is appended on its own,
    /// with the whole untouched stretch before and after it, and the rest is never copied (a long
    /// history edited all over, merged with a few edits elsewhere, had the whole body copied).
    static func insertsAtDeletedEdges(of pieces: [Piece], mine: Bool, theirs: Bool, context: Int = 1_000) -> [Int] {
        guard mine || theirs else { return [] }
        // The long untouched stretches, as piece ranges (pieces `append` passes over included).
        var stretches: [Range<Int>] = []
        // Whether each cluster (the pieces between two long stretches) holds an insert looked at.
        var relevant: [Bool] = [false]
        var stretchStart = 0, untouched = 0
        for (k, p) in pieces.enumerated() where !p.content.isEmpty {
            if p.mask == 0 {
                if !p.deleted { untouched += p.content.count }
                continue
            }
            if p.mask & 5 == 5 || p.mask & 10 == 10 { continue }
            if untouched > 3 * context {
                stretches.append(stretchStart ..< k)
                relevant.append(false)
            }
            stretchStart = k + 1
            untouched = 0
            if (p.mask == 1 && mine) || (p.mask == 2 && theirs) { relevant[relevant.count - 1] = true }
        }
        if untouched > 3 * context { stretches.append(stretchStart ..< pieces.count) }
        var out: [Int] = []
        var c = 0
        while c < relevant.count {
            guard relevant[c] else { c += 1; continue }
            var last = c
            while last + 1 < relevant.count && relevant[last + 1] { last += 1 }
            // Clusters c ... last, with the stretch before c and the one after last.
            let from = c == 0 ? 0 : stretches[c - 1].lowerBound
            let to = last < stretches.count ? stretches[last].upperBound : pieces.count
            var text = EditedText(mine: mine, theirs: theirs, context: context)
            for p in pieces[from ..< to] { text.append(p.content, mask: p.mask, deleted: p.deleted, place: p.place) }
            out += text.insertsAtDeletedEdges()
            c = last + 1
        }
        return out
    }

    /// One side's bits.
    private struct Side {
        var inserted: UInt8, deleted: UInt8, otherInserted: UInt8, otherDeleted: UInt8
    }

    /// The places holding text one side added that belongs with text only the other side
    /// deleted (see the type), in no particular order.
    func insertsAtDeletedEdges() -> [Int] {
        var out: [Int] = []
        let n = masks.count
        let sides = [Side(inserted: 1, deleted: 4, otherInserted: 2, otherDeleted: 8),
                     Side(inserted: 2, deleted: 8, otherInserted: 1, otherDeleted: 4)]
        // Each side's inserts in one pass over the runs: the last element of the last insert
        // looked at, per side.
        var done = [mine ? -1 : n, theirs ? -1 : n]
        for run in runStarts.indices {
            let i = runStarts[run], mask = masks[i]
            guard mask == 1 || mask == 2, i > done[Int(mask) - 1] else { continue }
            let side = sides[Int(mask) - 1]
            // Elements this side's text does not hold (the other side's inserts, its own deletions).
            let unseen = side.otherInserted | side.deleted
            // The insert, as this side reads it, from i to last; its neighbours there are l and r.
            var last = i, r = i, cleanRight = true
            for next in run ..< runStarts.count {
                r = runStarts[next]
                if masks[r] == side.inserted {
                    cleanRight = true
                } else if masks[r] & unseen != 0 {
                    cleanRight = false
                } else {
                    break
                }
                r = next + 1 < runStarts.count ? runStarts[next + 1] : n
                if masks[r - 1] == side.inserted { last = r - 1 }
            }
            done[Int(mask) - 1] = last
            var l = i - 1, cleanLeft = true
            while l >= 0 && masks[l] & unseen != 0 {
                l = edge(of: l, -1)
                cleanLeft = false
            }
            let left = touchesDeletion(l, -1, clean: cleanLeft, side)
            let right = touchesDeletion(r, 1, clean: cleanRight, side)
            if left || right {
                let joinsLeft = join(l, scalars[i]), joinsRight = join(r, scalars[last])
                if (left && right) || (left && joinsLeft > 0 && joinsLeft >= joinsRight)
                    || (right && joinsRight > 0 && joinsRight >= joinsLeft) {
                    out.append(place(of: i))
                }
            }
        }
        return out
    }

    /// The first element past the run holding element `k`, going in `direction` (-1 or 1):
    /// -1 or `masks.count` past the ends.
    private func edge(of k: Int, _ direction: Int) -> Int {
        var lo = 0, hi = runStarts.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if runStarts[mid] <= k { lo = mid + 1 } else { hi = mid }
        }
        // runStarts[lo - 1] starts the run holding k.
        return direction < 0 ? runStarts[lo - 1] - 1 : lo < runStarts.count ? runStarts[lo] : masks.count
    }

    /// Up to two elements of the body's text (its inserts left out) from `k` on in `direction`,
    /// nearest first; a barrier reads as a letter.
    private func baseElements(from k: Int, _ direction: Int) -> (first: Unicode.Scalar, second: Unicode.Scalar, count: Int) {
        var found: (first: Unicode.Scalar, second: Unicode.Scalar, count: Int) = (" ", " ", 0)
        var j = k
        while j >= 0 && j < masks.count && found.count < 2 {
            if masks[j] & 3 == 0 {
                let c: Unicode.Scalar = masks[j] == Self.barrier ? "a" : scalars[j]
                if found.count == 0 { found.first = c } else { found.second = c }
                found.count += 1
            }
            j += direction
        }
        return found
    }

    /// How strongly an insert whose end element is `end` runs into the element at `k` (its
    /// neighbour in its side's text): 0 for none (a line break either side, or no element),
    /// 1 a space, 2 punctuation, 3 a letter or digit.
    private func join(_ k: Int, _ end: Unicode.Scalar) -> Int {
        guard k >= 0 && k < masks.count, !Self.isBreak(end) else { return 0 }
        if masks[k] == Self.barrier { return 3 }
        let c = scalars[k]
        if Self.isBreak(c) { return 0 }
        if c.properties.isWhitespace { return 1 }
        return Self.isWordy(c) ? 3 : 2
    }

    static func isBreak(_ c: Unicode.Scalar) -> Bool { c == "\n" || c == "\r" }
    static func isWordy(_ c: Unicode.Scalar) -> Bool {
        c.properties.isAlphabetic || c.properties.numericType != nil
            || [.nonspacingMark, .spacingMark, .enclosingMark].contains(c.properties.generalCategory)
    }

    /// Whether the insert whose neighbour (in its side's text) on the `direction` side (-1 left,
    /// 1 right) is `k` lies against text only the other side deleted, the deletion read where
    /// `TextDiff` would put it among the placements that give the merged text (see the type).
    /// `clean`: nothing lies between the insert and `k` (else the deletion is not slid).
    private func touchesDeletion(_ k: Int, _ direction: Int, clean: Bool, _ side: Side) -> Bool {
        let n = masks.count
        func within(_ j: Int) -> Bool { j >= 0 && j < n }
        guard within(k) else { return false }
        // The deletion runs from t (its end nearest the insert) to u (just past its far end),
        // d untouched elements away.
        var t = k
        if masks[k] != side.otherDeleted {
            guard clean && masks[k] == 0 else { return false }
            t = edge(of: k, direction)
            guard within(t) && masks[t] == side.otherDeleted else { return false }
        }
        let u = edge(of: t, direction)
        let d = abs(t - k)
        // It slides only between untouched text (or the body's ends).
        guard clean && (!within(u) || masks[u] == 0) else { return d == 0 }
        // Toward the insert, d elements: each element it takes must equal the one it gives up.
        for m in stride(from: 1, through: d, by: 1) where scalars[t - m * direction] != scalars[u - m * direction] {
            return false
        }
        // Away from it, as far as it goes.
        var away = 0
        while within(u + away * direction) && masks[u + away * direction] == 0
            && scalars[t + away * direction] == scalars[u + away * direction] {
            away += 1
        }
        if away == 0 && d == 0 { return true }
        // The text the placements span (the deletion and untouched text, elements low ..< high),
        // with up to two elements of the body's text (its inserts left out) either side, read
        // in place, to score where each placement begins and ends.
        let low = direction > 0 ? k : u + 1 - away, high = direction > 0 ? u + away : k + 1
        let before = baseElements(from: low - 1, -1), after = baseElements(from: high, 1)
        let span = high - low, count = before.count + span + after.count
        func at(_ p: Int) -> Unicode.Scalar {
            p < before.count ? (p == before.count - 1 ? before.first : before.second)
                : p < before.count + span ? scalars[low + p - before.count]
                : (p == before.count + span ? after.first : after.second)
        }
        let offset = before.count - low
        // Each placement from left to right, as a shift s (toward the insert is negative): its
        // ends are the gaps before elements t + s and u + s going right, u + 1 - s and t + 1 - s
        // going left. The last best is taken, as `cleanupLossless` does.
        var best = 0, bestScore = -1
        for step in 0 ... d + away {
            let s = direction > 0 ? step - d : away - step
            let (start, end) = direction > 0 ? (t + s, u + s) : (u + 1 - s, t + 1 - s)
            let score = TextDiff.boundaryScore(at, count, start + offset) + TextDiff.boundaryScore(at, count, end + offset)
            if score >= bestScore { (best, bestScore) = (s, score) }
        }
        return best == -d
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
    /// Each segment's (agent, start) packed into one integer that orders as the pair does
    /// (`key(_:_:)`), for the searches; empty when an agent number is too large to pack.
    private var keys: [UInt64] = []

    /// (agent, place) as one integer ordered as the pair: an agent's places reach at most 2^32
    /// (33 bits), and agent numbers index a log's replica table, so they stay far below 2^31.
    @inline(__always) private static func key(_ agent: UInt32, _ place: Int) -> UInt64 {
        UInt64(agent & (1 << 31 - 1)) << 33 | UInt64(place)
    }

    init(_ lists: [[IDRun]]) {
        precondition(lists.count <= 8, "at most eight lists")
        // Each run gives two events: list k starts holding ids at one place and stops at another.
        var events: [(key: UInt64, agent: UInt32, list: Int, delta: Int)] = []
        events.reserveCapacity(2 * lists.reduce(0) { $0 + $1.count })
        var packable = true
        for (k, list) in lists.enumerated() {
            for r in list where r.count > 0 {
                packable = packable && r.first.agent < 1 << 31
                events.append((Self.key(r.first.agent, Int(r.first.counter)), r.first.agent, k, 1))
                events.append((Self.key(r.first.agent, Int(r.first.counter) + r.count), r.first.agent, k, -1))
            }
        }
        if packable {
            events = Self.sortedByKey(events)
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
        if packable { keys = segments.map { Self.key($0.agent, $0.start) } }
    }

    /// `events` ordered by key, events of equal keys in any order (they are taken together).
    /// By digits when the places fit 32 bits and the agents are few (`RadixSort` on the places,
    /// then a counting sort by agent, both stable): a comparison sort of the tens of thousands of
    /// events of a long history took most of the search's setup.
    private static func sortedByKey(_ events: [(key: UInt64, agent: UInt32, list: Int, delta: Int)]) -> [(key: UInt64, agent: UInt32, list: Int, delta: Int)] {
        var places: [UInt32] = []
        places.reserveCapacity(events.count)
        var largestAgent: UInt32 = 0
        for e in events {
            let place = e.key & (1 << 33 - 1)
            guard place <= UInt64(UInt32.max) else { return events.sorted { $0.key < $1.key } }
            places.append(UInt32(place))
            largestAgent = max(largestAgent, e.agent)
        }
        guard Int(largestAgent) <= events.count + 1_024 else { return events.sorted { $0.key < $1.key } }
        let byPlace = RadixSort.order(of: places)
        // Where each agent's events start, then each event put after those of smaller agents.
        var start = [Int](repeating: 0, count: Int(largestAgent) + 2)
        for e in events { start[Int(e.agent) + 1] += 1 }
        for a in 1 ..< start.count { start[a] += start[a - 1] }
        var out = events
        for i in byPlace {
            let a = Int(events[i].agent)
            out[start[a]] = events[i]
            start[a] += 1
        }
        return out
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
        guard !keys.isEmpty, id.agent < 1 << 31 else { return coversComparingPairs(i, id) }
        let k = Self.key(id.agent, Int(id.counter))
        return keys.withUnsafeBufferPointer { keys in
            (i < 0 || keys[i] <= k) && (i + 1 == keys.count || keys[i + 1] > k)
        }
    }

    private func coversComparingPairs(_ i: Int, _ id: LocalID) -> Bool {
        let counter = Int(id.counter)
        if i >= 0 && (segments[i].agent, segments[i].start) > (id.agent, counter) { return false }
        return i + 1 == segments.count || (segments[i + 1].agent, segments[i + 1].start) > (id.agent, counter)
    }

    /// The index of the last segment starting at or before `id` (in (agent, counter) order), or -1.
    private func lastSegment(atOrBefore id: LocalID) -> Int {
        guard !keys.isEmpty || segments.isEmpty, id.agent < 1 << 31 else { return lastSegmentComparingPairs(atOrBefore: id) }
        let k = Self.key(id.agent, Int(id.counter))
        return keys.withUnsafeBufferPointer { keys in
            var lo = 0, hi = keys.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if keys[mid] <= k { lo = mid + 1 } else { hi = mid }
            }
            return lo - 1
        }
    }

    private func lastSegmentComparingPairs(atOrBefore id: LocalID) -> Int {
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
