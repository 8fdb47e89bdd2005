#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Everything a local edit changes or reads: the op log, the state it produces, the open
/// transaction, and who makes the edits. `Document` keeps it in one stored property, so that
/// an edit is one exclusive access to it (a class's stored properties are checked on every
/// access; an edit used to make about fifteen such checks). The time of a change is read from
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
    /// keystroke. Valid for good once set: a log's agent numbers and a state's note slots
    /// never change once assigned (both only grow); checked anyway, in case a whole new
    /// state is ever assigned.
    var textTarget = TextTarget(id: nil, note: .none, slot: -1)

    /// A note named by its public id, with its local id and its slot in `DocState.noteStates`.
    struct TextTarget: Sendable {
        var id: NoteID?
        var note: LocalID
        var slot: Int
    }

    init(log: OpLog, state: DocState, agent: UInt32, author: String) {
        self.log = log
        self.state = state
        self.agent = agent
        self.author = author
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

    /// The local id and slot of note `id`.
    mutating func target(_ id: NoteID) throws(PeerNoteError) -> TextTarget {
        if textTarget.id == id, textTarget.slot < state.noteStates.count, state.noteStates[textTarget.slot].id == textTarget.note {
            return textTarget
        }
        guard let a = log.existingAgent(for: id.replica), let slot = state.slot(of: LocalID(agent: a, counter: id.counter)) else {
            throw .noSuchNote(id.description)
        }
        textTarget = TextTarget(id: id, note: LocalID(agent: a, counter: id.counter), slot: slot)
        return textTarget
    }

    // MARK: Local ops

    /// Appends a local op (opening this transaction's change, at `time`, if needed) and applies it.
    /// The inserted text of an `insertText` op is already at the end of `log.text`, where its
    /// `contentStart` says.
    mutating func appendLocal(_ body: OpBody, length: Int, time: Int64) {
        let standalone = openChangeIfNeeded(time: time)
        let id = log.nextID
        let lv = log.lvCount
        let lamport = log.lamportOfNextUnit
        log.appendOp(body, length: length)
        let stored = Op(lv: lv, length: length, body: body)
        do {
            try state.apply(stored, id: id, lamport: lamport, replicas: log.replicas, text: log.text)
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
        let t = try target(id)
        let count = state.noteStates[t.slot].body.visibleCount
        guard offset >= 0 && offset <= count else {
            throw .invalidArgument("offset \(offset) is outside the body (0...\(count))")
        }
        let start = log.text.count
        let length = log.appendText(text)
        insertAppendedText(t, at: offset, contentStart: start, length: length, time: time)
    }

    /// Deletes the visible scalars in `range` of note `id`'s body (both checked first).
    mutating func deleteText(_ id: NoteID, range: Range<Int>, time: Int64) throws(PeerNoteError) {
        let t = try target(id)
        let count = state.noteStates[t.slot].body.visibleCount
        guard range.lowerBound >= 0 && range.upperBound <= count else {
            throw .invalidArgument("range \(range) is outside the body (0..<\(count))")
        }
        deleteScalars(t, range, time: time)
    }

    mutating func insertScalars(_ t: TextTarget, at offset: Int, _ scalars: [Unicode.Scalar], time: Int64) {
        let start = log.text.count
        log.appendText(scalars)
        insertAppendedText(t, at: offset, contentStart: start, length: scalars.count, time: time)
    }

    /// Inserts the `length` scalars at the end of `log.text` (from `contentStart`) at visible `offset`.
    private mutating func insertAppendedText(_ t: TextTarget, at offset: Int, contentStart: Int, length: Int, time: Int64) {
        guard length > 0 else { return }
        // Typing on from the last insert: the list takes the text at the end of the run it
        // typed, and the op (whose left origin is that run's last element) follows.
        if let id = log.nextID(ifLastChangeBy: agent), Int(id.counter) + length < Int(UInt32.max),
           let right = state.continueTyping(slot: t.slot, atVisible: offset, id: id, elements: log.text[contentStart ..< contentStart + length]) {
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
        guard !range.isEmpty else { return }
        beginTransaction(message: "")
        defer { endTransaction() }
        var remaining = range.count
        while remaining > 0, let (start, length) = state.firstVisibleIDSpan(slot: t.slot, at: range.lowerBound, maxLength: remaining) {
            appendLocal(.deleteText(note: t.note, target: start, reversed: false), length: length, time: time)
            remaining -= length
        }
    }
}
