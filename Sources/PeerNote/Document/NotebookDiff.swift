/// What changed between two states of a notebook, in note terms.
public struct NotebookDiff: Equatable, Sendable {
    /// One field of a note that differs.
    public enum Field: String, Sendable, Equatable, CaseIterable { case title, body, tags, priority }

    public enum NoteChange: Equatable, Sendable {
        case added(Note)
        /// A note the first state held deleted and the second shows again (`restoreNote`).
        case restored(Note)
        case deleted(Note)
        case edited(before: Note, after: Note, fields: [Field])
        case moved(Note, from: Int, to: Int)

        public var note: Note {
            switch self {
            case .added(let n), .restored(let n), .deleted(let n), .moved(let n, _, _): n
            case .edited(_, let n, _): n
            }
        }
    }

    public var titleBefore: String
    public var titleAfter: String
    public var changes: [NoteChange]
    public var isEmpty: Bool { titleBefore.hasSameScalars(as: titleAfter) && changes.isEmpty }

    /// Compares two states of a notebook, given where each live note was placed in each
    /// (`Document.notePlaces`). A note that is both edited and moved appears twice. Titles,
    /// bodies and tags differ when their Unicode scalars do (`hasSameScalars`), so a title
    /// respelled in another normalization form is an edit.
    ///
    /// A note is moved when it was placed anew (a move changed the place readers see it at)
    /// and, of the notes both states show, the ones before it are no longer the same: a note
    /// whose index changed only because others were added, deleted or moved is not, and
    /// neither is one moved back to where it stood. A note missing from either map of places is
    /// never reported moved. A note the second state shows that `deletedBefore` holds (the first
    /// state's deleted notes, `Document.deletedNoteIDs`) is restored rather than added.
    public init(from a: Notebook, placed placesA: [NoteID: NotePlace], to b: Notebook, placed placesB: [NoteID: NotePlace],
                deletedBefore: Set<NoteID> = []) {
        titleBefore = a.title
        titleAfter = b.title
        changes = Self.changes(uniqueFrom: a.notes, placed: placesA, to: b.notes, placed: placesB)
            ?? Self.changes(from: a.notes, placed: placesA, to: b.notes, placed: placesB)
        if !deletedBefore.isEmpty {
            for k in changes.indices {
                if case .added(let n) = changes[k], deletedBefore.contains(n.id) { changes[k] = .restored(n) }
            }
        }
    }

    /// The changes `init` finds, in any two lists of notes (an id may repeat in either: the
    /// first note with it counts).
    static func changes(from a: [Note], placed placesA: [NoteID: NotePlace], to b: [Note], placed placesB: [NoteID: NotePlace]) -> [NoteChange] {
        var out: [NoteChange] = []
        let before = Dictionary(a.map { ($0.id, $0) }, uniquingKeysWith: { x, _ in x })
        let after = Dictionary(b.map { ($0.id, $0) }, uniquingKeysWith: { x, _ in x })
        for n in b where before[n.id] == nil { out.append(.added(n)) }
        for n in a where after[n.id] == nil { out.append(.deleted(n)) }
        for n in b {
            guard let old = before[n.id], let edit = edit(from: old, to: n) else { continue }
            out.append(edit)
        }
        // Of the notes both states show: each one's rank among them in `a`. The notes before
        // the k-th of them in `b` are the same ones as before it in `a` exactly when its rank in
        // `a` is k and the largest rank among the k before it is k - 1 (k distinct ranks below k).
        var rankA: [NoteID: Int] = [:]
        rankA.reserveCapacity(a.count)
        for n in a where after[n.id] != nil && rankA[n.id] == nil { rankA[n.id] = rankA.count }
        let indexA = Dictionary(a.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { x, _ in x })
        var k = 0, largestRankSoFar = -1
        for (i, n) in b.enumerated() {
            guard let rank = rankA[n.id] else { continue }
            let sameNotesBefore = rank == k && largestRankSoFar == k - 1
            if !sameNotesBefore, let from = indexA[n.id], let was = placesA[n.id], let now = placesB[n.id], was != now {
                out.append(.moved(n, from: from, to: i))
            }
            largestRankSoFar = max(largestRankSoFar, rank)
            k += 1
        }
        return out
    }

    /// The note edited from `old` to `n`, with the fields that differ (by exact scalars), or nil.
    static func edit(from old: Note, to n: Note) -> NoteChange? {
        var fields: [Field] = []
        if !old.title.hasSameScalars(as: n.title) { fields.append(.title) }
        if !old.body.hasSameScalars(as: n.body) { fields.append(.body) }
        if !old.tags.elementsEqual(n.tags, by: { $0.hasSameScalars(as: $1) }) { fields.append(.tags) }
        if old.priority != n.priority { fields.append(.priority) }
        return fields.isEmpty ? nil : .edited(before: old, after: n, fields: fields)
    }

    /// The changes `init` finds, when no id appears twice in either list of notes (as in every
    /// notebook): one dictionary, of `a`'s notes, instead of five (a notebook of many notes spent
    /// most of the comparison hashing ids). Nil when an id repeats, for `init`'s general way.
    static func changes(uniqueFrom a: [Note], placed placesA: [NoteID: NotePlace], to b: [Note], placed placesB: [NoteID: NotePlace]) -> [NoteChange]? {
        var indexA: [NoteID: Int] = [:]
        indexA.reserveCapacity(a.count)
        for (i, n) in a.enumerated() { indexA[n.id] = i }
        guard indexA.count == a.count else { return nil }
        // Each note of `b`'s index in `a`, if it is there; each note of `a`, whether `b` has it.
        var inA = [Int?](repeating: nil, count: b.count)
        var inB = [Bool](repeating: false, count: a.count)
        for (j, n) in b.enumerated() {
            guard let i = indexA[n.id] else { continue }
            guard !inB[i] else { return nil }
            inA[j] = i
            inB[i] = true
        }
        var out: [NoteChange] = []
        for (j, n) in b.enumerated() where inA[j] == nil { out.append(.added(n)) }
        for (i, n) in a.enumerated() where !inB[i] { out.append(.deleted(n)) }
        for (j, n) in b.enumerated() {
            guard let i = inA[j], let edit = edit(from: a[i], to: n) else { continue }
            out.append(edit)
        }
        // As in `init`: each shared note's rank among the shared notes in `a`.
        var rankA = [Int](repeating: -1, count: a.count)
        var ranked = 0
        for i in a.indices where inB[i] {
            rankA[i] = ranked
            ranked += 1
        }
        var k = 0, largestRankSoFar = -1
        for (j, n) in b.enumerated() {
            guard let i = inA[j] else { continue }
            let rank = rankA[i]
            let sameNotesBefore = rank == k && largestRankSoFar == k - 1
            if !sameNotesBefore, let was = placesA[n.id], let now = placesB[n.id], was != now {
                out.append(.moved(n, from: i, to: j))
            }
            largestRankSoFar = max(largestRankSoFar, rank)
            k += 1
        }
        return out
    }

    /// Compares two documents as they stand (`init(from:placed:to:placed:)` of their notebooks).
    public init(from a: Document, to b: Document) {
        self.init(from: a.notebook, placed: a.notePlaces, to: b.notebook, placed: b.notePlaces, deletedBefore: a.deletedNoteIDs)
    }
}

/// Where a note was last put in the order of notes: the op that created it or last moved it
/// (the value of its position register that readers see). Copies that hold the same changes
/// give a note the same place; a move brought in gives it a new one, and nothing else does.
public struct NotePlace: Hashable, Sendable {
    let replica: ReplicaID
    let counter: UInt32
}

/// A copy's notebook as a merge into it may change it, taken before the merge: the notebook
/// title, and the notes that the changes the copy lacks from the other copies name (each as it
/// was: live, deleted, or not held), with where each live one stood. Only those notes can differ
/// after the merge, except when the changes move notes (a move shifts others' positions and
/// `NotebookDiff` must rank every note to tell a move from a shift) or hold ops of a newer
/// version (which this version cannot tell the notes of): the baseline then holds the whole
/// notebook, as `NotebookDiff(from:to:)` compares it.
///
/// - Complexity: O(c + n) for c ops in the changes the copy lacks and n notes, with only the
///   named notes made as `Note` values (their bodies built); the whole notebook in the cases above.
public struct MergeBaseline: Sendable {
    /// The notebook title before the merge.
    let title: String
    /// The named notes as they were: each held one (live or deleted), by id.
    let notes: [NoteID: Note]
    /// Each named live note's index among the live notes.
    let indexes: [NoteID: Int]
    /// Every note the changes name, in the order first named.
    let named: [NoteID]
    /// The whole notebook, when the changes move notes or hold ops of a newer version. When
    /// they only move notes, its notes other than the named ones have no body (`bodiesOf`): a
    /// move changes no body, so those are the same after the merge.
    let whole: (notebook: Notebook, places: [NoteID: NotePlace], deleted: Set<NoteID>)?
    /// The notes whose bodies `whole` holds (and the notebook after the merge must be compared
    /// with, `NotebookDiff(from:to:)`); nil when it holds every note's.
    let bodiesOf: Set<NoteID>?

    /// Whether this baseline holds the whole notebook rather than the named notes.
    public var isWhole: Bool { whole != nil }

    /// The named notes that were live, with their titles (for `SharedTitle`-like checks).
    public var liveNamedNotes: [Note] { named.compactMap { notes[$0] }.filter { !$0.isDeleted } }

    /// The notes the changes name, in the order first named.
    public var namedNotes: [NoteID] { named }
}

extension Document {
    /// This copy's notebook before it takes in the changes of `others` it lacks (see
    /// `MergeBaseline`). Take it before merging: the merge may change this document in place.
    public func mergeBaseline(for others: [Document]) -> MergeBaseline {
        mergeBaseline(forLogs: others.map(\.log))
    }

    /// `mergeBaseline(for:)` of the copies `others` were taken from.
    public func mergeBaseline(for others: [MergeSource]) -> MergeBaseline {
        mergeBaseline(forLogs: others.map(\.log))
    }

    private func mergeBaseline(forLogs others: [OpLog]) -> MergeBaseline {
        var named: [NoteID] = [], seen: Set<NoteID> = []
        // A move shifts other notes' places, so the diff must rank every note: the baseline is
        // the whole notebook, with the bodies of the named notes alone. Ops of a newer version
        // name no note this version can tell: every body then.
        var moves = false, unknown = false
        scan: for source in others {
            for ci in log.missingChanges(from: source) {
                let first = LocalID(agent: source.changes[ci].agent, counter: source.changes[ci].counterStart)
                let startLV = source.changes[ci].lvStart
                var found: [LocalID] = []
                source.forEachOp(ofChange: ci) { op in
                    switch op.body {
                    case .setNotebookTitle: break
                    case .createNote: found.append(first.advanced(by: op.lv - startLV))
                    case .setNoteTitle(let n, _, _), .insertText(let n, _, _, _), .deleteText(let n, _, _), .addTag(let n, _),
                         .removeTag(let n, _, _), .setPriority(let n, _, _), .deleteNote(let n, _), .restoreNote(let n, _):
                        found.append(n)
                    case .moveNote(let n, _, _, _):
                        moves = true
                        found.append(n)
                    case .unknown: unknown = true
                    }
                }
                if unknown { break scan }
                for n in found {
                    let id = NoteID(replica: source.replicas[Int(n.agent)], counter: n.counter)
                    if seen.insert(id).inserted { named.append(id) }
                }
            }
        }
        if unknown {
            return MergeBaseline(title: title, notes: [:], indexes: [:], named: [],
                                 whole: (notebook, notePlaces, deletedNoteIDs), bodiesOf: nil)
        }
        if moves {
            let bodies = Set(named)
            return MergeBaseline(title: title, notes: [:], indexes: [:], named: [],
                                 whole: (notebook(bodiesOf: bodies), notePlaces, deletedNoteIDs), bodiesOf: bodies)
        }
        var notes: [NoteID: Note] = [:]
        var slots: [Int: NoteID] = [:]
        for id in named {
            guard let local = localID(id), let slot = state.slot(of: local) else { continue }
            let n = makeNote(state.noteStates[slot])
            notes[id] = n
            if !n.isDeleted { slots[slot] = id }
        }
        return MergeBaseline(title: title, notes: notes, indexes: liveIndexes(of: slots), named: named, whole: nil, bodiesOf: nil)
    }

    /// The notebook's live notes in order with the bodies of `bodies`' notes alone, the others'
    /// left empty, and no conflicts: what a comparison of two states that differ in no other
    /// note's body needs.
    /// - Complexity: O(n) for n notes, only `bodies`' notes' bodies made.
    func notebook(bodiesOf bodies: Set<NoteID>) -> Notebook {
        let notes = noteSummaries.map { n in
            n.note(body: bodies.contains(n.id) ? (note(n.id)?.body ?? "") : "")
        }
        return Notebook(id: id, title: title, notes: notes)
    }

    /// The index among the live notes of each note in `slots` (by its slot in the state).
    /// - Complexity: O(n) for n notes, without making any note.
    func liveIndexes(of slots: [Int: NoteID]) -> [NoteID: Int] {
        guard !slots.isEmpty else { return [:] }
        var out: [NoteID: Int] = [:]
        // A few slots are compared directly: hashing every note's slot cost more than the walk.
        let few = slots.count <= 8 ? Array(slots.keys) : nil
        for (i, slot) in state.orderedNoteSlots.enumerated() {
            if let few, !few.contains(slot) { continue }
            if let id = slots[slot] { out[id] = i }
        }
        return out
    }
}

extension NotebookDiff {
    /// What a merge changed in a copy: from `baseline`, taken before the merge, to `document`
    /// after it. The same changes, in the same order, as `init(from:placed:to:placed:deletedBefore:)`
    /// gives for the whole notebooks, with only the notes the merge's changes name made and
    /// compared (all of them when the baseline is whole).
    public init(from baseline: MergeBaseline, to document: Document) {
        if let whole = baseline.whole {
            let after = baseline.bodiesOf.map { document.notebook(bodiesOf: $0) } ?? document.notebook
            let diff = NotebookDiff(from: whole.notebook, placed: whole.places, to: after, placed: document.notePlaces,
                                    deletedBefore: whole.deleted)
            (titleBefore, titleAfter, changes) = (diff.titleBefore, diff.titleAfter, diff.changes)
            return
        }
        titleBefore = baseline.title
        titleAfter = document.title
        // The named notes as they are now, and where the live ones stand.
        var after: [NoteID: Note] = [:], slots: [Int: NoteID] = [:]
        for id in baseline.named {
            guard let local = document.localID(id), let slot = document.state.slot(of: local) else { continue }
            let n = document.makeNote(document.state.noteStates[slot])
            after[id] = n
            if !n.isDeleted { slots[slot] = id }
        }
        let indexAfter = document.liveIndexes(of: slots)
        let before = baseline.notes, indexBefore = baseline.indexes
        // As the whole comparison lists them: added (and restored) in the new order, deleted in
        // the old, edited in the new; a note is live where it has a place among the live notes.
        // (No note moves: a baseline of named notes is taken only when the changes hold no
        // move, and nothing else gives a note a new place.)
        let inNewOrder = indexAfter.sorted { $0.value < $1.value }.map(\.key)
        let inOldOrder = indexBefore.sorted { $0.value < $1.value }.map(\.key)
        var out: [NoteChange] = []
        for id in inNewOrder where indexBefore[id] == nil {
            guard let n = after[id] else { continue }
            out.append(before[id]?.isDeleted == true ? .restored(n) : .added(n))
        }
        for id in inOldOrder where indexAfter[id] == nil {
            guard let n = before[id] else { continue }
            out.append(.deleted(n))
        }
        for id in inNewOrder where indexBefore[id] != nil {
            guard let old = before[id], let n = after[id], let edit = Self.edit(from: old, to: n) else { continue }
            out.append(edit)
        }
        changes = out
    }
}

extension MergeBaseline {
    /// The whole notebook before the merge, when the baseline holds it (`isWhole`): its live
    /// notes in order, without conflicts; when the changes only move notes, with the bodies of
    /// the notes they name alone (the others' empty).
    public var wholeNotebook: Notebook? { whole?.notebook }
}

extension Document {
    /// For each of `titles` that live notes have (the same scalars), those notes' ids in
    /// document order; the groups in the order their first notes come.
    /// - Complexity: O(n·t) for n notes and t titles; no note is made, and the order of notes is
    ///   walked only when two notes or more have the titles.
    public func liveNotes(titled titles: [String]) -> [(title: String, notes: [NoteID])] {
        guard !titles.isEmpty else { return [] }
        let state = self.state
        // The live notes with one of the titles, found in slot order, each read in place; then,
        // when there are two or more, put in document order (`orderedNoteSlots`, which holds
        // every live note once: the place its position register shows holds it).
        var found: [(slot: Int, title: Int)] = []
        state.noteStates.withNotePlaces { notes in
            for slot in 0 ..< notes.count where !notes[slot].pointee.isDeleted {
                let title = notes[slot].pointee.title.value ?? ""
                if let k = titles.firstIndex(where: { $0.hasSameScalars(as: title) }) { found.append((slot, k)) }
            }
        }
        if found.count > 1 {
            let title = Dictionary(found.map { ($0.slot, $0.title) }, uniquingKeysWith: { a, _ in a })
            found = state.orderedNoteSlots.compactMap { slot in title[slot].map { (slot, $0) } }
        } else if let only = found.first, !(state.noteStates[only.slot].position.value.map { state.order.contains($0) } ?? false) {
            found = []
        }
        var groups = [[NoteID]](repeating: [], count: titles.count)
        var order: [Int] = []
        for (slot, k) in found {
            if groups[k].isEmpty { order.append(k) }
            groups[k].append(noteID(state.noteStates[slot].id))
        }
        return order.map { (titles[$0], groups[$0]) }
    }
}
