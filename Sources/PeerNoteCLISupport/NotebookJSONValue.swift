#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
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

    /// `notebook(notebook, conflicts:).rendered` as UTF-8, appended to `out` a note at a time:
    /// `flush` is given `out` whenever it holds `chunk` bytes or more (and empties it, or not),
    /// so that a notebook of many notes is never held as one JSON value nor one text. The
    /// bytes are exactly those of `rendered`.
    public static func writeNotebook<E: Error>(_ notebook: Notebook, conflicts: JSONValue? = nil, into out: inout [UInt8], chunk: Int = 1 << 16,
                                               flush: (inout [UInt8]) throws(E) -> Void) throws(E) {
        try writeNotebook(id: notebook.id, title: notebook.title, conflicts: conflicts, into: &out, chunk: chunk, flush: flush) {
            (note: (Note) throws(E) -> Void) throws(E) in for n in notebook.notes { try note(n) }
        }
    }

    /// `writeNotebook(_:conflicts:into:chunk:flush:)` for the notebook `id`, `title`, whose notes
    /// `forEachNote` gives one at a time, in order (`Document.forEachNote`): no note is kept
    /// once written.
    public static func writeNotebook<E: Error>(id: UUID, title: String, conflicts: JSONValue? = nil, into out: inout [UInt8], chunk: Int = 1 << 16,
                                               flush: (inout [UInt8]) throws(E) -> Void,
                                               forEachNote: ((Note) throws(E) -> Void) throws(E) -> Void) throws(E) {
        func member(_ key: String, last: Bool, _ value: (inout [UInt8]) throws(E) -> Void) throws(E) {
            JSONValue.indentation(1, into: &out)
            JSONValue.string(key).write(into: &out, indent: 1)
            out.append(contentsOf: ": ".utf8)
            try value(&out)
            out.append(contentsOf: (last ? "\n" : ",\n").utf8)
        }
        out.append(contentsOf: "{\n".utf8)
        try member("id", last: false) { JSONValue.string(id.uuidString.lowercased()).write(into: &$0, indent: 1) }
        try member("title", last: false) { JSONValue.string(title).write(into: &$0, indent: 1) }
        try member("notes", last: conflicts == nil) { (out: inout [UInt8]) throws(E) in
            var array = JSONValue.ArrayWriter(indent: 1)
            // (`flush` is only called while `forEachNote` runs, never kept.)
            try withoutActuallyEscaping(flush) { (flush: @escaping (inout [UInt8]) throws(E) -> Void) throws(E) in
                try forEachNote { (n: Note) throws(E) in
                    array.append(note(n), into: &out)
                    if out.count >= chunk { try flush(&out) }
                }
            }
            array.finish(into: &out)
        }
        if let conflicts {
            try member("conflicts", last: true) { conflicts.write(into: &$0, indent: 1) }
        }
        out.append(contentsOf: "}\n".utf8)
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
