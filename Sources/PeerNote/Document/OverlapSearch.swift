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
