#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A .peernote document: a notebook plus the full causal history that produced it.
///
/// Every edit is recorded as an op in a change made by this session's replica
/// (a random `ReplicaID` per `Document` instance, so copies never mint the same
/// change id). Edits made outside `transaction(message:_:)` form one change
/// each. Reading properties (`notebook`, `notes`, `title`, `conflicts`)
/// return plain values.
///
/// Keystrokes that continue one another (typing on, backspacing, deleting forwards, one change
/// each) are recorded and applied to the history together when the document is next read or
/// edited otherwise: every read sees every edit, and the history is exactly what applying them
/// one by one gives; it only costs less.
///
/// Not thread-safe: use one `Document` from one isolation domain.
public final class Document {
    /// The document's identity, shared by every copy.
    public let id: UUID
    /// The first change of the document; copies with the same `id` but a different genesis are unrelated.
    public private(set) var genesis: ChangeID
    /// The name recorded as author of changes made through this instance.
    public var author: String {
        get { core.author }
        set {
            // A burst's changes keep the author they were typed under.
            core.flushBurst()
            core.author = newValue
        }
    }
    /// The clock that stamps changes (injectable for reproducible fixtures and tests). By
    /// default the system clock, which a change reads in whole seconds without making a `Date`.
    public var clock: @Sendable () -> Date {
        get { core.customClock ?? { Date() } }
        set { core.customClock = newValue }
    }

    /// The op log, the state and the open transaction, in one stored property (see `DocumentCore`).
    /// Debug builds (the test suite) check every access to it for overlap at run time, as Swift
    /// does for a class's stored properties; release builds do not (the check cost a tenth of
    /// a keystroke's time): an overlapping access is a bug the tests are there to catch.
    #if DEBUG
    var core: DocumentCore
    #else
    @exclusivity(unchecked) var core: DocumentCore
    #endif
    /// The op log and the state, with the keystrokes of a burst applied first (see `DocumentCore.Burst`).
    /// Bind a large stored property of either (`let order = state.order`) before calling a method
    /// on it or passing it to a function: Swift 6.3's debug builds release it from freed memory
    /// otherwise (see `originsForInsert(after:)`).
    var log: OpLog {
        _read {
            if !core.burst.isEmpty { core.flushBurst() }
            yield core.log
        }
        _modify {
            if !core.burst.isEmpty { core.flushBurst() }
            yield &core.log
        }
    }
    var state: DocState {
        _read {
            if !core.burst.isEmpty { core.flushBurst() }
            yield core.state
        }
        _modify {
            if !core.burst.isEmpty { core.flushBurst() }
            yield &core.state
        }
    }
    /// Block fields this version does not know, kept verbatim (raw CBOR key and value) and written back on save.
    var unknownFields: [[UInt8]] = []
    /// What the file this document was loaded from (or last saved to) holds, for incremental saves.
    var persisted: Persisted?
    let replica: ReplicaID
    let agent: UInt32

    // MARK: Creating

    /// A new, empty notebook. Its genesis change records the title.
    public init(title: String = "", author: String = "", id: UUID = UUID(), replica: ReplicaID = .random(), time: Date? = nil) {
        self.id = id
        self.replica = replica
        var log = OpLog()
        self.agent = log.agent(for: replica)
        self.core = DocumentCore(log: log, state: DocState(), agent: agent, author: author)
        self.genesis = ChangeID(replica: replica, seq: 1)
        if let time { let t = time; clock = { t } }
        transaction(message: "Create notebook") {
            appendLocal(.setNotebookTitle(title, preds: []), length: 1)
        }
        if time != nil { core.customClock = nil }
    }

    init(id: UUID, genesis: ChangeID, log: OpLog, state: DocState, replica: ReplicaID, author: String) {
        self.id = id
        self.genesis = genesis
        var log = log
        self.agent = log.agent(for: replica)
        self.core = DocumentCore(log: log, state: state, agent: agent, author: author)
        self.replica = replica
    }

    /// An independent copy with the same history and a new replica id, as if the file were copied to another device.
    /// It shares nothing mutable with this document, so it may be sent to another isolation domain (an actor, a task).
    public func fork(author: String? = nil) -> sending Document {
        let d = Document(id: id, genesis: genesis, log: log, state: state, replica: .random(), author: author ?? self.author)
        d.unknownFields = unknownFields
        d.core.customClock = core.customClock
        return d
    }

    // MARK: Reading

    public var title: String { state.title.value ?? "" }

    /// The live notes in document order.
    public var notes: [Note] { state.orderedNoteSlots.map { makeNote(state.noteStates[$0]) } }

    /// Calls `body` with each live note in document order (what `notes` holds), made one at a
    /// time: a notebook printed a note at a time then needs one note's copy of its text, not
    /// a copy of all of them.
    /// - Complexity: O(n) for n notes, plus each note's text.
    public func forEachNote<E: Error>(_ body: (Note) throws(E) -> Void) throws(E) {
        let state = self.state
        for slot in state.orderedNoteSlots { try body(makeNote(state.noteStates[slot])) }
    }

    /// Notes that are deleted (they can be restored), in document order.
    public var deletedNotes: [Note] {
        state.allNoteSlotsInOrder.filter { state.noteStates[$0].isDeleted }.map { makeNote(state.noteStates[$0]) }
    }

    /// The ids of the deleted notes (`deletedNotes` without making each note).
    public var deletedNoteIDs: Set<NoteID> {
        let state = self.state
        return Set(state.noteStates.filter(\.isDeleted).map { noteID($0.id) })
    }

    public var notebook: Notebook { Notebook(id: id, title: title, notes: notes, conflicts: conflicts) }

    /// Where each live note was last placed (see `NotePlace`): what `NotebookDiff` compares to
    /// tell the notes a change moved from those that other notes' changes only shifted.
    /// - Complexity: O(n) for n notes, each read where it lies (no copy of every note).
    public var notePlaces: [NoteID: NotePlace] {
        let state = self.state, slots = state.orderedNoteSlots
        var out: [NoteID: NotePlace] = [:]
        out.reserveCapacity(slots.count)
        state.noteStates.withNotePlaces { notes in
            for slot in slots {
                notes.read(slot) { n in
                    guard let place = n.position.value else { return }
                    out[noteID(n.id)] = NotePlace(replica: log.replicas[Int(place.agent)], counter: place.counter)
                }
            }
        }
        return out
    }

    public func note(_ id: NoteID) -> Note? {
        guard let local = localID(id), let n = state.note(local) else { return nil }
        return makeNote(n)
    }

    /// The title note `id` has now (a deleted note's too; "" when it has none), or nil when this
    /// copy holds no such note: what `note(id)?.title` gives, without making the note's body.
    /// - Complexity: O(1) expected.
    public func noteTitle(_ id: NoteID) -> String? {
        guard let local = localID(id), let slot = state.slot(of: local) else { return nil }
        return state.noteStates[slot].title.value ?? ""
    }

    /// Finds a note by its id, a unique prefix of its id of at least `NoteID.shortestPrefix` digits,
    /// or its exact title when only one note has it; failing those, its title in other letter
    /// case ("dentist" for "Dentist") when only one note has it so, and then a title the note
    /// had before (`formerTitleMatches`) when no note, deleted ones included, has it now.
    /// A title matches when it has the query's Unicode scalars (`hasSameScalars`): a canonically
    /// equivalent spelling ("e" + U+0301 for "é") does not. Deleted notes are found too when
    /// `includeDeleted` is set.
    public func findNote(_ query: String, includeDeleted: Bool = false) throws(PeerNoteError) -> Note {
        // Ids and titles only: a `Note` carries its body, and making every note's body to find
        // one was most of the time an edit of a notebook of 20,000 notes took.
        let pool = (includeDeleted ? state.allNoteSlotsInOrder : state.orderedNoteSlots).map { slot in
            NoteHandle(slot: slot, id: noteID(state.noteStates[slot].id), title: state.noteStates[slot].title.value ?? "")
        }
        let q = query.lowercased()
        // An id is 16 lowercase hex digits of a hash: only a query of 4 (`NoteID.shortestPrefix`)
        // to 16 such digits can be one or begin one, and hashing every note's id for any other
        // query was most of the time an edit of a notebook of 20,000 notes took when it named its
        // note by title.
        let couldBeID = Self.couldBeNoteID(q)
        let ids = couldBeID ? pool.map(\.id.description) : []
        if let exact = ids.firstIndex(of: q) { return makeNote(state.noteStates[pool[exact].slot]) }
        let byPrefix = ids.indices.filter { ids[$0].hasPrefix(q) }.map { pool[$0] }
        let byTitle = pool.filter { $0.title.hasSameScalars(as: query) }
        // A query that is both a unique id prefix and a unique title of the same note is fine;
        // one that names two different notes that way is ambiguous (never guess which to edit).
        var candidates = byPrefix
        for n in byTitle where !candidates.contains(where: { $0.id == n.id }) { candidates.append(n) }
        if candidates.count == 1 { return makeNote(state.noteStates[candidates[0].slot]) }
        if candidates.isEmpty {
            // A title typed in other letter case ("dentist" for "Dentist"), when only one note has it.
            let lowered = pool.filter { $0.title.lowercased().hasSameScalars(as: q) }
            if lowered.count == 1 { return makeNote(state.noteStates[lowered[0].slot]) }
            candidates = lowered
        }
        if candidates.isEmpty {
            // A former title, when no note has it now: not even a deleted one, which the caller
            // names as deleted rather than acting on a note that only had the title once.
            let current = includeDeleted ? [] : state.noteStates.filter(\.isDeleted).map { $0.title.value ?? "" }
            if !current.contains(where: { $0.hasSameScalars(as: query) || $0.lowercased().hasSameScalars(as: q) }) {
                let former = formerTitleMatches(query, among: Set(pool.map(\.id)))
                if former.count == 1, let only = former.first, let n = pool.first(where: { $0.id == only }) {
                    return makeNote(state.noteStates[n.slot])
                }
                candidates = pool.filter { former.contains($0.id) }
            }
        }
        if candidates.isEmpty { throw .noSuchNote(query) }
        // Titles cut to 60 characters: a message stays a line, however long a title is.
        throw .ambiguousNote(query, candidates: candidates.map { n in
            "\(n.id.short) \"\(n.title.clippedForMessage())\""
        })
    }

    /// The notes among `pool` that once had `query` as their title (the exact scalars, else in
    /// other letter case) and have another now.
    /// - Complexity: O(ops in the history): only for a name no current title matches.
    func formerTitleMatches(_ query: String, among pool: Set<NoteID>) -> Set<NoteID> {
        let q = query.lowercased()
        var exact: Set<LocalID> = [], folded: Set<LocalID> = []
        for op in log.ops {
            guard case .setNoteTitle(let note, let title, _) = op.body else { continue }
            if title.hasSameScalars(as: query) { exact.insert(note) } else if title.lowercased().hasSameScalars(as: q) { folded.insert(note) }
        }
        func live(_ locals: Set<LocalID>) -> Set<NoteID> {
            Set(locals.map(noteID).filter { id in
                guard pool.contains(id), let now = note(id) else { return false }
                return !now.title.hasSameScalars(as: query) && !now.title.lowercased().hasSameScalars(as: q)
            })
        }
        let byExact = live(exact)
        return byExact.isEmpty ? live(folded) : byExact
    }

    /// The live notes whose titles are closest to `query`, for a name that matched nothing
    /// ("Dentst" for "Dentist"): titles that contain it (ignoring case), then those within a few
    /// edits of it (letters inserted, deleted or replaced, ignoring case: at most one edit per
    /// three letters, and at least one), nearest first; at most `limit`. A query of fewer than
    /// three letters gets none.
    /// - Complexity: O(notes × title length × query length) at worst; a title much longer or
    ///   shorter than the query is skipped without comparing.
    public func closestTitles(to query: String, limit: Int = 3) -> [Note] {
        let q = Array(query.lowercased().unicodeScalars)
        // One or two letters are a letter or two off most short titles: no guess is better.
        guard q.count >= 3 else { return [] }
        let allowed = max(1, q.count / 3)
        var scored: [(distance: Int, order: Int, slot: Int)] = []
        let slots = state.orderedNoteSlots
        for (order, slot) in slots.enumerated() {
            let title = Array((state.noteStates[slot].title.value ?? "").lowercased().unicodeScalars)
            guard !title.isEmpty else { continue }
            if title.count > q.count, String(String.UnicodeScalarView(title)).contains(String(String.UnicodeScalarView(q))) {
                scored.append((0, order, slot))
                continue
            }
            guard abs(title.count - q.count) <= allowed else { continue }
            let d = Self.editDistance(q, title, atMost: allowed)
            if d <= allowed { scored.append((d, order, slot)) }
        }
        return scored.sorted { ($0.distance, $0.order) < ($1.distance, $1.order) }.prefix(limit).map { makeNote(state.noteStates[$0.slot]) }
    }

    /// The Levenshtein distance of `a` and `b`, or `atMost + 1` once every path exceeds `atMost`.
    static func editDistance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar], atMost: Int) -> Int {
        var previous = Array(0 ... b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1 ... max(a.count, 1) where !a.isEmpty {
            current[0] = i
            var best = current[0]
            for j in stride(from: 1, through: b.count, by: 1) {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
                best = min(best, current[j])
            }
            if best > atMost { return atMost + 1 }
            swap(&previous, &current)
        }
        return a.isEmpty ? b.count : previous[b.count]
    }

    /// Whether `query`, lowercased, can be a note's id or a prefix of one that `findNote` tries:
    /// `NoteID.shortestPrefix` to 16 hex digits.
    public static func couldBeNoteID(_ query: String) -> Bool {
        let n = query.utf8.count
        return n >= NoteID.shortestPrefix && n <= 16 && isHexDigits(query)
    }

    /// Whether `text` is made of hex digits only (either case), as a note id's text is.
    public static func isHexDigits(_ text: String) -> Bool {
        text.utf8.allSatisfy { (0x30 ... 0x39).contains($0) || (0x61 ... 0x66).contains($0) || (0x41 ... 0x46).contains($0) }
    }

    /// A note as `findNote` matches it: its slot in `DocState.noteStates`, id and title.
    private struct NoteHandle {
        var slot: Int
        var id: NoteID
        var title: String
    }

    /// The heads: changes no other change depends on.
    public var heads: [ChangeID] { log.heads.map(log.changeID).sorted() }

    /// Number of changes in the history.
    public var changeCount: Int { log.changes.count }
    /// Number of op units in the history.
    public var operationCount: Int { log.lvCount }
    /// The replicas that made changes, with the authors they recorded.
    public var replicas: [(replica: ReplicaID, authors: [String])] {
        var authors = [[String]](repeating: [], count: log.replicas.count)
        // A run's changes share their author: one look a run, not a change.
        log.changes.forEachRun { first, agent, _, _ in
            let author = log.author(of: first)
            if !authors[Int(agent)].containsScalars(of: author) { authors[Int(agent)].append(author) }
        }
        return log.replicas.enumerated().compactMap { i, r in log.changeCount(of: UInt32(i)) == 0 ? nil : (r, authors[i]) }
    }

    func makeNote(_ n: NoteState) -> Note {
        Note(id: noteID(n.id), title: n.title.value ?? "", body: n.body.visibleText,
             tags: n.visibleTags, priority: n.priority.value ?? .normal,
             created: Date(timeIntervalSince1970: TimeInterval(n.created)), isDeleted: n.isDeleted)
    }

    func noteID(_ local: LocalID) -> NoteID { NoteID(replica: log.replicas[Int(local.agent)], counter: local.counter) }

    func localID(_ id: NoteID) -> LocalID? {
        guard let a = log.existingAgent(for: id.replica) else { return nil }
        return LocalID(agent: a, counter: id.counter)
    }

    private func noteState(_ id: NoteID) throws(PeerNoteError) -> NoteState {
        guard let local = localID(id), let n = state.note(local) else { throw .noSuchNote(id.description) }
        return n
    }

    /// `noteState(_:)` for an edit: a deleted note is refused (its edits would not show, and
    /// would read as made concurrently with its deletion).
    private func liveNoteState(_ id: NoteID) throws(PeerNoteError) -> NoteState {
        let n = try noteState(id)
        if n.isDeleted { throw Self.deletedNoteError(id) }
        return n
    }

    /// What editing a deleted note throws.
    static func deletedNoteError(_ id: NoteID) -> PeerNoteError {
.noteDeleted(id)
    }

    // MARK: Editing

    /// Groups the edits made in `body` into one change with `message`. Throws what `body` throws,
    /// typed; the edits made before the error stay recorded. Swift infers a closure's error type
    /// as `any Error` unless it is written out, so to catch a `PeerNoteError`:
    ///
    ///     try doc.transaction(message: "rename") { () throws(PeerNoteError) in
    ///         try doc.setNoteTitle(note, "Plan")
    ///         try doc.addTag(note, "work")
    ///     }
    @discardableResult
    public func transaction<T, E: Error>(message: String = "", _ body: () throws(E) -> T) throws(E) -> T {
        core.beginTransaction(message: message)
        defer { core.endTransaction() }
        return try body()
    }

    /// The message of the open transaction (for an edit that opens a nested one), or `message`.
    private func transactionMessage(or message: @autoclosure () -> String) -> String {
        core.transactionDepth == 0 ? message() : core.transactionMessage
    }

    /// The time of the change the next local op opens, if it opens one (else 0). The clock is
    /// read here, outside any access to `core` (it is the caller's code and may read the document).
    func changeTime() -> Int64 {
        switch core.changeClock {
        case .noChange: return 0
        case .system: return Self.systemSeconds()
        case .custom(let clock): return Self.clockSeconds(clock())
        }
    }

    /// The system clock's seconds since 1970: what `Date()` reads, without making a `Date` and
    /// rounding its floating point (a third of the instructions; a change is stamped at each keystroke).
    /// On Linux the coarse clock, which the kernel updates every tick (a few milliseconds) and
    /// which reads in about a third of the time (a change records whole seconds; the replay
    /// benchmark reads it once a keystroke).
    static func systemSeconds() -> Int64 {
        var now = timespec()
        #if os(Linux)
        clock_gettime(CLOCK_REALTIME_COARSE, &now)
        #else
        clock_gettime(CLOCK_REALTIME, &now)
        #endif
        return Int64(now.tv_sec)
    }

    /// Appends a local op (opening this transaction's change if needed) and applies it.
    func appendLocal(_ body: OpBody, length: Int) {
        let time = changeTime()
        core.appendLocal(body, length: length, time: time)
    }

    public func setTitle(_ title: String) {
        guard !title.hasSameScalars(as: self.title) || state.title.isConflicted else { return }
        appendLocal(.setNotebookTitle(title, preds: state.title.ids), length: 1)
    }

    /// Adds a note at `index` (default: the end) and returns its id.
    ///
    /// `created` is the note's creation time (default: now, from `clock`), stored in whole
    /// seconds (a fraction is dropped, rounding down), as `Note.created` reads it back; an
    /// import passes the time a note was first written. A note is never created after the
    /// change that adds it: a time later than the clock's reads as the clock's. A time before
    /// -2^52 s (about 142 million years ago, the earliest a file holds) reads as that.
    @discardableResult
    public func addNote(title: String, body: String = "", tags: [String] = [], priority: Priority = .normal,
                        created: Date? = nil, at index: Int? = nil) -> NoteID {
        transaction(message: transactionMessage(or: "Add note \"\(title)\"")) {
            let after: LocalID
            if let index {
                let live = state.orderedNoteSlots
                let at = min(max(index, 0), live.count)
                after = at == 0 ? .none : (state.noteStates[live[at - 1]].position.value ?? .none)
            } else {
                // At the end: only the last live note is needed. Listing every note for each note
                // added made adding n notes (an import) take time in n².
                after = state.lastLiveNote?.position.value ?? .none
            }
            let (left, right) = originsForInsert(after: after)
            // From the clock that stamps changes, so that a note is not created after its change.
            let now = core.customClock.map { Self.clockSeconds($0()) } ?? Self.systemSeconds()
            let seconds = created.map { Self.creationSeconds($0, notAfter: now) } ?? now
            appendLocal(.createNote(originLeft: left, originRight: right, created: seconds), length: 1)
            let note = log.nextID.advanced(by: -1)
            appendLocal(.setNoteTitle(note: note, title, preds: []), length: 1)
            if priority != .normal { appendLocal(.setPriority(note: note, priority, preds: []), length: 1) }
            for tag in tags.uniquedByScalars().sortedByScalars() { appendLocal(.addTag(note: note, tag), length: 1) }
            if !body.isEmpty, let t = try? core.target(noteID(note)) { insertScalars(t, at: 0, Array(body.unicodeScalars)) }
            return noteID(note)
        }
    }

    /// A custom clock's reading in whole seconds, within the times a file can hold (a NaN or
    /// infinite `Date` would trap in the conversion, and a time past 2^52 s would be written into
    /// a file no reader accepts): NaN reads as 1970.
    static func clockSeconds(_ date: Date) -> Int64 {
        let t = date.timeIntervalSince1970.rounded(.down)
        guard !t.isNaN else { return 0 }
        return Int64(min(max(t, Double(-WireCodec.maxTime)), Double(WireCodec.maxTime)))
    }

    /// `date` in whole seconds since 1970 (rounded down), no later than `now` and no earlier
    /// than -`WireCodec.maxTime` (what a file can hold); a date that is not a number reads as `now`.
    static func creationSeconds(_ date: Date, notAfter now: Int64) -> Int64 {
        let t = date.timeIntervalSince1970.rounded(.down)
        // Compared as Double first: converting a huge or infinite one to Int64 would trap.
        guard !t.isNaN, t < Double(now) else { return now }
        return min(now, Int64(max(t, Double(-WireCodec.maxTime))))
    }

    /// `state.order.originsForInsert(after:)`, with the order bound first. Swift 6.3's
    /// LoadableByAddress pass miscompiles a method call (or an argument) on a large value read
    /// straight through a `_read` accessor in debug builds: the caller releases the value from
    /// the accessor's frame after the accessor has freed it (swiftlang/swift#89836, fixed in
    /// 6.4). Here, so that the copy does not outlive the call and make the edit that follows
    /// copy the whole list.
    private func originsForInsert(after: LocalID) -> (left: LocalID, right: LocalID) {
        let order = state.order
        return order.originsForInsert(after: after)
    }

    /// Deletes a note. For a note already deleted, nothing, unless it was deleted on one copy
    /// while edited on another (a `Conflict.deletedWhileEdited`): deleting it again accepts the
    /// deletion, after those edits, which closes the conflict (the edits stay in the history).
    public func deleteNote(_ id: NoteID) throws(PeerNoteError) {
        let n = try noteState(id)
        if n.isDeleted {
            let edited = conflicts.contains { if case .deletedWhileEdited(let note, _, _, _) = $0 { note == id } else { false } }
            guard edited else { return }
        }
        appendLocal(.deleteNote(note: n.id, preds: n.deleted.ids), length: 1)
    }

    /// Brings back a deleted note, with every edit made to it, including edits made concurrently with its deletion.
    public func restoreNote(_ id: NoteID) throws(PeerNoteError) {
        let n = try noteState(id)
        guard n.isDeleted else { return }
        appendLocal(.restoreNote(note: n.id, preds: n.deleted.ids), length: 1)
    }

    /// Moves a note to `index` (0-based) in the list of live notes (throws for a deleted note).
    public func moveNote(_ id: NoteID, to index: Int) throws(PeerNoteError) {
        let n = try liveNoteState(id)
        let live = state.orderedNoteSlots
        let others = live.filter { state.noteStates[$0].id != n.id }
        guard index >= 0 && index <= others.count else {
            throw .invalidArgument(others.isEmpty ? "index \(index) is out of range: the only place is 0"
                                                  : "index \(index) is out of range: from 0 to \(others.count)")
        }
        if !n.position.isConflicted, let current = live.firstIndex(where: { state.noteStates[$0].id == n.id }), current == index { return }
        let after = index == 0 ? LocalID.none : (state.noteStates[others[index - 1]].position.value ?? .none)
        let (left, right) = originsForInsert(after: after)
        appendLocal(.moveNote(note: n.id, originLeft: left, originRight: right, preds: n.position.ids), length: 1)
    }

    /// Retitles a note. Every edit of a note (title, priority, tags, place, body) throws for a
    /// deleted one: restore it first.
    public func setNoteTitle(_ id: NoteID, _ title: String) throws(PeerNoteError) {
        let n = try liveNoteState(id)
        guard !title.hasSameScalars(as: n.title.value ?? "") || n.title.value == nil || n.title.isConflicted else { return }
        appendLocal(.setNoteTitle(note: n.id, title, preds: n.title.ids), length: 1)
    }

    /// Sets a note's priority (throws for a deleted note).
    public func setPriority(_ id: NoteID, _ priority: Priority) throws(PeerNoteError) {
        let n = try liveNoteState(id)
        guard priority != (n.priority.value ?? .normal) || n.priority.isConflicted else { return }
        appendLocal(.setPriority(note: n.id, priority, preds: n.priority.ids), length: 1)
    }

    /// Tags a note (throws for a deleted note).
    public func addTag(_ id: NoteID, _ tag: String) throws(PeerNoteError) {
        let n = try liveNoteState(id)
        guard n.adds(of: tag).isEmpty else { return }
        appendLocal(.addTag(note: n.id, tag), length: 1)
    }

    /// Removes a tag from a note (throws for a deleted note).
    public func removeTag(_ id: NoteID, _ tag: String) throws(PeerNoteError) {
        let n = try liveNoteState(id)
        let adds = n.adds(of: tag)
        guard !adds.isEmpty else { return }
        appendLocal(.removeTag(note: n.id, tag, removes: adds), length: 1)
    }

    /// Inserts `text` into a note's body at `offset` (in Unicode scalars).
    public func insertText(_ id: NoteID, at offset: Int, _ text: String) throws(PeerNoteError) {
        let time = changeTime()
        try core.insertText(id, at: offset, text, time: time)
    }

    /// Deletes the body's scalars in `range`.
    public func deleteText(_ id: NoteID, range: Range<Int>) throws(PeerNoteError) {
        let time = changeTime()
        try core.deleteText(id, range: range, time: time)
    }

    /// The note whose body a text edit changes (remembered for the next edit).
    private func textTarget(_ id: NoteID) throws(PeerNoteError) -> DocumentCore.TextTarget {
        try core.target(id)
    }

    /// Replaces a note's body with `text`, recorded as the character inserts and deletes
    /// that turn the old body into the new one (never a wholesale replacement), so that
    /// edits made meanwhile on other copies still merge: words replaced whole, changes at word
    /// and line boundaries (`TextDiff.bodyEdits`).
    public func setBody(_ id: NoteID, _ text: String) throws(PeerNoteError) {
        let t = try textTarget(id)
        let old = state.noteStates[t.slot].body.visibleElements
        let noteTitle = state.noteStates[t.slot].title.value ?? ""
        let new = Array(text.unicodeScalars)
        let edits = TextDiff.bodyEdits(from: old, to: new)
        guard !edits.isEmpty else { return }
        transaction(message: transactionMessage(or: "Edit \"\(noteTitle)\"")) {
            // Apply from the end so earlier offsets stay valid.
            for e in edits.reversed() {
                if e.deleteCount > 0 { deleteScalars(t, e.offset ..< e.offset + e.deleteCount) }
                if !e.insert.isEmpty { insertScalars(t, at: e.offset, e.insert) }
            }
        }
    }

    func insertScalars(_ t: DocumentCore.TextTarget, at offset: Int, _ scalars: [Unicode.Scalar]) {
        let time = changeTime()
        core.insertScalars(t, at: offset, scalars, time: time)
    }

    func deleteScalars(_ t: DocumentCore.TextTarget, _ range: Range<Int>) {
        let time = changeTime()
        core.deleteScalars(t, range, time: time)
    }
}
