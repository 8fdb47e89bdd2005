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
        asciiFolded = regex || !folded.utf8.allSatisfy({ $0 < 0x80 }) ? nil : Array(folded.utf8)
    }

    /// The pattern as matched (lowercased unless `caseSensitive`) as bytes, when it is plain
    /// text and ASCII: then a line of ASCII text is matched byte by byte (`matches(utf8:)`).
    private let asciiFolded: [UInt8]?

    /// Whether `line` holds a match.
    public func matches(_ line: String) -> Bool {
        if let regex { return (try? regex.firstMatch(in: line)) != nil }
        if folded.isEmpty { return true }
        return (caseSensitive ? line : line.lowercased()).contains(folded)
    }

    /// `matches(String(decoding: line, as: UTF8.self))`, without building the string when the
    /// pattern and the line are ASCII and the line holds no carriage return. Then the answer is
    /// the same: an ASCII string lowercases byte by byte (A–Z to a–z), and its characters are its
    /// bytes except that `\r\n` is one character, which a line without `\r` cannot hold, so a
    /// search by characters (what `contains` does) finds the pattern exactly where a search by
    /// bytes does. Any other line is matched through `matches(_:)`.
    func matches(utf8 line: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let pattern = asciiFolded, line.allSatisfy({ $0 < 0x80 && $0 != 0x0D }) else {
            return matches(String(decoding: line, as: UTF8.self))
        }
        let n = pattern.count
        guard n > 0 else { return true }
        guard line.count >= n else { return false }
        let fold = !caseSensitive
        return pattern.withUnsafeBufferPointer { p in
            for start in 0 ... line.count - n {
                var k = 0
                while k < n {
                    var c = line[start + k]
                    if fold, c >= UInt8(ascii: "A"), c <= UInt8(ascii: "Z") { c += 0x20 }
                    if c != p[k] { break }
                    k += 1
                }
                if k == n { return true }
            }
            return false
        }
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
        var kept: [(index: Int, note: Note)] = []
        forEachNote(matching: filter) { kept.append(($0, $1)) }
        return kept
    }

    /// Calls `body` with each live note `filter` keeps and its index among the live notes, in
    /// document order, made one at a time (`forEachNote`).
    public func forEachNote<E: Error>(matching filter: NoteFilter, _ body: (_ index: Int, _ note: Note) throws(E) -> Void) throws(E) {
        let conflicted: Set<NoteID> = filter.conflicted ? Set(conflicts.compactMap(\.note)) : []
        var index = 0
        try forEachNote { (n: Note) throws(E) in
            if keeps(n, filter, conflicted) { try body(index, n) }
            index += 1
        }
    }

    /// The deleted notes `filter` keeps, in document order.
    public func deletedNotes(matching filter: NoteFilter) -> [Note] {
        let conflicted: Set<NoteID> = filter.conflicted ? Set(conflicts.compactMap(\.note)) : []
        return deletedNotes.filter { keeps($0, filter, conflicted) }
    }

    private func keeps(_ n: Note, _ filter: NoteFilter, _ conflicted: Set<NoteID>) -> Bool {
        keeps(n.id, n.tags, n.priority, filter, conflicted)
    }

    /// Whether `filter` keeps the note `id` with `tags` and `priority` (`conflicted`: the notes
    /// with open conflicts, when the filter asks for them).
    func keeps(_ id: NoteID, _ tags: [String], _ priority: Priority, _ filter: NoteFilter, _ conflicted: Set<NoteID>) -> Bool {
        if let p = filter.priority, priority != p { return false }
        if filter.conflicted, !conflicted.contains(id) { return false }
        return filter.tags.allSatisfy { tags.containsScalars(of: $0) }
    }

    /// Every title and body line of the live notes (those with `tag`, when given) that `search`
    /// matches, in document order, each note's title before its body lines. A body's lines are
    /// split at `\n` (a `\r` before it stays in the line's text).
    public func search(_ search: NoteSearch, tag: String? = nil) -> [SearchHit] {
        var hits: [SearchHit] = []
        self.search(search, tag: tag) { hits.append($0) }
        return hits
    }

    /// `search(_:tag:)`, each hit given to `found` as it is found, the notes made one at a time
    /// (`forEachNote`): a search that matches most lines of a large notebook holds no list of
    /// them. A hit `found` throws for is the last.
    public func search<E: Error>(_ search: NoteSearch, tag: String? = nil, each found: (SearchHit) throws(E) -> Void) throws(E) {
        try forEachNote { (n: Note) throws(E) in
            guard tag.map({ n.tags.containsScalars(of: $0) }) ?? true else { return }
            var title = n.title
            if title.withUTF8({ search.matches(utf8: $0) }) { try found(SearchHit(note: n.id, title: n.title, line: nil, text: n.title)) }
            guard !n.body.isEmpty else { return }
            // Split at the byte 0x0A, which in UTF-8 is U+000A alone: the lines a split of the
            // scalars at "\n" gives ("\r\n" is one Character, which a split at "\n" would not
            // find), each made a string only when it is a hit.
            var body = n.body, failure: E?
            body.withUTF8 { bytes in
                var start = 0, number = 1
                while true {
                    let end = bytes[start...].firstIndex(of: 0x0A) ?? bytes.count
                    let line = UnsafeBufferPointer(rebasing: bytes[start ..< end])
                    if search.matches(utf8: line) {
                        do throws(E) {
                            try found(SearchHit(note: n.id, title: n.title, line: number, text: String(decoding: line, as: UTF8.self)))
                        } catch {
                            failure = error
                            return
                        }
                    }
                    guard end < bytes.count else { break }
                    start = end + 1
                    number += 1
                }
            }
            if let failure { throw failure }
        }
    }
}
