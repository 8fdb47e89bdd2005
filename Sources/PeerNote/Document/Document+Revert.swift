#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Consecutive changes of one replica, `first ... last` by seq: how a command line names many
/// changes at once (`5-12@3fa9c1d0`; one change is `5@3fa9c1d0`), as `pnmerge merge` gives the
/// changes a merge brought in.
public struct ChangeRange: Hashable, Sendable, CustomStringConvertible {
    public var replica: ReplicaID
    public var first: UInt32
    public var last: UInt32

    public init(replica: ReplicaID, first: UInt32, last: UInt32) {
        self.replica = replica
        self.first = first
        self.last = max(first, last)
    }

    /// The changes it names, oldest first.
    public var changes: [ChangeID] { (first ... last).map { ChangeID(replica: replica, seq: $0) } }

    /// `5@3fa9c1d0` or `5-12@3fa9c1d0` (the replica's first 8 hex digits).
    public var description: String { (first == last ? "\(first)" : "\(first)-\(last)") + "@\(replica.short)" }

    /// `ids` as ranges: each replica's consecutive seqs joined, replicas in their order, each
    /// replica's ranges by seq.
    public static func ranges(of ids: [ChangeID]) -> [ChangeRange] {
        var out: [ChangeRange] = []
        for id in Set(ids).sorted() {
            if let last = out.last, last.replica == id.replica, Int(last.last) + 1 == Int(id.seq) {
                out[out.count - 1].last = id.seq
            } else {
                out.append(ChangeRange(replica: id.replica, first: id.seq, last: id.seq))
            }
        }
        return out
    }
}

/// What `Document.revert(_:message:)` did: the change it recorded (nil when there was nothing
/// left to undo), the notes it touched, and what it left as it is, and why.
public struct RevertResult: Sendable {
    /// The changes reverted, oldest first.
    public var reverted: [ChangeID]
    /// The change that undoes them; nil when they had nothing left to undo.
    public var change: ChangeID?
    /// The message recorded with `change` ("" when nothing was recorded).
    public var message: String
    /// What the new change did, in note terms (as `HistoryEntry.summaryParts` tells a change).
    public var summaryParts: [SummaryPart]
    /// What was not undone, one line each (a value written since, a tag another change also
    /// added, ops of a newer format version).
    public var notices: [RevertNotice]
}

/// Something a revert left as it is, and why, in one line a user can act on.
public struct RevertNotice: Equatable, Sendable, CustomStringConvertible {
    /// The note it is about; nil for the notebook's title and for ops of a newer format version.
    public var note: NoteID?
    public var message: String
    public var description: String { message }
}

extension Document {
    /// Finds the changes `text` names: one change (`SEQ@REPLICA`, as `findChange` reads it) or a
    /// run of one replica's changes (`FIRST-LAST@REPLICA`, both ends included). Throws when the
    /// text is neither, when a replica prefix matches several replicas, or when the document
    /// lacks any change of the run (`noSuchChange` naming the first one missing).
    public func findChanges(_ text: String) throws(PeerNoteError) -> [ChangeID] {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2 else { throw .noSuchChange(text) }
        let bounds = parts[0].split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2 else { return [try findChange(text)] }
        guard let first = UInt32(bounds[0]), let last = UInt32(bounds[1]), first >= 1, first <= last else {
            throw .invalidArgument("\"\(text)\" is not a run of changes: give FIRST-LAST@REPLICA with 1 ≤ FIRST ≤ LAST, as 5-12@3fa9c1d0")
        }
        let start = try findChange("\(first)@\(parts[1])")
        guard let agent = log.existingAgent(for: start.replica) else { throw .noSuchChange(text) }
        let count = log.changeCount(of: agent)
        guard Int(last) <= count else {
            throw .noSuchChange("\(max(Int(first), count + 1))@\(start.replica.short)")
        }
        return (first ... last).map { ChangeID(replica: start.replica, seq: $0) }
    }

    /// The changes a merge brought in (`summary` is what `merge(_:)` or `merged(with:)` returned
    /// for this document): per replica, those past the ones this copy held, as ranges. Empty
    /// when it brought nothing. Reverting them (`revert(_:message:)`) undoes what the merge
    /// brought in.
    public func changesBrought(by summary: MergeSummary) -> [ChangeRange] {
        guard let sides = summary.sides else { return [] }
        let log = self.log
        var out: [ChangeRange] = []
        for (a, replica) in log.replicas.enumerated() {
            let mine = sides.mine.count(of: a), theirs = sides.theirs.count(of: a)
            guard theirs > mine else { continue }
            out.append(ChangeRange(replica: replica, first: UInt32(mine + 1), last: UInt32(theirs)))
        }
        return out.sorted { ($0.replica, $0.first) < ($1.replica, $1.first) }
    }

    /// Records one new change that undoes what `changes` did, on top of everything this copy
    /// holds, so that it merges like any edit:
    /// - text they inserted is deleted (what is still visible of it; text others typed inside it stays);
    /// - text they deleted is inserted again at its place: new inserts whose origins are the
    ///   deleted elements around it (the last of each deleted stretch and what follows it), so
    ///   that it lands where it was; text one of `changes` itself inserted is not brought back;
    /// - register writes (a note's title, priority, place, deletion; the notebook's title) go back
    ///   to the value they replaced (following back through writes of `changes`), when the register
    ///   still holds the value they wrote; a register written since is left as it is, and a notice
    ///   says so;
    /// - tags they added are removed (that add; a tag another change also added stays, with a
    ///   notice), tags they removed are added again (unless one of `changes` had added them);
    /// - a note they created is deleted (and nothing else of theirs on it is undone); a note they
    ///   deleted is restored, one they restored is deleted again; a move puts the note back at the
    ///   place it had (a new place right after that one).
    /// - a note that stays deleted is left alone, with a notice (an edit of a deleted note would
    ///   read as made while it was deleted, a `Conflict.deletedWhileEdited`); a note the revert
    ///   restores is restored before the rest is undone, one it deletes is deleted after.
    ///
    /// Reverting the new change restores what `changes` did: its deletes are reinserted, its
    /// inserts deleted, its register writes go forward again. Ops of a newer format version are
    /// not undone (a notice counts them). The change's message is `message`, or one naming what it
    /// reverts. Nothing is recorded when nothing is left to undo (`RevertResult.change` is nil).
    /// Throws `noSuchChange` when the document lacks one of `changes` (recording nothing).
    ///
    /// - Complexity: O(m log n) for the m op units of `changes` in a history of n, plus one pass
    ///   over the body of each note whose text they edited.
    @discardableResult
    public func revert(_ changes: [ChangeID], message: String? = nil) throws(PeerNoteError) -> RevertResult {
        var indices: [Int] = []
        for id in changes {
            guard let ci = log.changeIndex(of: id) else { throw .noSuchChange(id.fullDescription) }
            indices.append(ci)
        }
        indices = Array(Set(indices)).sorted()
        let reverted = indices.map { log.changeID($0) }
        let plan = revertPlan(indices)
        guard !plan.steps.isEmpty else {
            return RevertResult(reverted: reverted, change: nil, message: "", summaryParts: [], notices: plan.notices)
        }
        let text = message ?? Self.revertMessage(reverted, messages: indices.map { log.message(of: $0) })
        transaction(message: text) {
            for step in plan.steps {
                switch step {
                case .op(let body):
                    appendLocal(body, length: 1)
                case .delete(let note, let target, let length):
                    appendLocal(.deleteText(note: note, target: target, reversed: false), length: length)
                case .insert(let note, let left, let right, let scalars):
                    let start = log.textCount
                    log.appendText(scalars)
                    appendLocal(.insertText(note: note, originLeft: left, originRight: right, contentStart: start), length: scalars.count)
                }
            }
        }
        let ci = log.changes.count - 1
        return RevertResult(reverted: reverted, change: log.changeID(ci), message: text, summaryParts: summaryParts(ofChange: ci), notices: plan.notices)
    }

    /// `Revert 3@3fa9c1d0: <its message's first line>` for one change, else `Revert ` and the
    /// changes as ranges (`Revert 2-9@3fa9c1d0, 4@a11ce001`).
    static func revertMessage(_ ids: [ChangeID], messages: [String]) -> String {
        if ids.count == 1 {
            let first = messages.first.flatMap { $0.split(separator: "\n", omittingEmptySubsequences: true).first }.map(String.init) ?? ""
            return "Revert \(ids[0])" + (first.isEmpty ? "" : ": " + first)
        }
        return "Revert " + ChangeRange.ranges(of: ids).map(\.description).joined(separator: ", ")
    }

    /// One op of a revert, in the order it is recorded.
    enum RevertStep {
        /// A register write, tag op or note deletion (one op unit).
        case op(OpBody)
        /// Deletes `length` visible elements of a body, `target` and the ids after it.
        case delete(note: LocalID, target: LocalID, length: Int)
        /// Inserts `scalars` into a body between `left` and `right`.
        case insert(note: LocalID, left: LocalID, right: LocalID, scalars: [Unicode.Scalar])
    }

    /// Which register a write goes to.
    private enum RegisterKey: Hashable {
        case notebookTitle
        case title(LocalID)
        case priority(LocalID)
        case deleted(LocalID)
        case position(LocalID)
    }

    /// The ops that undo changes `indices` (sorted), and what they leave as it is. Reads the log
    /// and the state only: the caller appends the steps once this has let go of both.
    private func revertPlan(_ indices: [Int]) -> (steps: [RevertStep], notices: [RevertNotice]) {
        let log = self.log
        let state = self.state
        var units = IDRanges()
        for ci in indices {
            let c = log.changes[ci]
            units.add(LocalID(agent: c.agent, counter: c.counterStart), count: c.length)
        }
        // What the changes did, gathered per note, notes in the order they were first touched.
        var noteOrder: [LocalID] = []
        var seenNotes: Set<LocalID> = []
        func touch(_ n: LocalID) { if seenNotes.insert(n).inserted { noteOrder.append(n) } }
        var created: [LocalID] = []
        var writes: [RegisterKey: [LocalID]] = [:]
        var registerOrder: [RegisterKey] = []
        var tagAdds: [LocalID: [(tag: String, id: LocalID)]] = [:]
        var tagRemoves: [LocalID: [(tag: String, removes: [LocalID])]] = [:]
        var inserted: [LocalID: IDRanges] = [:]
        var deleted: [LocalID: IDRanges] = [:]
        var unknown = 0
        func write(_ key: RegisterKey, _ id: LocalID) {
            if writes[key] == nil { registerOrder.append(key) }
            writes[key, default: []].append(id)
        }
        for ci in indices {
            log.forEachOp(ofChange: ci) { op in
                let id = log.localID(ofLV: op.lv, change: ci)
                switch op.body {
                case .setNotebookTitle: write(.notebookTitle, id)
                case .createNote: touch(id); created.append(id)
                case .setNoteTitle(let n, _, _): touch(n); write(.title(n), id)
                case .setPriority(let n, _, _): touch(n); write(.priority(n), id)
                case .deleteNote(let n, _), .restoreNote(let n, _): touch(n); write(.deleted(n), id)
                case .moveNote(let n, _, _, _): touch(n); write(.position(n), id)
                case .addTag(let n, let t): touch(n); tagAdds[n, default: []].append((t, id))
                case .removeTag(let n, let t, let removes): touch(n); tagRemoves[n, default: []].append((t, removes))
                case .insertText(let n, _, _, _): touch(n); inserted[n, default: IDRanges()].add(id, count: op.length)
                case .deleteText(let n, let target, let reversed):
                    touch(n)
                    deleted[n, default: IDRanges()].add(reversed ? target.advanced(by: -(op.length - 1)) : target, count: op.length)
                case .unknown: unknown += 1
                }
            }
        }
        units.normalize()
        for n in inserted.keys { inserted[n]?.normalize() }
        for n in deleted.keys { deleted[n]?.normalize() }
        var steps: [RevertStep] = []
        var notices: [RevertNotice] = []
        let createdSet = Set(created)

        // Each register's step. Edits of a deleted note would read as made while it was deleted
        // (a deleted-while-edited conflict), so a note is restored before anything else of it is
        // undone, deleted only after, and left alone while it stays deleted.
        var registerSteps: [RegisterKey: RevertStep] = [:]
        for key in registerOrder {
            switch key {
            case .title(let n), .priority(let n), .deleted(let n), .position(let n): if createdSet.contains(n) { continue }
            case .notebookTitle: break
            }
            guard let ids = writes[key], let step = revertRegister(key, writes: ids, units: units, log: log, state: state, notices: &notices) else { continue }
            registerSteps[key] = step
        }
        if let step = registerSteps[.notebookTitle] { steps.append(step) }
        var deletions: [RevertStep] = []
        for n in noteOrder where !createdSet.contains(n) {
            guard let ns = state.note(n) else { continue }
            let name = "note \(noteID(n).short) \"\((ns.title.value ?? "").clippedForMessage())\""
            var live = !ns.isDeleted
            if let step = registerSteps[.deleted(n)] {
                if case .op(.restoreNote) = step { steps.append(step); live = true } else { deletions.append(step) }
            }
            var edits: [RevertStep] = []
            for key in [RegisterKey.title(n), .priority(n), .position(n)] { if let step = registerSteps[key] { edits.append(step) } }
            // Tags they added: that add is removed; tags they removed come back.
            var removed: Set<ExactString> = []
            for (tag, group) in Self.grouped(tagAdds[n] ?? []) {
                let present = ns.adds(of: tag)
                let held = group.filter(present.contains)
                guard !held.isEmpty else { continue }
                edits.append(.op(.removeTag(note: n, tag, removes: held.sorted())))
                removed.insert(ExactString(tag))
                let others = present.filter { !held.contains($0) }
                if !others.isEmpty {
                    notices.append(RevertNotice(note: noteID(n), message: "\(name) keeps tag \"\(tag)\": \(Self.writers(others, log: log)) also added it"))
                }
            }
            var added: Set<ExactString> = []
            for (tag, removes) in tagRemoves[n] ?? [] {
                let key = ExactString(tag)
                guard !added.contains(key), !removed.contains(key), ns.adds(of: tag).isEmpty,
                      removes.contains(where: { !units.contains($0) }) else { continue }
                edits.append(.op(.addTag(note: n, tag)))
                added.insert(key)
            }
            // Text: one pass over the body in list order.
            if inserted[n] != nil || deleted[n] != nil {
                edits += revertText(of: n, body: ns.body, inserted: inserted[n] ?? IDRanges(), deleted: deleted[n] ?? IDRanges(), units: units)
            }
            if live {
                steps += edits
            } else if !edits.isEmpty {
                notices.append(RevertNotice(note: noteID(n), message: "\(name) is deleted: what the changes did to it is not undone (restore it, then revert again)"))
            }
        }
        // Notes they created are deleted, after everything else.
        for n in created {
            guard let ns = state.note(n), !ns.isDeleted else { continue }
            deletions.append(.op(.deleteNote(note: n, preds: ns.deleted.ids)))
        }
        steps += deletions
        if unknown > 0 {
            notices.append(RevertNotice(note: nil, message: "\(unknown) op(s) of a newer format version not undone (this version cannot tell what they did)"))
        }
        return (steps, notices)
    }

    /// `items` grouped by tag (exact scalars), tags in the order they first came.
    private static func grouped(_ items: [(tag: String, id: LocalID)]) -> [(String, [LocalID])] {
        var order: [ExactString] = []
        var groups: [ExactString: [LocalID]] = [:]
        for (tag, id) in items {
            let key = ExactString(tag)
            if groups[key] == nil { order.append(key) }
            groups[key, default: []].append(id)
        }
        return order.map { ($0.string, groups[$0] ?? []) }
    }

    /// The authors of the changes holding op units `ids`, each once, joined by ", ".
    private static func writers(_ ids: [LocalID], log: OpLog) -> String {
        var names: [String] = []
        for id in ids {
            guard let ci = log.changeIndex(containing: id) else { continue }
            let name = log.author(of: ci)
            let shown = name.isEmpty ? "<no author>" : name
            if !names.containsScalars(of: shown) { names.append(shown) }
        }
        return names.isEmpty ? "another change" : names.joined(separator: ", ")
    }

    /// The op that puts register `key` back to the value `writes` (op units of the reverted
    /// changes) replaced, or nil when there is nothing to do; a register none of `writes` holds
    /// any more (written since) gets a notice instead.
    private func revertRegister(_ key: RegisterKey, writes: [LocalID], units: IDRanges, log: OpLog, state: DocState,
                                notices: inout [RevertNotice]) -> RevertStep? {
        // The register's live writes, and the note's name for notices.
        let live: [LocalID]
        var name = "the notebook's title"
        var note: NoteID?
        switch key {
        case .notebookTitle: live = state.title.ids
        case .title(let n), .priority(let n), .deleted(let n), .position(let n):
            guard let ns = state.note(n) else { return nil }
            note = noteID(n)
            let noteName = "note \(noteID(n).short) \"\((ns.title.value ?? "").clippedForMessage())\""
            switch key {
            case .title: live = ns.title.ids; name = "the title of \(noteName)"
            case .priority: live = ns.priority.ids; name = "the priority of \(noteName)"
            case .deleted: live = ns.deleted.ids; name = "whether \(noteName) is deleted"
            default: live = ns.position.ids; name = "the place of \(noteName)"
            }
        }
        let writeSet = Set(writes)
        let held = live.filter(writeSet.contains).sorted()
        guard !held.isEmpty else {
            let since = live.filter { !units.contains($0) }
            if !since.isEmpty {
                notices.append(RevertNotice(note: note, message: "\(name) was written since by \(Self.writers(since, log: log)); left as it is"))
            }
            return nil
        }
        // The value before: the latest of the writes they overwrote, following back through
        // writes of the reverted changes themselves.
        var stack = held
        var seen = Set(held)
        var before: [LocalID] = []
        while let w = stack.popLast() {
            guard let body = log.op(at: w) else { continue }
            let preds: [LocalID]
            switch body {
            case .setNotebookTitle(_, let p), .setNoteTitle(_, _, let p), .setPriority(_, _, let p), .deleteNote(_, let p),
                 .restoreNote(_, let p), .moveNote(_, _, _, let p): preds = p
            default: preds = []
            }
            for p in preds where seen.insert(p).inserted {
                if units.contains(p) { stack.append(p) } else { before.append(p) }
            }
        }
        let previous = before.max { a, b in
            (log.lamport(of: a) ?? 0, log.replicas[Int(a.agent)]) < (log.lamport(of: b) ?? 0, log.replicas[Int(b.agent)])
        }
        let previousBody = previous.flatMap { log.op(at: $0) }
        let current = held.max { a, b in
            (log.lamport(of: a) ?? 0, log.replicas[Int(a.agent)]) < (log.lamport(of: b) ?? 0, log.replicas[Int(b.agent)])
        }.flatMap { log.op(at: $0) }
        switch key {
        case .notebookTitle:
            var value = ""
            if case .setNotebookTitle(let v, _)? = previousBody { value = v }
            if case .setNotebookTitle(let v, _)? = current, v.hasSameScalars(as: value) { return nil }
            return .op(.setNotebookTitle(value, preds: held))
        case .title(let n):
            var value = ""
            if case .setNoteTitle(_, let v, _)? = previousBody { value = v }
            if case .setNoteTitle(_, let v, _)? = current, v.hasSameScalars(as: value) { return nil }
            return .op(.setNoteTitle(note: n, value, preds: held))
        case .priority(let n):
            var value = Priority.normal
            if case .setPriority(_, let v, _)? = previousBody { value = v }
            if case .setPriority(_, let v, _)? = current, v == value { return nil }
            return .op(.setPriority(note: n, value, preds: held))
        case .deleted(let n):
            var value = false
            if case .deleteNote? = previousBody { value = true }
            let wrote: Bool
            if case .deleteNote? = current { wrote = true } else { wrote = false }
            guard wrote != value else { return nil }
            let others = live.filter { !writeSet.contains($0) }
            if !value, others.contains(where: { if case .deleteNote? = log.op(at: $0) { true } else { false } }) {
                notices.append(RevertNotice(note: note, message: "\(name): it stays deleted, as \(Self.writers(others, log: log)) also deleted it"))
            }
            return .op(value ? .deleteNote(note: n, preds: held) : .restoreNote(note: n, preds: held))
        case .position(let n):
            guard let place = previous else { return nil }
            let order = state.order
            let (left, right) = order.originsForInsert(after: place)
            return .op(.moveNote(note: n, originLeft: left, originRight: right, preds: held))
        }
    }

    /// The deletes and inserts that undo a reverted change's text edits in one note's body:
    /// visible elements of `inserted` are deleted (a delete per run of consecutive ids), and each
    /// stretch of consecutive elements of `deleted` (in list order; those `units` inserted left
    /// out) is inserted again right after its last element, before the element that follows it.
    /// A stretch is not inserted again when the text right after it already is that text, typed
    /// right after its last element (an earlier revert of the same change put it there): so
    /// reverting a change twice brings its deleted text back once.
    private func revertText(of note: LocalID, body: ListCRDT<Unicode.Scalar>, inserted: IDRanges, deleted: IDRanges, units: IDRanges) -> [RevertStep] {
        // The body in list order, tombstones included: ids, left origins, state, scalars.
        var ids: [LocalID] = [], lefts: [LocalID] = [], gone: [Bool] = [], scalars: [Unicode.Scalar] = []
        ids.reserveCapacity(body.totalCount)
        body.forEachRunWithOrigins { first, length, left, _, isDeleted in
            for k in 0 ..< length {
                ids.append(first.advanced(by: k))
                lefts.append(k == 0 ? left : first.advanced(by: k - 1))
                gone.append(isDeleted)
            }
        }
        body.forEachRun { _, _, _, content in scalars.append(contentsOf: content) }
        guard scalars.count == ids.count else { return [] }
        var steps: [RevertStep] = []
        var deleteStart = LocalID.none, deleteLength = 0
        var stretch: [Unicode.Scalar] = []
        var stretchLast = LocalID.none
        func flushDelete() {
            if deleteLength > 0 { steps.append(.delete(note: note, target: deleteStart, length: deleteLength)) }
            deleteLength = 0
        }
        /// Ends the stretch before element `next` (`ids.count`: the end of the body).
        func flushStretch(before next: Int) {
            defer { stretch = [] }
            guard !stretch.isEmpty else { return }
            let end = next + stretch.count
            if next < ids.count, lefts[next] == stretchLast, end <= ids.count,
               !gone[next ..< end].contains(true), scalars[next ..< end].elementsEqual(stretch) { return }
            steps.append(.insert(note: note, left: stretchLast, right: next < ids.count ? ids[next] : .none, scalars: stretch))
        }
        for i in ids.indices {
            let id = ids[i]
            if !gone[i], inserted.contains(id) {
                flushStretch(before: i)
                if deleteLength > 0, deleteStart.agent == id.agent, Int(deleteStart.counter) + deleteLength == Int(id.counter) {
                    deleteLength += 1
                } else {
                    flushDelete()
                    deleteStart = id
                    deleteLength = 1
                }
            } else if gone[i], deleted.contains(id), !units.contains(id) {
                flushDelete()
                stretch.append(scalars[i])
                stretchLast = id
            } else {
                flushDelete()
                flushStretch(before: i)
            }
        }
        flushDelete()
        flushStretch(before: ids.count)
        return steps
    }
}

/// A set of op unit ids, as runs per agent: what a revert looks ids up in.
///
/// Ranges are added in any order; `normalize()` then sorts and joins each agent's, which
/// `contains` needs (it asserts so).
/// - Complexity: `contains` is O(log r) for r ranges of the agent.
struct IDRanges: Sendable {
    private var ranges: [UInt32: [Range<Int>]] = [:]
    private var normalized = true

    mutating func add(_ first: LocalID, count: Int) {
        guard count > 0 else { return }
        ranges[first.agent, default: []].append(Int(first.counter) ..< Int(first.counter) + count)
        normalized = false
    }

    mutating func normalize() {
        guard !normalized else { return }
        for (agent, list) in ranges {
            var merged: [Range<Int>] = []
            for r in list.sorted(by: { $0.lowerBound < $1.lowerBound }) {
                if let last = merged.last, r.lowerBound <= last.upperBound {
                    merged[merged.count - 1] = last.lowerBound ..< max(last.upperBound, r.upperBound)
                } else {
                    merged.append(r)
                }
            }
            ranges[agent] = merged
        }
        normalized = true
    }

    func contains(_ id: LocalID) -> Bool {
        assert(normalized, "normalize() after adding")
        guard let list = ranges[id.agent] else { return false }
        let c = Int(id.counter)
        var lo = 0, hi = list.count - 1
        while lo <= hi {
            let mid = (lo + hi) / 2
            if c < list[mid].lowerBound { hi = mid - 1 } else if c >= list[mid].upperBound { lo = mid + 1 } else { return true }
        }
        return false
    }
}

extension OpLog {
    /// The body of the op holding unit `id` (as stored: a text op's whole run), if the log has it.
    func op(at id: LocalID) -> OpBody? {
        guard let lv = lv(of: id) else { return nil }
        return ops[opIndex(containingLV: lv)].body
    }
}
