import PeerNote

/// The JSON form of notes and notebooks, one renderer for both tools (`pnmerge show --format
/// json`, `peernote export --format json`, and every `--json` that lists notes), so that a note
/// has the same keys, in the same order, wherever it is printed (schema in pnmerge(1) and
/// peernote(1), JSON OUTPUT):
///
///     {"id": "<16 hex digits>", "title": "…", "body": "…", "tags": ["…"],
///      "priority": "low|normal|high", "created": "2024-05-01T09:30:00Z"}
///
/// Strings are escaped by `JSONValue` (control characters, C1 controls, U+2028 and U+2029 as
/// `\uXXXX`).
public enum NotebookJSONValue {
    /// A note's object; with `deleted`, a `deleted` key after `created` (for listings that hold
    /// deleted notes); `extra` members follow.
    public static func note(_ n: Note, deleted: Bool = false, extra: [(String, JSONValue)] = []) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("id", .string(n.id.description)), ("title", .string(n.title)), ("body", .string(n.body)),
            ("tags", .strings(n.tags)), ("priority", .string(n.priority.rawValue)),
            ("created", .string(TimeText.iso8601(n.created))),
        ]
        if deleted { members.append(("deleted", .bool(n.isDeleted))) }
        return .object(members + extra)
    }

    /// `{"id": "<document uuid>", "title": "…", "notes": [NOTE, …]}`, then `"conflicts"` when given.
    public static func notebook(_ notebook: Notebook, conflicts: JSONValue? = nil) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("id", .string(notebook.id.uuidString.lowercased())),
            ("title", .string(notebook.title)),
            ("notes", .array(notebook.notes.map { note($0) })),
        ]
        if let conflicts { members.append(("conflicts", conflicts)) }
        return .object(members)
    }
}
