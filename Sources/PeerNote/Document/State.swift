/// The materialized state of one note: its registers, tag set and body.
struct NoteState: Sendable {
    var id: LocalID
    var created: Int64
    var title = MVRegister<String>()
    /// The Lamport timestamp of the note's creation, which wrote the position register's first
    /// value (the note's own id: its slot in `DocState.order`). Until a move writes the register,
    /// that one value is all it holds, and this timestamp stands for it (`position`).
    private var createdLamport: UInt64
    /// For each tag, the ids of the adds no remove has seen (add-wins set).
    var tags = TagAdds()
    var body = ListCRDT<Unicode.Scalar>()
    /// The priority, deleted and moved position registers, once one is written (nil before:
    /// empty, and the position the creation wrote). Most notes are never given a priority other
    /// than the default (which writes none), deleted nor moved: boxed, the three take one word
    /// of every note, and the creation's timestamp one more, instead of fourteen (at 20,000 notes,
    /// 1.9 MB of a load's memory). Shared between copies of a note until one of them writes
    /// (`mutableRare`).
    private var rare: RareRegisters?

    /// The registers `rare` holds. Sendable because a box is written only by the note holding
    /// the only reference to it: a box that copies (and so threads) share is never written.
    private final class RareRegisters: @unchecked Sendable {
        /// The position register once a move wrote it; nil: it holds the creation's value.
        var position: MVRegister<LocalID>?
        var priority = MVRegister<Priority>()
        /// Written through `NoteState.writeDeleted`, which keeps `liveDeletes` in step.
        var deleted = MVRegister<Bool>()
        /// How many of `deleted`'s live values are deletes (true), so that `isDeleted` reads one
        /// number: it is asked at every place a note was ever moved to, and a note's register
        /// may hold thousands of concurrent deletes.
        var liveDeletes = 0

        init() {}

        init(copying other: RareRegisters) {
            position = other.position
            priority = other.priority
            deleted = other.deleted
            liveDeletes = other.liveDeletes
        }
    }

    /// A note created by op `id` at Lamport timestamp `lamport`: its position register holds
    /// the value that op writes (its own id).
    init(id: LocalID, created: Int64, lamport: UInt64) {
        self.id = id
        self.created = created
        createdLamport = lamport
    }

    /// `rare`, made if absent and copied if shared, to be written.
    private mutating func mutableRare() -> RareRegisters {
        if isKnownUniquelyReferenced(&rare), let box = rare { return box }
        let box = rare.map(RareRegisters.init(copying:)) ?? RareRegisters()
        rare = box
        return box
    }

    /// The note's current place(s) in the order of notes: ids of slots in `DocState.order`.
    var position: MVRegister<LocalID> { rare?.position ?? MVRegister(only: .init(id: id, lamport: createdLamport, value: id)) }

    /// Writes the position register (a move: `id` is the move's op, the slot it made).
    mutating func writePosition(id moveID: LocalID, lamport: UInt64, replicas: [ReplicaID], preds: [LocalID]) {
        let created = MVRegister<LocalID>(only: .init(id: id, lamport: createdLamport, value: id))
        let box = mutableRare()
        if box.position == nil { box.position = created }
        box.position?.write(id: moveID, lamport: lamport, replicas: replicas, value: moveID, preds: preds)
    }

    /// The priority register (empty: the default priority, never written).
    var priority: MVRegister<Priority> { rare?.priority ?? MVRegister() }

    /// The deleted register (a delete writes true, a restore false).
    var deleted: MVRegister<Bool> { rare?.deleted ?? MVRegister() }

    var isDeleted: Bool { (rare?.liveDeletes ?? 0) > 0 }

    /// Writes the priority register.
    mutating func writePriority(_ value: Priority, id: LocalID, lamport: UInt64, replicas: [ReplicaID], preds: [LocalID]) {
        mutableRare().priority.write(id: id, lamport: lamport, replicas: replicas, value: value, preds: preds)
    }

    /// Writes the deleted register (a delete writes true, a restore false).
    mutating func writeDeleted(_ value: Bool, id: LocalID, lamport: UInt64, replicas: [ReplicaID], preds: [LocalID]) {
        let box = mutableRare()
        var gone = 0
        box.deleted.write(id: id, lamport: lamport, replicas: replicas, value: value, preds: preds) { if $0 { gone += 1 } }
        box.liveDeletes += (value ? 1 : 0) - gone
    }
    /// The tags present, in the order of their Unicode scalar values.
    @inline(__always) var visibleTags: [String] { tags.visible }

    /// The ids of the adds of `tag` no remove has seen (empty when the tag is absent).
    func adds(of tag: String) -> [LocalID] { tags.adds(of: tag) }

    /// Whether a state section's entry `n` shows `note` as its history does: the same title,
    /// tags, priority, creation time and deleted flag, and, unless it is deleted, no conflict in
    /// its title, priority or position. (A deleted note's registers may hold concurrent values:
    /// readers do not show it, and its conflicts are not listed until it is restored; writers
    /// wrote such files, and must go on reading them.)
    /// Both read through pointers, never copied: a copy of a note would retain and release each
    /// of its references, for every note a load checks.
    @inline(__always)
    static func shows(_ note: UnsafePointer<NoteState>, _ n: UnsafePointer<WireNoteState>) -> Bool {
        let shown = !n.pointee.deleted
        guard note.pointee.created == n.pointee.created, note.pointee.isDeleted == n.pointee.deleted,
              note.pointee.priority.value ?? .normal == n.pointee.priority,
              !(shown && (note.pointee.title.isConflicted || note.pointee.priority.isConflicted || note.pointee.position.isConflicted))
        else { return false }
        return (note.pointee.title.value ?? "").hasSameScalars(as: n.pointee.title) && note.pointee.tags.visibleEqual(first: n.pointee.firstTag, others: n.pointee.otherTags)
    }
}

/// A note's tags: for each tag, the ids of the adds no remove has seen (add-wins set), keyed
/// by the tag's exact Unicode scalars (canonically equivalent spellings are two tags).
/// Invariant: while `single` holds the one add of the one tag ever added, `table` is empty;
/// a second add moves it into the table. Most notes have one tag added once, which then needs
/// no table: no dictionary and set allocated, hashed and freed per note.
struct TagAdds: Sendable, Equatable {
    private var single: (tag: ExactString, add: LocalID)?
    private var table: [ExactString: Set<LocalID>] = [:]

    /// The same adds of the same tags (whichever form holds them; a tag whose adds were all
    /// removed is the same as one never added).
    static func == (a: TagAdds, b: TagAdds) -> Bool { a.addsByTag == b.addsByTag }

    /// The adds of each tag that has any.
    var addsByTag: [ExactString: Set<LocalID>] {
        if let one = single { return [one.tag: [one.add]] }
        return table.filter { !$0.value.isEmpty }
    }

    /// Records add `id` of `tag`.
    mutating func insert(_ tag: String, id: LocalID) {
        let key = ExactString(tag)
        if let one = single {
            if one.tag == key && one.add == id { return }
            single = nil
            table[one.tag, default: []].insert(one.add)
        } else if table.isEmpty {
            single = (key, id)
            return
        }
        table[key, default: []].insert(id)
    }

    /// Forgets the adds of `tag` that `removes` names.
    mutating func remove(_ tag: String, removes: [LocalID]) {
        let key = ExactString(tag)
        if let one = single {
            if one.tag == key && removes.contains(one.add) { single = nil }
            return
        }
        // Taken out of the table (so not copied), one lookup per add named: a storm of
        // removes each naming one add among thousands would otherwise scan every add.
        if var ids = table.removeValue(forKey: key) {
            for r in removes { ids.remove(r) }
            table[key] = ids
        }
    }

    /// The ids of the adds of `tag` no remove has seen (empty when the tag is absent).
    func adds(of tag: String) -> [LocalID] {
        if let one = single { return one.tag == ExactString(tag) ? [one.add] : [] }
        return table[ExactString(tag)].map(Array.init) ?? []
    }

    /// Calls `body` with each tag present, in no set order (`visible` sorts them).
    func forEachVisible(_ body: (String) -> Void) {
        if let one = single { return body(one.tag.string) }
        for (tag, adds) in table where !adds.isEmpty { body(tag.string) }
    }

    /// The tags present, in the order of their Unicode scalar values.
    var visible: [String] {
        if let one = single { return [one.tag.string] }
        if table.isEmpty { return [] }
        if table.count == 1, let only = table.first { return only.value.isEmpty ? [] : [only.key.string] }
        return table.compactMap { $0.value.isEmpty ? nil : $0.key }.sorted().map(\.string)
    }

    /// `visibleEqual([first] + others)` (or `[]` when `first` is nil), without building that
    /// list for a note with one tag or none.
    func visibleEqual(first: String?, others: [String]) -> Bool {
        guard let first else { return visibleEqual([]) }
        if others.isEmpty, let one = single { return one.tag.string.hasSameScalars(as: first) }
        return visibleEqual([first] + others)
    }

    /// Whether `listed` is `visible` (the same scalars), without building `visible` for a note
    /// with one tag or none.
    func visibleEqual(_ listed: [String]) -> Bool {
        if let one = single { return listed.count == 1 && one.tag.string.hasSameScalars(as: listed[0]) }
        if table.isEmpty { return listed.isEmpty }
        return visible.elementsEqual(listed) { $0.hasSameScalars(as: $1) }
    }
}

/// Each note's slot in `DocState.noteStates` by the id of the op that created it: for each
/// agent, the counters of its notes in ascending order, beside their slots, searched by
/// bisection: no hash per lookup, and no table regrown as notes are added.
/// Invariant: `counters[a]` is strictly ascending and as long as `slots[a]`.
/// - Complexity: a lookup is O(log n) for n notes of the agent; adding one is O(1) when its
///   counter is above the agent's others (always so: an agent's ops are applied in causal
///   order, whatever order a state is built in), else O(n).
struct NoteSlotIndex: Sendable {
    private var counters: [[UInt32]] = []
    private var slots: [[Int]] = []

    /// Where the agent's counters reach `counter`: the first position whose counter is not below it.
    private func position(of counter: UInt32, agent a: Int) -> Int {
        var lo = 0, hi = counters[a].count
        while lo < hi {
            let mid = (lo + hi) / 2
            if counters[a][mid] < counter { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    subscript(id: LocalID) -> Int? {
        let a = Int(id.agent)
        guard a < counters.count, let last = counters[a].last, id.counter <= last else { return nil }
        let p = position(of: id.counter, agent: a)
        return counters[a][p] == id.counter ? slots[a][p] : nil
    }

    /// Records note `id` at `slot`; `id` is not in the index.
    mutating func insert(_ id: LocalID, slot: Int) {
        let a = Int(id.agent)
        if a >= counters.count {
            counters.append(contentsOf: repeatElement([], count: a + 1 - counters.count))
            slots.append(contentsOf: repeatElement([], count: a + 1 - slots.count))
        }
        if let last = counters[a].last, id.counter <= last {
            let p = position(of: id.counter, agent: a)
            counters[a].insert(id.counter, at: p)
            slots[a].insert(slot, at: p)
        } else {
            counters[a].append(id.counter)
            slots[a].append(slot)
        }
    }
}

/// Why an op could not be applied: it names something the document lacks.
enum ApplyError: Error, Sendable, Equatable {
    case unknownNote(LocalID)
    case unknownElement(LocalID)
    case noteExists(LocalID)
    case tooMuchWork

    /// What went wrong, ids named as `counter@replica` with `log`'s replicas (a load's error and
    /// a salvage's reason for dropping a change say it in these words).
    func description(in log: OpLog) -> String {
        func name(_ x: LocalID) -> String { "\(x.counter)@\(Int(x.agent) < log.replicas.count ? log.replicas[Int(x.agent)].short : "?")" }
        switch self {
        case .unknownNote(let n): return "an op edits note \(name(n)), which does not exist"
        case .unknownElement(let x) where x.isNone: return "an op refers to something that does not exist"
        case .unknownElement(let x): return "an op refers to element \(name(x)), which does not exist"
        case .noteExists(let n): return "note \(name(n)) is created twice"
        case .tooMuchWork: return "it asks for more work than the file's size allows (damaged or hostile)"
        }
    }
}

/// Why applying an op log's ops failed: the error, and the change holding the op.
struct ApplyFailure: Error, Sendable {
    var error: ApplyError
    var change: Int
}

/// The state that the op log's ops produce: what readers see. Rebuilt by
/// applying ops in a causal order; the result does not depend on which one.
struct DocState: Sendable {
    var title = MVRegister<String>()
    /// Every note ever created (deleted ones too), in the order this copy learned of them.
    /// By slot, so that an edit changes a note in place (copying, if the state is shared, only
    /// its chunk: `NoteTable`); `noteSlots` finds a note by id.
    private(set) var noteStates = NoteTable()
    private var noteSlots = NoteSlotIndex()
    /// The note the last op edited and its slot, checked before `noteSlots` (ops come in runs on one note).
    private var lastNote = (id: LocalID.none, slot: -1)
    /// The order of notes: each element is a place (slot) holding a note's id;
    /// a note shows at the slot its `position` register's winner names.
    var order = ListCRDT<LocalID>()
    /// Scan steps list integration may still take (set while loading a file; see `Document.load`).
    var workBudget = Int.max
    /// While a block that stores its bodies' structures is read (format version 3): text ops only
    /// check that their note exists, and the bodies are built from the structures afterwards
    /// (`setBody(_:of:)`).
    var bodiesFromStructures = false
    /// While a block read without placeholder text is applied (`applyBase`,
    /// `WireBlock.placeholderCount`): an insert integrates the first `length` characters of the
    /// `text` it is given (placeholders, as many as the longest insert), not those from its
    /// `contentStart`.
    var textFromStart = false
    /// Counts the delete and restore ops applied, so that a cached lookup of a live note
    /// (`DocumentCore.target`) knows when to look at the note again.
    private(set) var deletionEpoch = 0

    /// Applies one op whose first unit has id `id` and Lamport timestamp `lamport`.
    mutating func apply<Text: RandomAccessCollection<Unicode.Scalar>>(_ op: Op, id: LocalID, lamport: UInt64, replicas: [ReplicaID], text: Text) throws(ApplyError) where Text.Index == Int {
        switch op.body {
        case .setNotebookTitle(let value, let preds):
            title.write(id: id, lamport: lamport, replicas: replicas, value: value, preds: preds)
        case .createNote(let left, let right, let created):
            guard noteSlots[id] == nil else { throw .noteExists(id) }
            try Self.lift { () throws(ListError) in
                try order.integrate(id: id, originLeft: left, originRight: right, elements: CollectionOfOne(id), budget: &workBudget, replicaLess: { replicas[Int($0)] < replicas[Int($1)] })
            }
            // Appended, then written in place (a note built first was copied into the array).
            noteSlots.insert(id, slot: noteStates.count)
            noteStates.append(NoteState(id: id, created: created, lamport: lamport))
            // The ops that give a new note its title, tags and body usually come next.
            lastNote = (id, noteStates.count - 1)
        case .setNoteTitle(let n, let value, let preds):
            try withNote(n) { $0.title.write(id: id, lamport: lamport, replicas: replicas, value: value, preds: preds) }
        case .setPriority(let n, let value, let preds):
            try withNote(n) { $0.writePriority(value, id: id, lamport: lamport, replicas: replicas, preds: preds) }
        case .deleteNote(let n, let preds):
            deletionEpoch &+= 1
            try withNote(n) { $0.writeDeleted(true, id: id, lamport: lamport, replicas: replicas, preds: preds) }
        case .restoreNote(let n, let preds):
            deletionEpoch &+= 1
            try withNote(n) { $0.writeDeleted(false, id: id, lamport: lamport, replicas: replicas, preds: preds) }
        case .addTag(let n, let tag):
            try withNote(n) { $0.tags.insert(tag, id: id) }
        case .removeTag(let n, let tag, let removes):
            try withNote(n) { $0.tags.remove(tag, removes: removes) }
        case .insertText(let n, let left, let right, let start):
            let i = try index(of: n)
            if bodiesFromStructures { return }
            let from = textFromStart ? 0 : start
            try Self.lift { () throws(ListError) in
                try noteStates[i].body.integrate(id: id, originLeft: left, originRight: right,
                                                   elements: text[from ..< from + op.length], budget: &workBudget, replicaLess: { replicas[Int($0)] < replicas[Int($1)] })
            }
        case .deleteText(let n, let target, let reversed):
            let i = try index(of: n)
            if bodiesFromStructures { return }
            try Self.lift { () throws(ListError) in
                try noteStates[i].body.delete(target: target, length: op.length, reversed: reversed)
            }
        case .moveNote(let n, let left, let right, let preds):
            let i = try index(of: n)
            try Self.lift { () throws(ListError) in
                try order.integrate(id: id, originLeft: left, originRight: right, elements: CollectionOfOne(n), budget: &workBudget, replicaLess: { replicas[Int($0)] < replicas[Int($1)] })
            }
            noteStates[i].writePosition(id: id, lamport: lamport, replicas: replicas, preds: preds)
        case .unknown:
            break
        }
    }

    @inline(__always)
    private mutating func withNote(_ n: LocalID, _ body: (inout NoteState) -> Void) throws(ApplyError) {
        let i = try index(of: n)
        body(&noteStates[i])
    }

    private mutating func index(of n: LocalID) throws(ApplyError) -> Int {
        if n == lastNote.id { return lastNote.slot }
        guard let i = noteSlots[n] else { throw .unknownNote(n) }
        lastNote = (n, i)
        return i
    }

    /// The first `k` whose note (in `slots[k]`) `listed[k]` does not show as its history does
    /// (`NoteState.shows`), if any.
    func firstNoteNotShown(_ listed: [WireNoteState], slots: [Int]) -> Int? {
        noteStates.withNotePlaces { notes in
            listed.withUnsafeBufferPointer { listed in
                guard let firstListed = listed.baseAddress else { return nil }
                for k in listed.indices {
                    let slot = slots[k]
                    guard slot >= 0 && slot < notes.count, NoteState.shows(notes[slot], firstListed + k) else { return k }
                }
                return nil
            }
        }
    }

    /// Makes room for `count` more notes.
    mutating func reserveNotes(_ count: Int) {
        noteStates.reserveCapacity(noteStates.count + count)
    }

    /// Makes room for every note a file's base block creates (`ops`), so that the notes' array is
    /// allocated once: grown by doubling, it held up to twice the notes' memory, and twice over
    /// while it was copied (a merge loads two files at once: a quarter of its peak). And an
    /// eighth more, as the log's arrays get (`OpLog.reserve`): the first note a later block or
    /// an edit adds would otherwise copy the whole array into one twice its size (room never
    /// written takes no memory). Not for an appended block: room made exactly for each of many
    /// small blocks would copy the array for every one.
    mutating func reserveNotes(forBase ops: [Op]) {
        var creates = 0
        for op in ops {
            if case .createNote = op.body { creates += 1 }
        }
        reserveNotes(creates + creates / 8)
    }

    /// Puts `body` in place of the body of the note in `slot` (built from its structure:
    /// `bodiesFromStructures`).
    mutating func setBody(_ body: ListCRDT<Unicode.Scalar>, slot: Int) {
        noteStates[slot].body = body
    }

    /// Calls `fill(k, &body)` for the body of the note in each of `slots` (`k` its place in
    /// `slots`, every slot a different note), the first half of them here and the second on
    /// another thread when there are at least `concurrentFrom`; returns the first `k` whose
    /// `fill` returned false, if any (each half stops at its first).
    /// - Complexity: what the calls cost, over two threads.
    mutating func fillBodies(slots: [Int], concurrentFrom: Int,
                             _ fill: @escaping @Sendable (Int, inout ListCRDT<Unicode.Scalar>) -> Bool) -> Int? {
        // Each slot a note's, and once: the two threads must never reach one note.
        var seen = [Bool](repeating: false, count: noteStates.count)
        for slot in slots {
            precondition(noteStates.indices.contains(slot) && !seen[slot], "each slot once, and a note's")
            seen[slot] = true
        }
        return noteStates.withUniqueNotes { all -> Int? in
            @Sendable func run(_ range: Range<Int>, _ notes: NotePlaces) -> Int? {
                for k in range where !fill(k, &notes[slots[k]].pointee.body) { return k }
                return nil
            }
            guard slots.count >= concurrentFrom, slots.count >= 2 else { return run(slots.indices, all) }
            let half = slots.count / 2, count = slots.count
            let (first, second) = Concurrently.run({ run(0 ..< half, all) }, alongside: { run(half ..< count, all) })
            return first ?? second
        }
    }

    /// Gives the body of each note in `slots` that is left unwritten its text, `text(k)` for
    /// `slots[k]`: read in place (`ListCRDT.readText(in:)`), or copied
    /// (`ListCRDT.writeText(_:)`) when not `inPlace`. On this thread: each body that reads in
    /// place keeps the bytes it reads alive, and two threads counting references to one buffer
    /// would both wait on it. The `k` of one that cannot, if any.
    mutating func readBodiesInPlace(slots: [Int], inPlace: Bool, _ text: (Int) -> ArraySlice<UInt8>) -> Int? {
        noteStates.withUniqueNotes { notes in
            for k in slots.indices where notes[slots[k]].pointee.body.textIsUnwritten {
                let done = inPlace ? notes[slots[k]].pointee.body.readText(in: text(k))
                    : text(k).withUnsafeBufferPointer { notes[slots[k]].pointee.body.writeText($0) }
                guard done else { return k }
            }
            return nil
        }
    }

    /// How many bytes the bodies of the notes in `slots` that are left unwritten would read
    /// in place, `text(k)` for `slots[k]`.
    func unwrittenBodyBytes(slots: [Int], _ text: (Int) -> Int) -> Int {
        noteStates.withNotePlaces { notes in
            var total = 0
            for k in slots.indices where notes.read(slots[k], { $0.body.textIsUnwritten }) { total += text(k) }
            return total
        }
    }

    /// The slot in `noteStates` of the note created by op `n`, if any. Slots never change once assigned.
    func slot(of n: LocalID) -> Int? {
        if n == lastNote.id { return lastNote.slot }
        return noteSlots[n]
    }

    /// Origins for a local insert at visible `index` of the body of the note in `slot`
    /// (see `ListCRDT.originsForLocalInsert`).
    mutating func originsForInsert(slot: Int, atVisible index: Int) -> (left: LocalID, right: LocalID) {
        noteStates[slot].body.originsForLocalInsert(atVisible: index)
    }

    /// A local insert into the body of the note in `slot` that continues the typing there
    /// (see `ListCRDT.continueTyping`): its right origin, or nil when it must be integrated.
    mutating func continueTyping(slot: Int, atVisible index: Int, id: LocalID, elements: some Collection<Unicode.Scalar>) -> LocalID? {
        noteStates[slot].body.continueTyping(atVisible: index, id: id, elements: elements)
    }

    /// What `continueTyping(slot:atVisible:id:elements:)` would return, changing nothing.
    func typingContinuation(slot: Int, atVisible index: Int, id: LocalID) -> LocalID? {
        noteStates[slot].body.typingContinuation(atVisible: index, id: id)
    }

    /// Marks the visible elements in `range` of the body of the note in `slot` deleted and
    /// returns their ids, as maximal runs of contiguous ids in list order (see `ListCRDT.deleteVisible`).
    mutating func deleteVisible(slot: Int, _ range: Range<Int>) -> [(LocalID, Int)] {
        noteStates[slot].body.deleteVisible(range)
    }

    /// The first run of contiguous ids a local delete from visible `index` of the body of the
    /// note in `slot` removes (see `ListCRDT.firstVisibleIDSpanForEdit`).
    mutating func firstVisibleIDSpan(slot: Int, at index: Int, maxLength: Int) -> (LocalID, Int)? {
        noteStates[slot].body.firstVisibleIDSpanForEdit(at: index, maxLength: maxLength)
    }

    /// The note created by op `n`, if any.
    func note(_ n: LocalID) -> NoteState? { slot(of: n).map { noteStates[$0] } }

    private static func lift(_ f: () throws(ListError) -> Void) throws(ApplyError) {
        do { try f() } catch {
            switch error {
            case .missingElement(let o): throw .unknownElement(o)
            case .tooMuchWork: throw .tooMuchWork
            }
        }
    }

    /// The slots in `noteStates` of the live notes, in document order. Slots rather than
    /// copies: a `NoteState` holds a dozen references, and copying every note of a large
    /// notebook to list it cost a tenth of a load.
    var orderedNoteSlots: [Int] { noteSlotsInOrder(includingDeleted: false) }

    /// The slots in `noteStates` of every note (deleted ones too), in document order of its current place.
    var allNoteSlotsInOrder: [Int] { noteSlotsInOrder(includingDeleted: true) }

    /// - Complexity: O(n) for n places in the order when the notes sit in the order as they were
    ///   created (each then found beside the one before it, in the slot after its slot), else
    ///   O(n log n) (`NoteSlotIndex`).
    private func noteSlotsInOrder(includingDeleted: Bool) -> [Int] {
        var out: [Int] = []
        out.reserveCapacity(noteStates.count)
        noteStates.withNotePlaces { notes in
            var next = 0
            order.forEachElement { place, noteID, _ in
                // The slot after the last one found holds this note when notes were added in
                // order (a notebook built by appending), which spares the index's bisection.
                let i: Int
                if next < notes.count && notes[next].pointee.id == noteID { i = next } else if let found = slot(of: noteID) { i = found } else { return }
                next = i + 1
                let note = notes[i]
                guard includingDeleted || !note.pointee.isDeleted, note.pointee.position.value == place else { return }
                out.append(i)
            }
        }
        return out
    }

    /// The last live note in document order (that of the last of `orderedNoteSlots`), found from the end of the
    /// order rather than by listing every note.
    var lastLiveNote: NoteState? {
        order.lastElement { place, noteID, _ in
            guard let i = slot(of: noteID) else { return false }
            return !noteStates[i].isDeleted && noteStates[i].position.value == place
        }.flatMap { note($0.element) }
    }

    /// Every note (deleted ones too) in document order of its current place.
    var allNotesInOrder: [NoteState] { allNoteSlotsInOrder.map { noteStates[$0] } }
}

extension DocState {
    /// Applies the ops of `log` from local version `startLV` on (`firstChange` is the change
    /// holding it), in the log's order, a stored op at a time: a run of typing over many
    /// changes is one op, integrated as one run, which gives what applying it change by change
    /// gives. Loading a block and merging append their changes to the log, then call this.
    /// A log whose text a load left unwritten gives its inserts placeholders that are counted,
    /// not stored (`PlaceholderRun`): the bodies then hold none until their text is read in.
    mutating func applyOps(of log: OpLog, from startLV: Int, firstChange: Int) throws(ApplyFailure) {
        if log.textIsUnwritten {
            try applyOps(of: log, from: startLV, firstChange: firstChange, text: PlaceholderRun(0 ..< log.textCount))
        } else {
            try applyOps(of: log, from: startLV, firstChange: firstChange, text: log.textView)
        }
    }

    private mutating func applyOps<Text: RandomAccessCollection<Unicode.Scalar>>(of log: OpLog, from startLV: Int, firstChange: Int,
                                                                               text: Text) throws(ApplyFailure) where Text.Index == Int {
        guard startLV < log.lvCount else { return }
        var i = log.opIndex(containingLV: startLV)
        var ci = firstChange
        while i < log.ops.count {
            let whole = log.ops[i]
            let from = max(whole.lv, startLV)
            let op = log.slice(whole, from: from, to: whole.lv + whole.length)
            ci = log.changeIndex(containingLV: from, from: ci)
            let c = log.changes[ci]
            do {
                try apply(op, id: log.localID(ofLV: from, change: ci), lamport: c.lamport + UInt64(from - c.lvStart),
                          replicas: log.replicas, text: text)
            } catch {
                throw ApplyFailure(error: error, change: ci)
            }
            i += 1
        }
    }

    /// What `applyBase` made of a block.
    enum BaseApplication: Sendable {
        case applied(DocState)
        case failed(ApplyFailure)
        /// The block's changes and ops do not fit together (the log's own checks say how), or its
        /// timestamps do not fit in 32 bits (the log's replay then applies it).
        case inconsistent
    }

    /// The state a file's base block gives, applied from the block alone (no op log): its ops in
    /// order, each whole (joined as the log joins them), at the id and Lamport timestamp of its
    /// first unit. In a base block
    /// replica index `r` is the log's agent `r`, a change's first counter is the sum of the
    /// lengths of its replica's earlier changes, and its Lamport timestamp is one more than the
    /// largest last timestamp of its dependencies (one more than the change before's, for a
    /// change stored as continuing it). Never traps on a block that does not add up: it says
    /// `inconsistent`, and the log's checks, run on the same block, report it.
    /// `stop` is asked now and then (it is true once the caller no longer needs the result):
    /// then this gives up, saying `inconsistent`.
    static func applyBase(_ block: WireBlock, workBudget: Int, bodiesFromStructures: Bool = false, stop: () -> Bool = { false }) -> BaseApplication {
        // A block read without placeholders (`WireBlock.placeholderCount`): each insert reads
        // placeholders from offset 0 (`textFromStart`), as many as it has units (ops joined
        // below may be longer than any stored one), and the bodies are filled in afterwards.
        if block.placeholderCount != nil {
            return applyBase(block, text: PlaceholderRun(0 ..< block.textCount), workBudget: workBudget,
                             bodiesFromStructures: bodiesFromStructures, stop: stop)
        }
        return applyBase(block, text: block.text, workBudget: workBudget, bodiesFromStructures: bodiesFromStructures, stop: stop)
    }

    /// `applyBase` with the block's text, or placeholders (`PlaceholderRun`) for a block read
    /// without them.
    private static func applyBase<Text: RandomAccessCollection<Unicode.Scalar>>(
        _ block: WireBlock, text: Text, workBudget: Int, bodiesFromStructures: Bool, stop: () -> Bool
    ) -> BaseApplication where Text.Index == Int {
        // Plain loops over locals, a run of changes at a time: no closures or nested functions
        // capture the mutable state, which would make every access to it a dynamic exclusivity
        // check (tens of millions of instructions on a long history; the one nested function
        // below captures constants only).
        let changes = block.changes, ops = block.ops, replicas = block.replicas, depRows = block.depRows
        let n = changes.count, runCount = changes.runCount, lengths = changes.lengthColumn
        let opCount = ops.count, replicaCount = replicas.count, textCount = block.textCount
        let placeholders = block.placeholderCount != nil
        guard replicaCount > 0 else { return .inconsistent }
        // First pass: each change's Lamport timestamp (its first unit's): for the first of a run,
        // one more than the largest last timestamp of its dependencies; for a later one, right
        // after the change before. In 32 bits (4 bytes a change): a base block's are at most its
        // unit count + 1. Also where each run's units start in the block (`runUnits`).
        // Over buffers, the state kept in locals of the closure (a captured variable is checked
        // for exclusive access at run time on every use).
        var lamports = [UInt32](repeating: 0, count: n)
        var runUnits = [Int](repeating: 0, count: runCount + 1)
        let firstPassOK = lamports.withUnsafeMutableBufferPointer { lp in
            runUnits.withUnsafeMutableBufferPointer { ru in
                lengths.withUnsafeBufferPointer { len in
                    depRows.withUnsafeBufferPointer { deps -> Bool in
                        guard len.count == n else { return false }
                        var units = 0
                        for r in 0 ..< runCount {
                            let (range, c) = changes.run(r)
                            guard c.depStart >= 0, c.depStart + c.depCount <= deps.count else { return false }
                            var lamport: UInt32 = 1
                            for k in c.depStart ..< c.depStart + c.depCount {
                                let d = Int(deps[k])
                                guard d >= 0 && d < range.lowerBound else { return false }
                                lamport = Swift.max(lamport, lp[d] &+ len[d])
                            }
                            var zero = false
                            for i in range {
                                let l = len[i]
                                lp[i] = lamport
                                lamport = lamport &+ l
                                units += Int(l)
                                zero = zero || l == 0
                            }
                            guard !zero, units < Int(UInt32.max) - 1 else { return false }
                            ru[r + 1] = units
                        }
                        return true
                    }
                }
            }
        }
        guard firstPassOK else { return .inconsistent }
        let runStarts = runUnits
        // Second pass: the ops in order, each at its first unit, a run of changes at a time: in
        // a run, a unit's counter and Lamport timestamp are the run's first ones plus its place
        // in the run (its changes follow each other), so no change is visited on its own. The
        // change holding an op's first unit is looked for only to name it in an error.
        // Consecutive ops that continue each other are applied as one, as the log joins them
        // (`OpLog.merge`), so that the lists do the same work and meet the same errors.
        var state = DocState()
        state.workBudget = workBudget
        state.bodiesFromStructures = bodiesFromStructures
        state.textFromStart = placeholders
        state.reserveNotes(forBase: ops)
        var counterNext = [Int](repeating: 0, count: replicaCount)
        var next = 0, nextUnit = 0   // the next op and its first unit's position
        // The op waiting to be applied (ops that continue it join it first), and where its first
        // unit lies: the run and the position in the block.
        var pending: Op?
        var pendingRun = 0, pendingUnit = 0, pendingID = LocalID.none, pendingLamport: UInt64 = 0
        /// The change holding unit `unit` of the block, in run `r`.
        func change(holding unit: Int, inRun r: Int) -> Int {
            let range = changes.run(r).changes
            var u = runStarts[r]
            for i in range {
                u += Int(lengths[i])
                if unit < u { return i }
            }
            return range.upperBound - 1
        }
        for r in 0 ..< runCount {
            let (range, c) = changes.run(r)
            guard c.replica >= 0 && c.replica < replicaCount else { return .inconsistent }
            let runStart = runStarts[r], runEnd = runStarts[r + 1]
            let counterStart = counterNext[c.replica]
            guard counterStart + (runEnd - runStart) < Int(UInt32.max) else { return .inconsistent }
            counterNext[c.replica] = counterStart + (runEnd - runStart)
            let lamportStart = UInt64(lamports[range.lowerBound])
            while next < opCount && nextUnit < runEnd {
                if next & 63 == 0 && stop() { return .inconsistent }
                let op = ops[next]
                guard op.length > 0 else { return .inconsistent }
                if case .insertText(_, _, _, let s) = op.body, s < 0 || s + op.length > textCount { return .inconsistent }
                let offset = nextUnit - runStart
                let id = LocalID(agent: UInt32(c.replica), counter: UInt32(counterStart + offset))
                if let p = pending, let joined = OpLog.merge(p, firstID: pendingID, op, firstID: id) {
                    pending = joined
                } else {
                    if let p = pending {
                        do throws(ApplyError) {
                            try state.apply(p, id: pendingID, lamport: pendingLamport, replicas: replicas, text: text)
                        } catch {
                            return .failed(ApplyFailure(error: error, change: change(holding: pendingUnit, inRun: pendingRun)))
                        }
                    }
                    pending = op
                    pendingRun = r
                    pendingUnit = nextUnit
                    pendingID = id
                    pendingLamport = lamportStart + UInt64(offset)
                }
                next += 1
                nextUnit += op.length
            }
        }
        if let p = pending {
            do throws(ApplyError) {
                try state.apply(p, id: pendingID, lamport: pendingLamport, replicas: replicas, text: text)
            } catch {
                return .failed(ApplyFailure(error: error, change: change(holding: pendingUnit, inRun: pendingRun)))
            }
        }
        guard next == ops.count else { return .inconsistent }
        state.textFromStart = false
        return .applied(state)
    }

}

extension DocState {
    /// Puts `note` in place of the note with its id, or adds it when there is none (a merge's
    /// rebuild of one note: `DocState.apply(newChanges:of:rebuilding:)`). Counts as a delete or
    /// restore for `deletionEpoch`: the note's deleted flag may have changed.
    mutating func putNote(_ note: NoteState) {
        deletionEpoch &+= 1
        if let slot = slot(of: note.id) {
            noteStates[slot] = note
        } else {
            noteSlots.insert(note.id, slot: noteStates.count)
            noteStates.append(note)
        }
    }
}

