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
    public var isEmpty: Bool { titleBefore == titleAfter && changes.isEmpty }

    /// Compares two states. A note that is both edited and moved appears twice.
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
            if old.title != n.title { fields.append(.title) }
            if old.body != n.body { fields.append(.body) }
            if old.tags != n.tags { fields.append(.tags) }
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

    private static func lcs(_ x: [NoteID], _ y: [NoteID]) -> [NoteID] {
        let n = x.count, m = y.count
        guard n > 0 && m > 0 else { return [] }
        var t = [[Int]](repeating: [Int](repeating: 0, count: m + 1), count: n + 1)
        for i in stride(from: n - 1, through: 0, by: -1) {
            for j in stride(from: m - 1, through: 0, by: -1) {
                t[i][j] = x[i] == y[j] ? t[i + 1][j + 1] + 1 : max(t[i + 1][j], t[i][j + 1])
            }
        }
        var out: [NoteID] = []
        var i = 0, j = 0
        while i < n && j < m {
            if x[i] == y[j] { out.append(x[i]); i += 1; j += 1 } else if t[i + 1][j] >= t[i][j + 1] { i += 1 } else { j += 1 }
        }
        return out
    }
}
