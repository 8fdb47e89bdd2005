import PeerNote

/// Helpers for the history JSON both tools print (`pnmerge log --json`, `peernote log`, `blame`
/// and `revert`), so that a change's notes carry the same keys in both (man pages, JSON OUTPUT).
public enum HistoryJSON {
    /// One change as `pnmerge log --json` and `peernote log --json` print it (man/pnmerge.1,
    /// LOG): its ids, author, time, message and summary, the changes it depends on, how many
    /// operations it holds, whether it is a head, and what it did to each note. `titles` gives a
    /// note's title now (`Document.noteTitle`; nil, for a note the document does not hold: "").
    public static func change(_ e: HistoryEntry, isHead: Bool, titles: (NoteID) -> String?) -> JSONValue {
        .object([
            ("id", .string(e.id.fullDescription)),
            ("short", .string(e.id.description)),
            ("author", .string(e.author)),
            ("time", .string(TimeText.iso8601(e.time))),
            ("message", .string(e.message)),
            ("summary", .string(e.summary)),
            ("dependencies", .strings(e.dependencies.map(\.fullDescription))),
            ("operations", .int(e.operationCount)),
            ("head", .bool(isHead)),
            ("notes", .array(e.summaryParts.compactMap { notePart($0, titles: titles) })),
        ])
    }

    /// What a change did to one note: `{"note": id, "title": …, "change": "added"|"deleted"|"edited", "summary": …}`
    /// (`title` is the note's title now; `change` as `pnmerge diff --json` names it).
    public static func notePart(_ part: SummaryPart, titles: (NoteID) -> String?) -> JSONValue? {
        guard let id = part.note else { return nil }
        let change = switch part.kind {
        case .added: "added"
        case .deleted: "deleted"
        default: "edited"
        }
        return .object([("note", .string(id.description)), ("title", .string(titles(id) ?? "")),
                        ("change", .string(change)), ("summary", .string(part.text))])
    }
}
