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

    /// Compares two states. A note that is both edited and moved appears twice. Titles, bodies
    /// and tags differ when their Unicode scalars do (`hasSameScalars`), so a title respelled in
    /// another normalization form is an edit.
    /// Moves are the notes whose order relative to the others changed (a longest
    /// common subsequence of the surviving notes stays put).
    public init(from a: Notebook, to b: Notebook) {
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
            if old.tags.map(ExactString.init) != n.tags.map(ExactString.init) { fields.append(.tags) }
            if old.priority != n.priority { fields.append(.priority) }
            if !fields.isEmpty { out.append(.edited(before: old, after: n, fields: fields)) }
        }
        let commonA = a.notes.filter { after[$0.id] != nil }.map(\.id)
        let commonB = b.notes.filter { before[$0.id] != nil }.map(\.id)
        let stay = Set(Self.lcs(commonA, commonB))
        let indexA = Dictionary(a.notes.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { x, _ in x })
        for (i, n) in b.notes.enumerated() where before[n.id] != nil && !stay.contains(n.id) {
            out.append(.moved(n, from: indexA[n.id] ?? 0, to: i))
        }
        changes = out
    }

    /// A longest common subsequence of `x` and `y`, two orders of the same distinct notes:
    /// a longest run of `y` whose positions in `x` increase (patience sorting, O(n log n) time
    /// and O(n) memory; the table of the textbook algorithm took n² entries, 800 MB for
    /// 10,000 notes). Of several such runs, it keeps the notes that come first in `y`.
    static func lcs(_ x: [NoteID], _ y: [NoteID]) -> [NoteID] {
        var position: [NoteID: Int] = [:]
        position.reserveCapacity(x.count)
        for (i, id) in x.enumerated() { position[id] = i }
        // Read from the end: the longest run whose positions decrease there, so that ties go
        // to earlier notes of `y`. `ends[l]` is the index in `y` of the run of length l + 1
        // whose last note read (first in `y`) has the largest position; `link` chains a run.
        let keys = y.map { position[$0] ?? -1 }
        var ends: [Int] = []
        var link = [Int](repeating: -1, count: y.count)
        for j in y.indices.reversed() where keys[j] >= 0 {
            var lo = 0, hi = ends.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if keys[ends[mid]] > keys[j] { lo = mid + 1 } else { hi = mid }
            }
            if lo > 0 { link[j] = ends[lo - 1] }
            if lo == ends.count { ends.append(j) } else { ends[lo] = j }
        }
        var out: [NoteID] = []
        out.reserveCapacity(ends.count)
        var j = ends.last ?? -1
        while j >= 0 { out.append(y[j]); j = link[j] }
        return out
    }
}
