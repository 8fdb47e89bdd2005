#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import PeerNote
import PeerNoteCLISupport

/// The JSON form of a notebook: `pnmerge show --format json`'s without its `conflicts` key (open
/// conflicts stay in the document; reading ignores that key, so show's JSON imports too):
///
///     {"id": "<document uuid>", "title": "…",
///      "notes": [{"id": "<16 hex digits>", "title": "…", "body": "…", "tags": ["…"],
///                 "priority": "low|normal|high", "created": "2024-05-01T09:30:00Z"}]}
///
/// Keys are written in that order, pretty-printed, by the renderer both tools share
/// (`NotebookJSONValue`). Reading needs only `notes` and each
/// note's `title`; `id` is ignored (an import is a new notebook). `created` (what
/// `TimeText.parseISO8601` reads) dates the imported note; without it the note is dated now.
public enum NotebookJSON {
    /// The notebook as `NotebookJSONValue` renders it, without conflicts.
    public static func render(_ notebook: Notebook) -> String {
        NotebookJSONValue.notebook(notebook).rendered
    }

    /// `render(document.notebook)`, written a note at a time, each note made as it is written
    /// (`Document.forEachNote`).
    static func write(_ document: Document, to out: inout ChunkedWriter) throws(CLIFailure) {
        try out.appendBytes { (bytes, flush) throws(CLIFailure) in
            try NotebookJSONValue.writeNotebook(id: document.id, title: document.title, into: &bytes, chunk: ChunkedWriter.chunk, flush: flush) {
                (note: (Note) throws(CLIFailure) -> Void) throws(CLIFailure) in try document.forEachNote(note)
            }
        }
    }

    private struct NotebookValue: Decodable {
        var title: String?
        var notes: [NoteValue]
    }

    private struct NoteValue: Decodable {
        var title: String
        var body: String?
        var tags: [String]?
        var priority: String?
        var created: String?
    }

    public static func parse(_ bytes: [UInt8]) throws(ImportError) -> NotebookContent {
        // The walk comes first: the decoder names no offset, takes a trailing comma, and keeps
        // one value of a key an object repeats (dropping the other without a word).
        if let problem = JSONSyntax.firstProblem(in: bytes) {
            throw ImportError("offset \(problem.offset): \(problem.grammar ? "not valid JSON: " : "")\(problem.message)")
        }
        let value: NotebookValue
        do {
            value = try JSONDecoder().decode(NotebookValue.self, from: Data(bytes))
        } catch let error as DecodingError {
            throw ImportError(describe(error))
        } catch {
            throw ImportError("not valid JSON: \(error)")
        }
        var notes: [NoteContent] = []
        for (i, n) in value.notes.enumerated() {
            var priority = Priority.normal
            if let p = n.priority {
                guard let known = Priority(rawValue: p) else {
                    throw ImportError("notes[\(i)].priority: \"\(p)\" is not one of low, normal, high")
                }
                priority = known
            }
            var created: Date?
            if let c = n.created {
                guard let date = TimeText.parseISO8601(c) else {
                    throw ImportError("notes[\(i)].created: \"\(c)\" is not a date and time like 2024-05-01T09:30:00Z (note \"\(n.title)\")")
                }
                created = date
            }
            notes.append(NoteContent(title: n.title, body: n.body ?? "", tags: n.tags ?? [], priority: priority, created: created))
        }
        return NotebookContent(title: value.title ?? "", notes: notes)
    }

    /// What the value at `keys` must be, in words ("a list of strings"), from the type the
    /// decoder expected there and the field's name.
    private static func expected(_ type: Any.Type, at keys: [any CodingKey]) -> String {
        let name = "\(type)"
        let field = keys.last(where: { $0.intValue == nil })?.stringValue
        let inList = keys.last?.intValue != nil
        if name.hasPrefix("Dictionary") {
            return keys.isEmpty ? "an object: {\"title\": ..., \"notes\": [...]}" : inList && field == "notes" ? "an object (a note)" : "an object"
        }
        if name.hasPrefix("Array") {
            switch field {
            case "notes": return "a list of notes"
            case "tags": return "a list of strings"
            default: return "a list"
            }
        }
        if type == String.self {
            switch field {
            case "priority": return "a string: low, normal or high"
            case "created": return "a string: a date and time like 2024-05-01T09:30:00Z"
            default: return "a string"
            }
        }
        return "a \(name)"
    }

    private static func describe(_ error: DecodingError) -> String {
        func path(_ keys: [any CodingKey]) -> String {
            var out = ""
            for k in keys {
                if let i = k.intValue { out += "[\(i)]" } else { out += (out.isEmpty ? "" : ".") + k.stringValue }
            }
            return out.isEmpty ? "the top level" : out
        }
        switch error {
        case .dataCorrupted(let c):
            let detail = c.underlyingError.map { "\($0)" }
            return "not valid JSON" + (detail.map { ": \($0)" } ?? (c.debugDescription.isEmpty ? "" : ": \(c.debugDescription)"))
        case .keyNotFound(let key, let c):
            return "\(path(c.codingPath + [key])) is missing"
        case .typeMismatch(let type, let c), .valueNotFound(let type, let c):
            return "\(path(c.codingPath)) must be \(expected(type, at: c.codingPath))"
        @unknown default:
            return "not a notebook: \(error)"
        }
    }
}
