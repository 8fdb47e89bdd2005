/// What changed between two states of a notebook, in note terms.
public struct NotebookDiff: Equatable, Sendable {
    /// One field of a note that differs.
    public enum Field: String, Sendable, Equatable, CaseIterable { case title, body, tags, priority }

    public enum NoteChange: Equatable, Sendable {
        case added(Note)
        case deleted(Note)
        case edited(before: Note, after: Note, fields: [Field])
        case moved(Note, from: Int, to: Int)

        public var note: Note {
            switch self {
            case .added(let n), .deleted(let n), .moved(let n, _, _): n
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
    /// never reported moved.
    public init(from a: Notebook, placed placesA: [NoteID: NotePlace], to b: Notebook, placed placesB: [NoteID: NotePlace]) {
        titleBefore = a.title
        titleAfter = b.title
        var out: [NoteChange] = []
        let before = Dictionary(a.notes.map { ($0.id, $0) }, uniquingKeysWith: { x, _ in x })
        let after = Dictionary(b.notes.map { ($0.id, $0) }, uniquingKeysWith: { x, _ in x })
        for n in b.notes where before[n.id] == nil { out.append(.added(n)) }
        for n in a.notes where after[n.id] == nil { out.append(.deleted(n)) }
        for n in b.notes {
            guard let old = before[n.id] else { continue }
            var fields: [Field] = []
            if !old.title.hasSameScalars(as: n.title) { fields.append(.title) }
            if !old.body.hasSameScalars(as: n.body) { fields.append(.body) }
            if !old.tags.elementsEqual(n.tags, by: { $0.hasSameScalars(as: $1) }) { fields.append(.tags) }
            if old.priority != n.priority { fields.append(.priority) }
            if !fields.isEmpty { out.append(.edited(before: old, after: n, fields: fields)) }
        }
        // Of the notes both states show: each one's rank among them in `a`. The notes before
        // the k-th of them in `b` are the same ones as before it in `a` exactly when its rank in
        // `a` is k and the largest rank among the k before it is k - 1 (k distinct ranks below k).
        var rankA: [NoteID: Int] = [:]
        rankA.reserveCapacity(a.notes.count)
        for n in a.notes where after[n.id] != nil && rankA[n.id] == nil { rankA[n.id] = rankA.count }
        let indexA = Dictionary(a.notes.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { x, _ in x })
        var k = 0, largestRankSoFar = -1
        for (i, n) in b.notes.enumerated() {
            guard let rank = rankA[n.id] else { continue }
            let sameNotesBefore = rank == k && largestRankSoFar == k - 1
            if !sameNotesBefore, let from = indexA[n.id], let was = placesA[n.id], let now = placesB[n.id], was != now {
                out.append(.moved(n, from: from, to: i))
            }
            largestRankSoFar = max(largestRankSoFar, rank)
            k += 1
        }
        changes = out
    }

    /// Compares two documents as they stand (`init(from:placed:to:placed:)` of their notebooks).
    public init(from a: Document, to b: Document) {
        self.init(from: a.notebook, placed: a.notePlaces, to: b.notebook, placed: b.notePlaces)
    }
}

/// Where a note was last put in the order of notes: the op that created it or last moved it
/// (the value of its position register that readers see). Copies that hold the same changes
/// give a note the same place; a move brought in gives it a new one, and nothing else does.
public struct NotePlace: Hashable, Sendable {
    let replica: ReplicaID
    let counter: UInt32
}
