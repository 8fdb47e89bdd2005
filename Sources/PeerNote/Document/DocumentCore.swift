#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Everything a local edit changes or reads: the op log, the state it produces, the open
/// transaction, and who makes the edits. `Document` keeps it in one stored property, so that
/// an edit is one exclusive access to it (a class's stored properties are checked on every
/// access, and an edit would make about fifteen such checks). The time of a change is read from
/// the document's clock outside it (the clock is the caller's code and may read the document)
/// and passed in.
struct DocumentCore: Sendable {
    var log: OpLog
    var state: DocState
    /// This session's agent in `log`.
    let agent: UInt32
    /// The name recorded as author of the changes it opens.
    var author: String
    /// The document's clock when one was set (see `Document.clock`); nil: the system clock.
    /// Called only outside an access to the core.
    var customClock: (@Sendable () -> Date)?
    var transactionDepth = 0
    var transactionMessage = ""
    /// The change the open transaction's ops go to, once its first op opened it.
    var openChange: Int?
    /// The note the last text edit named, so that typing does not hash its id on every
    /// keystroke. Its slot stays valid: a log's agent numbers and a state's note slots never
    /// change once assigned (both only grow; a failed merge takes back only the agents and
    /// slots it added, which no edit named in between); checked anyway, in case a whole new
    /// state is ever assigned. That the note is live is known only until a note is deleted or
    /// restored.
    var textTarget = TextTarget(id: nil, note: .none, slot: -1, deletionEpoch: -1)
    /// Keystrokes recorded but not yet applied (see `Burst`). Everything that reads or changes
    /// the log or the state applies them first (`flushBurst`): `Document`'s `log` and `state`
    /// accessors do, and so does every edit here that does not join the burst.
    var burst = Burst()
    /// Whether keystrokes are gathered into bursts (tests turn it off to compare the two ways).
    var buffersKeystrokes = true

    /// A note named by its public id, with its local id and its slot in `DocState.noteStates`.
    struct TextTarget: Sendable {
        var id: NoteID?
        var note: LocalID
        var slot: Int
        /// `DocState.deletionEpoch` when the note was found live.
        var deletionEpoch: Int
    }

    init(log: OpLog, state: DocState, agent: UInt32, author: String) {
        self.log = log
        self.state = state
        self.agent = agent
        self.author = author
    }

    /// Keystrokes typed or deleted one after another in one note, each its own change (or a few in
    /// one transaction's change), that continue what the log and the list end with: typing on
    /// from the last insert, or deleting one character at a time backwards (backspace) or
    /// forwards (delete). Applied one by one, each would join the last change's run, extend the
    /// last op and extend or cut one run of the list: the same work, keystroke after keystroke.
    /// A burst records them (the text, each change's units, where they go) and applies them at
    /// once, when anything else reads or edits the document: the changes with one run
    /// extension, the ops with one extension per run of ids, the list with one extension or
    /// one deletion per run. The log and the list end exactly as the keystrokes one by one
    /// leave them (the tests check it op by op and byte by byte).
    ///
    /// Invariants, while `kind` is not `.none`: nothing has touched the log or the state since
    /// the burst's first keystroke was checked against them (`startTypingBurst`,
    /// `startDeleteBurst`), and every later keystroke continued the one before; the changes
    /// join the last change's run (by `agent`, at `time`, with `meta`); `openChange`, when
    /// set, is the index the burst's last change will have.
    struct Burst: Sendable {
        enum Kind: Sendable { case none, typing, deleting }
        var kind = Kind.none
        /// The note (its `id` is set while `kind` is not `.none`).
        var target = TextTarget(id: nil, note: .none, slot: -1, deletionEpoch: -1)
        var time: Int64 = 0
        var meta = ChangeTable.Meta(author: 0, message: 0, extra: 0)
        /// The message of the burst's changes ("" outside a transaction).
        var message = ""
        /// Per change: how many units (scalars typed, or keystrokes deleting) it holds.
        var lengths = ChangeLengths()
        /// All of them.
        var total = 0
        /// Typing: the scalars typed.
        var scalars: [Unicode.Scalar] = []
        /// Typing: where the first scalar goes. Deleting: where the first keystroke deleted.
        var start = 0
        /// Typing: whether the first keystroke continues the list's run typed last and the last
        /// op (else the burst's text is integrated where it goes, as one insert).
        var continuesRun = false
        /// Deleting: +1 forwards (each keystroke at `start`), -1 backwards (each one to the left
        /// of the one before), 0 while one keystroke cannot tell.
        var direction = 0

        var isEmpty: Bool { kind == .none }

        /// The longest text (in UTF-8 bytes) a burst takes: keystrokes, not pastes, which are
        /// applied at once (buffering them would only copy them once more).
        static let longestText = 64
        /// The buffers' capacity kept between bursts; a longer burst's is let go once applied.
        static let keptCapacity = 1 << 14

        /// Where the next keystroke must go to continue the burst (typing, or deleting forwards).
        var typingEnd: Int { start + total }
    }

    /// Whether the next local op opens a change (and so needs the time).
    var opensChange: Bool { transactionDepth == 0 || openChange == nil }

    /// What stamps the change the next local op opens, if it opens one.
    enum ChangeClock {
        case noChange
        case system
        case custom(@Sendable () -> Date)
    }

    /// The clock, when the next local op opens a change (one read of the core, not two).
    var changeClock: ChangeClock {
        guard opensChange else { return .noChange }
        return customClock.map(ChangeClock.custom) ?? .system
    }

    mutating func beginTransaction(message: String) {
        if transactionDepth == 0 { transactionMessage = message; openChange = nil }
        transactionDepth += 1
    }

    mutating func endTransaction() {
        transactionDepth -= 1
        if transactionDepth == 0 { openChange = nil }
    }

    // MARK: Notes

    /// The local id and slot of the live note `id`, which a text edit names (the last one is
    /// kept, so that a run of keystrokes looks it up once); throws for an unknown or a deleted note.
    mutating func target(_ id: NoteID) throws(PeerNoteError) -> TextTarget {
        if textTarget.id == id, textTarget.deletionEpoch == state.deletionEpoch, textTarget.slot < state.noteStates.count,
           state.noteStates[textTarget.slot].id == textTarget.note {
            return textTarget
        }
        guard let a = log.existingAgent(for: id.replica), let slot = state.slot(of: LocalID(agent: a, counter: id.counter)) else {
            throw .noSuchNote(id.description)
        }
        if state.noteStates[slot].isDeleted { throw Document.deletedNoteError(id) }
        textTarget = TextTarget(id: id, note: LocalID(agent: a, counter: id.counter), slot: slot, deletionEpoch: state.deletionEpoch)
        return textTarget
    }

    // MARK: Local ops

    /// Appends a local op (opening this transaction's change, at `time`, if needed) and applies it.
    /// The inserted text of an `insertText` op is already at the end of `log.text`, where its
    /// `contentStart` says.
    mutating func appendLocal(_ body: OpBody, length: Int, time: Int64) {
        if !burst.isEmpty { flushBurst() }
        let standalone = openChangeIfNeeded(time: time)
        let id = log.nextID
        let lv = log.lvCount
        let lamport = log.lamportOfNextUnit
        log.appendOp(body, length: length)
        let stored = Op(lv: lv, length: length, body: body)
        do {
            try state.apply(stored, id: id, lamport: lamport, replicas: log.replicas, text: log.textView)
        } catch {
            // Local ops are built from the current state, so they always apply.
            preconditionFailure("local op failed to apply: \(error)")
        }
        if standalone { openChange = nil }
    }

    /// Opens this transaction's change (at `time`) unless it is open; returns whether the op
    /// about to be appended stands alone (no transaction), so that its change closes after it.
    private mutating func openChangeIfNeeded(time: Int64) -> Bool {
        let standalone = transactionDepth == 0
        if standalone || openChange == nil {
            openChange = log.beginChange(agent: agent, time: time, author: author, message: standalone ? "" : transactionMessage)
        }
        return standalone
    }

    /// Inserts `text` into the body of note `id` at visible offset `offset` (both checked first).
    mutating func insertText(_ id: NoteID, at offset: Int, _ text: String, time: Int64) throws(PeerNoteError) {
        if burst.kind == .typing, offset == burst.typingEnd, burst.target.id == id, text.utf8.count <= Burst.longestText,
           let opens = burstTakes(time: time) {
            appendTyped(text, opensChange: opens)
            return
        }
        if !burst.isEmpty { flushBurst() }
        let t = try target(id)
        let count = state.noteStates[t.slot].body.visibleCount
        guard offset >= 0 && offset <= count else {
            throw .invalidArgument("offset \(offset) is outside the body (0...\(count))")
        }
        if startTypingBurst(t, at: offset, time: time, empty: text.isEmpty, length: text.utf8.count) {
            appendTyped(text, opensChange: true)
            return
        }
        let start = log.textCount
        let length = log.appendText(text)
        insertAppendedText(t, at: offset, contentStart: start, length: length, time: time)
    }

    /// Deletes the visible scalars in `range` of note `id`'s body (both checked first).
    mutating func deleteText(_ id: NoteID, range: Range<Int>, time: Int64) throws(PeerNoteError) {
        if burst.kind == .deleting, range.count == 1, burst.target.id == id, continuesDeleting(at: range.lowerBound), let opens = burstTakes(time: time) {
            appendDeleted(at: range.lowerBound, opensChange: opens)
            return
        }
        if !burst.isEmpty { flushBurst() }
        let t = try target(id)
        let count = state.noteStates[t.slot].body.visibleCount
        guard range.lowerBound >= 0 && range.upperBound <= count else {
            throw .invalidArgument("range \(range) is outside the body (0..<\(count))")
        }
        if range.count == 1 && startDeleteBurst(t, at: range.lowerBound, time: time) {
            appendDeleted(at: range.lowerBound, opensChange: true)
            return
        }
        deleteScalars(t, range, time: time)
    }

    mutating func insertScalars(_ t: TextTarget, at offset: Int, _ scalars: [Unicode.Scalar], time: Int64) {
        if !burst.isEmpty { flushBurst() }
        let start = log.textCount
        log.appendText(scalars)
        insertAppendedText(t, at: offset, contentStart: start, length: scalars.count, time: time)
    }

    /// Inserts the `length` scalars at the end of `log.text` (from `contentStart`) at visible `offset`.
    private mutating func insertAppendedText(_ t: TextTarget, at offset: Int, contentStart: Int, length: Int, time: Int64) {
        guard length > 0 else { return }
        // Typing on from the last insert: the list takes the text at the end of the run it
        // typed, and the op (whose left origin is that run's last element) follows.
        if let id = log.nextID(ifLastChangeBy: agent), Int(id.counter) + length < Int(UInt32.max),
           let right = state.continueTyping(slot: t.slot, atVisible: offset, id: id, elements: log.textView[contentStart ..< contentStart + length]) {
            let standalone = openChangeIfNeeded(time: time)
            // The list took the insert under `id`; the op must get the same id.
            assert(log.nextID == id, "typing on: the change opened does not continue at the id the list took")
            log.appendTypingInsert(note: t.note, originRight: right, contentStart: contentStart, length: length)
            if standalone { openChange = nil }
            return
        }
        let (left, right) = state.originsForInsert(slot: t.slot, atVisible: offset)
        appendLocal(.insertText(note: t.note, originLeft: left, originRight: right, contentStart: contentStart), length: length, time: time)
    }

    /// Deletes the visible scalars in `range`, one op per maximal run of contiguous ids,
    /// all in one change. Each run is found at `range.lowerBound` once the runs before it are
    /// deleted, so no list of runs is built.
    mutating func deleteScalars(_ t: TextTarget, _ range: Range<Int>, time: Int64) {
        if !burst.isEmpty { flushBurst() }
        guard !range.isEmpty else { return }
        beginTransaction(message: "")
        defer { endTransaction() }
        var remaining = range.count
        while remaining > 0, let (start, length) = state.firstVisibleIDSpan(slot: t.slot, at: range.lowerBound, maxLength: remaining) {
            appendLocal(.deleteText(note: t.note, target: start, reversed: false), length: length, time: time)
            remaining -= length
        }
    }

    // MARK: Bursts of keystrokes

    /// Whether the keystroke about to join the burst opens a change of its own (true), adds to
    /// the burst's last change (false: a second edit in one transaction), or cannot join (nil):
    /// its change would not join the run the burst's changes form.
    @inline(__always)
    private func burstTakes(time: Int64) -> Bool? {
        if transactionDepth == 0 {
            return time == burst.time && burst.message.isEmpty ? true : nil
        }
        guard let open = openChange else {
            return time == burst.time && transactionMessage == burst.message ? true : nil
        }
        // The transaction's change is open: it must be the burst's last one.
        return !burst.lengths.isEmpty && open == log.changes.count + burst.lengths.count - 1 ? false : nil
    }

    /// Records the change (or units) a keystroke joining the burst adds: `units` more in a change of
    /// its own when `opensChange`, else in the burst's last change.
    @inline(__always)
    private mutating func recordBurstUnits(_ units: Int, opensChange: Bool) {
        if opensChange {
            burst.lengths.append(UInt32(units))
            // Inside a transaction the change stays open for its further edits.
            if transactionDepth > 0 { openChange = log.changes.count + burst.lengths.count - 1 }
        } else {
            burst.lengths.extendLast(by: UInt32(units))
        }
        burst.total += units
    }

    /// Adds `text`, typed at the burst's end, to it.
    @inline(__always)
    private mutating func appendTyped(_ text: String, opensChange: Bool) {
        let units: Int
        if let b = Self.singleASCII(text) {
            // One ASCII character: most keystrokes.
            burst.scalars.append(Unicode.Scalar(b))
            units = 1
        } else {
            let before = burst.scalars.count
            burst.scalars.append(contentsOf: text.unicodeScalars)
            units = burst.scalars.count - before
        }
        // Empty text adds nothing (as an insert of nothing makes no change); it joined only
        // a burst already running.
        guard units > 0 else { return }
        recordBurstUnits(units, opensChange: opensChange)
    }

    /// The byte of `text` when it is one ASCII character.
    @inline(__always)
    private static func singleASCII(_ text: String) -> UInt8? {
        var bytes = text.utf8.makeIterator()
        guard let b = bytes.next(), b < 0x80, bytes.next() == nil else { return nil }
        return b
    }

    /// Whether deleting the one visible scalar at `index` continues the deleting burst, forwards or backwards.
    @inline(__always)
    private mutating func continuesDeleting(at index: Int) -> Bool {
        if burst.direction >= 0 && index == burst.start {
            // Forwards: the scalar after the ones deleted must exist.
            guard burst.start + burst.total < state.noteStates[burst.target.slot].body.visibleCount else { return false }
            burst.direction = 1
            return true
        }
        if burst.direction <= 0 && index == burst.start - burst.total && index >= 0 {
            burst.direction = -1
            return true
        }
        return false
    }

    private mutating func appendDeleted(at index: Int, opensChange: Bool) {
        recordBurstUnits(1, opensChange: opensChange)
    }

    /// Begins a typing burst with an insert into `t` at visible `offset` at `time` (`empty`: of no
    /// text) when it continues what the log and the list end with, as typing on does
    /// (`insertAppendedText`'s first branch, with the change joining the last one's run).
    private mutating func startTypingBurst(_ t: TextTarget, at offset: Int, time: Int64, empty: Bool, length: Int) -> Bool {
        guard buffersKeystrokes, !empty, length <= Burst.longestText, transactionDepth == 0 || openChange == nil,
              let id = log.nextID(ifLastChangeBy: agent),
              let meta = log.continuingMeta(agent: agent, time: time, author: author, message: transactionDepth == 0 ? "" : transactionMessage)
        else { return false }
        beginBurst(.typing, t, at: offset, time: time, meta: meta)
        // Typing on from the last insert (the list's run and the last op go on), or typing
        // somewhere new (the origins are found, and the text integrated, when it is applied).
        if let right = state.typingContinuation(slot: t.slot, atVisible: offset, id: id), log.lastOpContinuesTyping(note: t.note, originRight: right) {
            burst.continuesRun = true
        }
        return true
    }

    /// Begins a deleting burst with the delete of the visible scalar at `index` of `t` at `time`,
    /// when its change joins the last change's run (its op is merged into the last op, or not,
    /// as `appendOp` decides).
    private mutating func startDeleteBurst(_ t: TextTarget, at index: Int, time: Int64) -> Bool {
        guard buffersKeystrokes, transactionDepth == 0 || openChange == nil,
              let meta = log.continuingMeta(agent: agent, time: time, author: author, message: transactionDepth == 0 ? "" : transactionMessage)
        else { return false }
        beginBurst(.deleting, t, at: index, time: time, meta: meta)
        return true
    }

    private mutating func beginBurst(_ kind: Burst.Kind, _ t: TextTarget, at start: Int, time: Int64, meta: ChangeTable.Meta) {
        burst.kind = kind
        burst.target = t
        burst.time = time
        burst.meta = meta
        burst.message = transactionDepth == 0 ? "" : transactionMessage
        burst.start = start
        burst.direction = 0
        burst.continuesRun = false
        burst.total = 0
        burst.lengths.removeAll(keepingCapacity: true)
        burst.scalars.removeAll(keepingCapacity: true)
    }

    /// Applies the burst's keystrokes to the log and the state, and ends it.
    mutating func flushBurst() {
        guard !burst.isEmpty else { return }
        var b = Burst()
        swap(&b, &burst)
        defer {
            // Keep the buffers' storage for the next burst.
            b.kind = .none
            b.lengths.removeAll(keepingCapacity: b.lengths.capacity <= Burst.keptCapacity)
            b.scalars.removeAll(keepingCapacity: b.scalars.capacity <= Burst.keptCapacity)
            swap(&b, &burst)
        }
        guard b.total > 0 else { return }
        switch b.kind {
        case .none: return
        case .typing: applyTyping(b)
        case .deleting: applyDeleting(b)
        }
    }

    private mutating func applyTyping(_ b: Burst) {
        let first = log.nextID
        let lamport = log.lamportOfNextUnit
        // Typing on: the insert's left origin is the log's last unit, and its right one the
        // last op's. Else where the first keystroke went: the elements around that place.
        let origins: (left: LocalID, right: LocalID)
        if b.continuesRun, let op = log.ops.last, case .insertText(_, _, let right, _) = op.body {
            origins = (first.advanced(by: -1), right)
        } else {
            origins = state.originsForInsert(slot: b.target.slot, atVisible: b.start)
        }
        let contentStart = log.textCount
        guard log.appendInsertBurst(agent: agent, time: b.time, meta: b.meta, lengths: b.lengths, note: b.target.note,
                                    originLeft: origins.left, originRight: origins.right, scalars: b.scalars[...]) else {
            replayOneByOne(b)
            return
        }
        if b.continuesRun && state.continueTyping(slot: b.target.slot, atVisible: b.start, id: first, elements: b.scalars[...]) != nil {
            return
        }
        // Typing somewhere new (or, which cannot happen, a run that no longer goes on): the
        // text is integrated as its op says.
        assert(!b.continuesRun, "a typing burst no longer continues the list's run")
        let body = OpBody.insertText(note: b.target.note, originLeft: origins.left, originRight: origins.right, contentStart: contentStart)
        do {
            try state.apply(Op(lv: log.lvCount - b.total, length: b.total, body: body), id: first, lamport: lamport,
                            replicas: log.replicas, text: log.textView)
        } catch {
            // Local ops are built from the current state, so they always apply.
            preconditionFailure("a typing burst failed to apply: \(error)")
        }
    }

    private mutating func applyDeleting(_ b: Burst) {
        guard log.burstJoinsLastRun(agent: agent, time: b.time, meta: b.meta, total: b.total) else {
            replayOneByOne(b)
            return
        }
        // The list first: deleting the range gives the ids, in list order.
        let range = b.direction < 0 ? b.start - b.total + 1 ..< b.start + 1 : b.start ..< b.start + b.total
        let spans = state.deleteVisible(slot: b.target.slot, range)
        // Every keystroke was checked to delete a visible element, so both hold.
        guard spans.reduce(0, { $0 + $1.1 }) == b.total,
              log.appendDeleteBurst(agent: agent, time: b.time, meta: b.meta, lengths: b.lengths,
                                    note: b.target.note, spans: spans, backwards: b.direction < 0) else {
            preconditionFailure("a deleting burst's keystrokes no longer match the list")
        }
    }

    /// Applies the burst's keystrokes one at a time, as they would have been without it (for a
    /// burst whose changes cannot join the last run after all: its op counter would overflow).
    private mutating func replayOneByOne(_ b: Burst) {
        let saved = (transactionDepth, transactionMessage, openChange)
        transactionDepth = 1
        transactionMessage = b.message
        defer { (transactionDepth, transactionMessage, openChange) = saved }
        var done = 0
        for units in b.lengths.map(Int.init) {
            openChange = nil
            switch b.kind {
            case .typing:
                let start = log.textCount
                log.appendText(Array(b.scalars[done ..< done + units]))
                insertAppendedText(b.target, at: b.start + done, contentStart: start, length: units, time: b.time)
            case .deleting:
                for k in done ..< done + units {
                    let index = b.direction < 0 ? b.start - k : b.start
                    deleteScalars(b.target, index ..< index + 1, time: b.time)
                }
            case .none:
                return
            }
            done += units
        }
    }
}
