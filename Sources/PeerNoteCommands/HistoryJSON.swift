import PeerNote
import PeerNoteCLISupport

/// The JSON `peernote log`, `blame` and `revert` print: a value with object keys kept in the
/// order given, pretty-printed with two-space indents as `pnmerge`'s JSON is, strings escaped
/// as `NotebookJSON` escapes them (control characters never reach the terminal raw). The key
/// names are the ones `pnmerge log --json` uses for the same things (man/peernote.1, JSON).
indirect enum HistoryJSON {
    case null
    case bool(Bool)
    case int(Int)
    case string(String)
    case array([HistoryJSON])
    case object([(String, HistoryJSON)])

    static func optional(_ s: String?) -> HistoryJSON { s.map(HistoryJSON.string) ?? .null }
    static func strings(_ values: [String]) -> HistoryJSON { .array(values.map(HistoryJSON.string)) }

    /// Pretty-printed text with a final newline.
    var rendered: String {
        var out = ""
        write(into: &out, indent: 0)
        return out + "\n"
    }

    private func write(into out: inout String, indent: Int) {
        let pad = String(repeating: "  ", count: indent)
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let i): out += String(i)
        case .string(let s): out += JSONValue.quoted(s)
        case .array(let items):
            guard !items.isEmpty else { out += "[]"; return }
            out += "[\n"
            for (i, item) in items.enumerated() {
                out += pad + "  "
                item.write(into: &out, indent: indent + 1)
                out += i == items.count - 1 ? "\n" : ",\n"
            }
            out += pad + "]"
        case .object(let members):
            guard !members.isEmpty else { out += "{}"; return }
            out += "{\n"
            for (i, (key, value)) in members.enumerated() {
                out += pad + "  " + JSONValue.quoted(key) + ": "
                value.write(into: &out, indent: indent + 1)
                out += i == members.count - 1 ? "\n" : ",\n"
            }
            out += pad + "}"
        }
    }

    /// Every note's title (deleted notes' too), made once: `Document.note(_:)` makes a note's
    /// body too, which for each change of a long log would cost the body's length.
    static func titles(_ document: Document) -> [NoteID: String] {
        var titles: [NoteID: String] = [:]
        for n in document.notes + document.deletedNotes { titles[n.id] = n.title }
        return titles
    }

    /// What a change did to one note: `{"note": id, "title": …, "change": "added"|"deleted"|"edited", "summary": …}`
    /// (`title` is the note's title now; `change` as `pnmerge diff --json` names it).
    static func notePart(_ part: SummaryPart, titles: [NoteID: String]) -> HistoryJSON? {
        guard let id = part.note else { return nil }
        let change = switch part.kind {
        case .added: "added"
        case .deleted: "deleted"
        default: "edited"
        }
        return .object([("note", .string(id.description)), ("title", .string(titles[id] ?? "")),
                        ("change", .string(change)), ("summary", .string(part.text))])
    }
}
