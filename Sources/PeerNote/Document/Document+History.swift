#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Document {
    /// Every change, in causal order (oldest first).
    public var history: [HistoryEntry] {
        (0 ..< log.changes.count).map(historyEntry)
    }

    func historyEntry(_ ci: Int) -> HistoryEntry {
        let c = log.changes[ci]
        let parts = summaryParts(ofChange: ci)
        return HistoryEntry(id: log.changeID(ci), author: log.author(of: ci), time: Date(timeIntervalSince1970: TimeInterval(c.time)),
                            message: log.message(of: ci), dependencies: log.deps(of: ci).map(log.changeID).sorted(),
                            operationCount: c.length, summary: parts.map(\.text).joined(separator: "; "), summaryParts: parts)
    }

    /// A one-line account of a change in note terms, in parts, e.g. `added "Milk"` and
    /// `edited "Plan" (+12 −3)` (`HistoryEntry.summary` joins them with "; ").
    func summaryParts(ofChange ci: Int) -> [SummaryPart] {
        struct Tally { var created = false, title: String?, inserted = 0, deleted = 0, tagsAdded: [String] = [], tagsRemoved: [String] = []
                       var priority: Priority?, removed = false, restored = false, moved = false, unknown = 0 }
        // The notes in the order first touched, each with its tally (a change that made a whole
        // notebook touches every note: one small index entry a note, and the ops visited in place).
        var order: [LocalID] = []
        var tallies: [Tally] = []
        var index: [LocalID: Int] = [:]
        var notebookTitle: String?
        var unknown = 0
        let firstID = LocalID(agent: log.changes[ci].agent, counter: log.changes[ci].counterStart)
        let startLV = log.changes[ci].lvStart
        // Room for every note the change can touch (at most one a unit, and no more than the
        // notebook holds), made once: an import touches every note, and arrays grown by
        // doubling would hold two copies of its tallies at each step.
        let touchable = Swift.min(log.changes[ci].length, state.noteStates.count)
        // A change that may touch many notes finds a note's tally by its slot in the state (four
        // bytes a note of the notebook), not in a table of its own keyed by the note's id.
        var bySlot: [Int32] = touchable > 1024 ? Array(repeating: -1, count: state.noteStates.count) : []
        if touchable > 16 {
            order.reserveCapacity(touchable)
            tallies.reserveCapacity(touchable)
            if bySlot.isEmpty { index.reserveCapacity(touchable) }
        }
        // The tally of note `n`, made when `n` is first touched.
        func tally(of n: LocalID) -> Int {
            let slot = bySlot.isEmpty ? nil : state.slot(of: n)
            if let slot, bySlot[slot] >= 0 { return Int(bySlot[slot]) }
            if slot == nil, let known = index[n] { return known }
            let k = tallies.count
            if let slot { bySlot[slot] = Int32(k) } else { index[n] = k }
            order.append(n)
            tallies.append(Tally())
            return k
        }
        func touch(_ n: LocalID, _ f: (inout Tally) -> Void) {
            f(&tallies[tally(of: n)])
        }
        log.forEachOp(ofChange: ci) { op in
            switch op.body {
            case .setNotebookTitle(let t, _): notebookTitle = t
            case .createNote: touch(firstID.advanced(by: op.lv - startLV)) { $0.created = true }
            case .setNoteTitle(let n, let v, _): touch(n) { $0.title = v }
            case .insertText(let n, _, _, _): touch(n) { $0.inserted += op.length }
            case .deleteText(let n, _, _): touch(n) { $0.deleted += op.length }
            // (A note the change made is summarized as added: its tags are not listed.)
            case .addTag(let n, let t): touch(n) { if !$0.created { $0.tagsAdded.append(t) } }
            case .removeTag(let n, let t, _): touch(n) { if !$0.created { $0.tagsRemoved.append(t) } }
            case .setPriority(let n, let p, _): touch(n) { $0.priority = p }
            case .deleteNote(let n, _): touch(n) { $0.removed = true }
            case .restoreNote(let n, _): touch(n) { $0.restored = true }
            case .moveNote(let n, _, _, _): touch(n) { $0.moved = true }
            case .unknown: unknown += 1
            }
        }
        var parts: [SummaryPart] = []
        parts.reserveCapacity(order.count + (notebookTitle == nil ? 0 : 1) + (unknown > 0 ? 1 : 0))
        // An empty title reads as the tools show it elsewhere (show, textconv: "(untitled notebook)").
        if let t = notebookTitle { parts.append(SummaryPart(kind: .notebookTitle, text: t.isEmpty ? "left the notebook untitled" : "titled notebook \"\(t)\"")) }
        for (n, t) in zip(order, tallies) {
            let name = "\"\(state.note(n)?.title.value ?? "?")\""
            let id = noteID(n)
            if t.created { parts.append(SummaryPart(kind: .added, text: "added \(t.title.map { "\"\($0)\"" } ?? name)", note: id)); continue }
            if t.removed { parts.append(SummaryPart(kind: .deleted, text: "deleted \(name)", note: id)); continue }
            var what: [String] = []
            if t.restored { what.append("restored") }
            if let v = t.title { what.append("retitled \"\(v)\"") }
            if t.inserted > 0 || t.deleted > 0 { what.append("edited (+\(t.inserted) −\(t.deleted))") }
            if !t.tagsAdded.isEmpty { what.append(Self.tagSummary("tagged", t.tagsAdded)) }
            if !t.tagsRemoved.isEmpty { what.append(Self.tagSummary("untagged", t.tagsRemoved)) }
            if let p = t.priority { what.append("priority \(p.rawValue)") }
            if t.moved { what.append("moved") }
            let current = state.note(n)?.title.value ?? "?"
            parts.append(SummaryPart(kind: .changed, text: what.joined(separator: ", ") + (t.title == nil ? " " + name : (t.title == current ? "" : " (now \(name))")), note: id))
        }
        if unknown > 0 { parts.append(SummaryPart(kind: .newerFormat, text: "\(unknown) op(s) of a newer format version")) }
        return parts
    }

    /// The tags a change added to or removed from one note, for its summary part, e.g. `tagged
    /// home, todo`: each tag once (removes name adds, and one tag may have many), in the order
    /// first named, as many as fit in `width` characters (at least one), then `and N more`, as
    /// `pnmerge log` cuts a summary of many notes. So a change that adds or removes thousands of
    /// tags still has a one-line summary.
    static func tagSummary(_ verb: String, _ tags: [String], width: Int = 120) -> String {
        var seen = Set<String>()
        let distinct = tags.filter { seen.insert($0).inserted }
        var text = verb
        var length = verb.count
        var shown = 0
        for tag in distinct {
            let piece = (shown == 0 ? " " : ", ") + tag
            // Room for " and N more" unless this is the last tag.
            let reserve = shown + 1 == distinct.count ? 0 : 20
            if shown > 0 && length + piece.count + reserve > width { break }
            text += piece
            length += piece.count
            shown += 1
        }
        if shown < distinct.count { text += " and \(distinct.count - shown) more" }
        return text
    }

    /// The notebook as it was just after `change` (and everything in its causal past).
    public func notebook(at change: ChangeID) throws(PeerNoteError) -> Notebook {
        guard let ci = log.changeIndex(of: change) else { throw .noSuchChange(change.fullDescription) }
        let vv = log.versionVector(of: [ci])
        var past = DocState()
        // In the canonical order, as the document's own state (`DocState.canonical`).
        for i in log.canonicalOrder() where log.changes.seq(i) <= vv[Int(log.changes.agent(i))] {
            let c = log.changes[i]
            for op in log.ops(ofChange: i) {
                let id = log.localID(ofLV: op.lv, change: i)
                let lamport = c.lamport + UInt64(op.lv - c.lvStart)
                do { try past.apply(op, id: id, lamport: lamport, replicas: log.replicas, text: log.textView) } catch {
                    throw .invalidDocument(offset: nil, message: "history is inconsistent at change \(log.changeID(i)): \(error)")
                }
            }
        }
        let view = Document(id: id, genesis: genesis, log: log, state: past, replica: replica, author: author)
        return view.notebook
    }

    /// Finds a change by its full or short text form (`SEQ@REPLICA`, replica as a hex prefix).
    public func findChange(_ text: String) throws(PeerNoteError) -> ChangeID {
        let parts = text.lowercased().split(separator: "@")
        guard parts.count == 2, let seq = UInt32(parts[0]) else { throw .noSuchChange(text) }
        let matches = log.replicas.filter { $0.description.hasPrefix(parts[1]) }.map { ChangeID(replica: $0, seq: seq) }
            .filter { log.changeIndex(of: $0) != nil }
        if matches.count > 1 { throw .ambiguousChange(text, candidates: matches.map(\.fullDescription).sorted()) }
        guard matches.count == 1 else { throw .noSuchChange(text) }
        return matches[0]
    }
}
