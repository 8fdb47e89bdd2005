/// What a local edit needs to open a change: who makes it, under which name, and when.
/// The time is read from the document's clock before `DocumentCore` is entered (the clock is
/// the caller's code and may read the document), and only when the edit opens a change.
struct ChangeStamp {
    var agent: UInt32
    var author: String
    var time: Int64
}

/// Everything a local edit changes: the op log, the state it produces, and the open
/// transaction. `Document` keeps it in one stored property, so that an edit is one
/// exclusive access to it (a class's stored properties are checked on every access;
/// an edit used to make about fifteen such checks).
struct DocumentCore: Sendable {
    var log: OpLog
    var state: DocState
    var transactionDepth = 0
    var transactionMessage = ""
    /// The change the open transaction's ops go to, once its first op opened it.
    var openChange: Int?
    /// The note the last text edit named, so that typing does not hash its id on every
    /// keystroke. Valid for good once set: a log's agent numbers and a state's note slots
    /// never change once assigned (both only grow).
    var textTarget = TextTarget(id: nil, note: .none, slot: -1)

    /// A note named by its public id, with its local id and its slot in `DocState.noteStates`.
    struct TextTarget: Sendable {
        var id: NoteID?
        var note: LocalID
        var slot: Int
    }

    init(log: OpLog, state: DocState) {
        self.log = log
        self.state = state
    }

    /// Whether the next local op opens a change (and so needs a `ChangeStamp` with the time).
    var opensChange: Bool { transactionDepth == 0 || openChange == nil }

    mutating func beginTransaction(message: String) {
        if transactionDepth == 0 { transactionMessage = message; openChange = nil }
        transactionDepth += 1
    }

    mutating func endTransaction() {
        transactionDepth -= 1
        if transactionDepth == 0 { openChange = nil }
    }

    // MARK: Notes

    /// The local id and slot of note `id`, or nil when this document has no such note.
    mutating func target(_ id: NoteID) -> TextTarget? {
        if textTarget.id == id { return textTarget }
        guard let a = log.existingAgent(for: id.replica) else { return nil }
        let local = LocalID(agent: a, counter: id.counter)
        guard let slot = state.slot(of: local) else { return nil }
        textTarget = TextTarget(id: id, note: local, slot: slot)
        return textTarget
    }

    // MARK: Local ops

    /// Appends a local op (opening this transaction's change if needed) and applies it.
    /// `scalars` are the inserted text of an `insertText` op (empty otherwise).
    mutating func appendLocal(_ body: OpBody, length: Int, scalars: some Collection<Unicode.Scalar>, stamp: ChangeStamp) {
        let standalone = transactionDepth == 0
        if standalone || openChange == nil {
            openChange = log.beginChange(agent: stamp.agent, time: stamp.time, author: stamp.author,
                                         message: standalone ? "" : transactionMessage)
        }
        let id = log.nextID
        let lv = log.lvCount
        let lamport = log.lamportOfNextUnit
        let contentStart = log.text.count
        log.append(body, length: length, scalars: scalars)
        let stored = Op(lv: lv, length: length, body: Self.withContentStart(body, contentStart))
        do {
            try state.apply(stored, id: id, lamport: lamport, replicas: log.replicas, text: log.text)
        } catch {
            // Local ops are built from the current state, so they always apply.
            preconditionFailure("local op failed to apply: \(error)")
        }
        if standalone { openChange = nil }
    }

    private static func withContentStart(_ body: OpBody, _ start: Int) -> OpBody {
        if case .insertText(let n, let l, let r, _) = body { return .insertText(note: n, originLeft: l, originRight: r, contentStart: start) }
        return body
    }

    /// Inserts `scalars` into the body of note `t` at visible offset `offset` (checked first).
    mutating func insertText(_ t: TextTarget, at offset: Int, _ scalars: some Collection<Unicode.Scalar>, stamp: ChangeStamp) throws(PeerNoteError) {
        let count = state.noteStates[t.slot].body.visibleCount
        guard offset >= 0 && offset <= count else {
            throw .invalidArgument("offset \(offset) is outside the body (0...\(count))")
        }
        insertScalars(t, at: offset, scalars, stamp: stamp)
    }

    /// Deletes the visible scalars in `range` of note `t`'s body (checked first).
    mutating func deleteText(_ t: TextTarget, range: Range<Int>, stamp: ChangeStamp) throws(PeerNoteError) {
        let count = state.noteStates[t.slot].body.visibleCount
        guard range.lowerBound >= 0 && range.upperBound <= count else {
            throw .invalidArgument("range \(range) is outside the body (0..<\(count))")
        }
        deleteScalars(t, range, stamp: stamp)
    }

    mutating func insertScalars(_ t: TextTarget, at offset: Int, _ scalars: some Collection<Unicode.Scalar>, stamp: ChangeStamp) {
        let length = scalars.count
        guard length > 0 else { return }
        let (left, right) = state.noteStates[t.slot].body.originsForInsert(atVisible: offset)
        appendLocal(.insertText(note: t.note, originLeft: left, originRight: right, contentStart: 0), length: length, scalars: scalars, stamp: stamp)
    }

    /// Deletes the visible scalars in `range`, one op per maximal run of contiguous ids,
    /// all in one change. Each run is found at `range.lowerBound` once the runs before it are
    /// deleted, so no list of runs is built.
    mutating func deleteScalars(_ t: TextTarget, _ range: Range<Int>, stamp: ChangeStamp) {
        guard !range.isEmpty else { return }
        beginTransaction(message: "")
        defer { endTransaction() }
        var remaining = range.count
        while remaining > 0, let (start, length) = state.noteStates[t.slot].body.firstVisibleIDSpan(at: range.lowerBound, maxLength: remaining) {
            appendLocal(.deleteText(note: t.note, target: start, reversed: false), length: length,
                        scalars: EmptyCollection(), stamp: stamp)
            remaining -= length
        }
    }
}
