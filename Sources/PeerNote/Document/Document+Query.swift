/// Which notes a listing keeps: every condition given must hold.
///
/// Tags are matched by their exact Unicode scalars, as edits match them (`café` typed with
/// U+0301 is not the tag stored as U+00E9); a note must have every tag in `tags`.
public struct NoteFilter: Sendable {
    public var tags: [String]
    public var priority: Priority?
    /// Only notes with an open conflict (`Document.conflicts`).
    public var conflicted: Bool

    public init(tags: [String] = [], priority: Priority? = nil, conflicted: Bool = false) {
        self.tags = tags
        self.priority = priority
        self.conflicted = conflicted
    }

    /// Whether the filter keeps every note.
    public var isEmpty: Bool { tags.isEmpty && priority == nil && !conflicted }
}

/// What `Document.search` looks for in titles and bodies: a piece of text, or a regular
/// expression (Swift `Regex` syntax), matched ignoring letter case unless `caseSensitive`.
/// Not `Sendable`: it holds a compiled `Regex`.
public struct NoteSearch {
    public let pattern: String
    private let regex: Regex<AnyRegexOutput>?
    private let folded: String
    private let caseSensitive: Bool

    /// Throws `invalidArgument` (one line) for a regular expression that does not compile.
    public init(_ pattern: String, regex: Bool = false, caseSensitive: Bool = false) throws(PeerNoteError) {
        self.pattern = pattern
        self.caseSensitive = caseSensitive
        folded = caseSensitive ? pattern : pattern.lowercased()
        if regex {
            do {
                let compiled = try Regex(pattern)
                self.regex = caseSensitive ? compiled : compiled.ignoresCase()
            } catch {
                let reason = "\(error)".split(whereSeparator: \.isNewline).first.map(String.init) ?? "\(error)"
                throw .invalidArgument("\"\(pattern.clippedForMessage())\" is not a regular expression: \(reason)")
            }
        } else {
            self.regex = nil
        }
    }

    /// Whether `line` holds a match.
    public func matches(_ line: String) -> Bool {
        if let regex { return (try? regex.firstMatch(in: line)) != nil }
        if folded.isEmpty { return true }
        return (caseSensitive ? line : line.lowercased()).contains(folded)
    }
}

/// A line of a note that a search matched: the title (`line` nil) or a line of the body
/// (`line` counts from 1; the text is without its line break).
public struct SearchHit: Equatable, Sendable {
    public var note: NoteID
    public var title: String
    public var line: Int?
    public var text: String
}

extension Document {
    /// The live notes `filter` keeps, each with its index among the live notes (what `moveNote`
    /// and `addNote(at:)` count), in document order.
    public func notes(matching filter: NoteFilter) -> [(index: Int, note: Note)] {
        let all = notes
        let conflicted: Set<NoteID> = filter.conflicted ? Set(conflicts.compactMap(\.note)) : []
        return all.enumerated().filter { _, n in keeps(n, filter, conflicted) }.map { ($0.offset, $0.element) }
    }

    /// The deleted notes `filter` keeps, in document order.
    public func deletedNotes(matching filter: NoteFilter) -> [Note] {
        let conflicted: Set<NoteID> = filter.conflicted ? Set(conflicts.compactMap(\.note)) : []
        return deletedNotes.filter { keeps($0, filter, conflicted) }
    }

    private func keeps(_ n: Note, _ filter: NoteFilter, _ conflicted: Set<NoteID>) -> Bool {
        if let p = filter.priority, n.priority != p { return false }
        if filter.conflicted, !conflicted.contains(n.id) { return false }
        return filter.tags.allSatisfy { n.tags.containsScalars(of: $0) }
    }

    /// Every title and body line of the live notes (those with `tag`, when given) that `search`
    /// matches, in document order, each note's title before its body lines. A body's lines are
    /// split at `\n` (a `\r` before it stays in the line's text).
    public func search(_ search: NoteSearch, tag: String? = nil) -> [SearchHit] {
        var hits: [SearchHit] = []
        for n in notes where tag.map({ n.tags.containsScalars(of: $0) }) ?? true {
            if search.matches(n.title) { hits.append(SearchHit(note: n.id, title: n.title, line: nil, text: n.title)) }
            guard !n.body.isEmpty else { continue }
            // Split by scalars: "\r\n" is one Character, which a split at "\n" would not find.
            for (i, scalars) in n.body.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let line = String(String.UnicodeScalarView(scalars))
                if search.matches(line) { hits.append(SearchHit(note: n.id, title: n.title, line: i + 1, text: line)) }
            }
        }
        return hits
    }
}
