#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import PeerNote
import PeerNoteCLISupport

/// How results are shown to a person: colour on or off, and the time zone for times.
public struct RenderStyle: Sendable {
    public var color: Bool
    public var timeZone: DisplayTimeZone

    public init(color: Bool = false, timeZone: DisplayTimeZone = .utc) {
        self.color = color
        self.timeZone = timeZone
    }

    /// The style of the current output sink.
    static var current: RenderStyle { RenderStyle(color: Console.current.colorEnabled, timeZone: Console.current.timeZone) }

    func paint(_ text: String, _ s: Terminal.Style) -> String { Terminal.paint(text, s, enabled: color) }

    /// `2024-03-01 10:02`, in the style's time zone.
    func dateTime(_ date: Date) -> String { TimeText.dateTime(date, in: timeZone) }
    /// `10:02`.
    func clock(_ date: Date) -> String { TimeText.clock(date, in: timeZone) }
    /// `2024-03-01`.
    func day(_ date: Date) -> String { TimeText.day(date, in: timeZone) }
    /// `2024-03-01 10:02:33 +0100`, for `log`.
    func fullDateTime(_ date: Date) -> String { TimeText.fullDateTime(date, in: timeZone) }

    /// Times for a group of attributions: `HH:mm` when they fall on one day, else with the date.
    func timeFormatter(for dates: [Date]) -> (Date) -> String {
        let days = Set(dates.map { self.day($0) })
        if days.count <= 1 { return { self.clock($0) } }
        return { self.dateTime($0) }
    }
}

/// Text helpers shared by the renderers.
enum Text {
    /// A value in double quotes, with quotes and backslashes escaped, and line breaks, every other
    /// control character and the directional formatting characters made visible (`DisplayText`),
    /// so it stays on one line, the terminal acts on none of it, and it cannot reorder the line.
    static func quoted(_ s: String) -> String {
        var out = "\""
        for c in s.unicodeScalars {
            switch c {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            default:
                if DisplayText.needsEscapeOnOneLine(c) { out += DisplayText.escape(c) } else { out.unicodeScalars.append(c) }
            }
        }
        return out + "\""
    }

    /// An author's name for one line (control characters made visible), `<no author>` when empty
    /// (in brackets that are not parentheses, which a time often follows: `(<no author>, 09:00)`).
    static func author(_ name: String) -> String { name.isEmpty ? "<no author>" : DisplayText.oneLine(name) }

    /// `1 change`, `3 changes`.
    static func count(_ n: Int, _ singular: String, _ plural: String? = nil) -> String {
        "\(n) \(n == 1 ? singular : (plural ?? singular + "s"))"
    }

    /// `alice 2, bob 1`.
    static func authors(_ list: [(author: String, count: Int)]) -> String {
        list.map { "\(author($0.author)) \($0.count)" }.joined(separator: ", ")
    }

    /// ISO 8601 in UTC, e.g. `2024-03-01T10:02:33Z`.
    static func iso(_ date: Date) -> String { TimeText.iso8601(date) }
}

/// Conflicts in words and in JSON.
enum ConflictRendering {
    /// Attributions in a stable order (time, then change id), identical on every copy.
    static func sorted(_ list: [Attribution]) -> [Attribution] {
        list.sorted { ($0.time, $0.change) < ($1.time, $1.change) }
    }

    static func sorted(_ list: [ConflictValue]) -> [ConflictValue] {
        list.sorted { ($0.by.time, $0.by.change) < ($1.by.time, $1.by.change) }
    }

    /// One line, e.g. `note "Groceries": title "Shopping" (alice, 10:02) vs "Groceries" (bob, 10:05), showing "Groceries"`.
    /// Values that are the same text in other Unicode scalars are each followed by their scalars
    /// (`DisplayText.sideBySide`), unless `spellingLookAlikes` is false: the JSON `description`
    /// keeps the plain line, its values carry the exact strings.
    static func line(_ conflict: Conflict, in notebook: Notebook, style: RenderStyle, spellingLookAlikes: Bool = true) -> String {
        switch conflict {
        case .notebookTitle(let values, let showing):
            let (values, showing) = valuesText(values, showing: showing, style: style, spelling: spellingLookAlikes)
            return "notebook: title " + values + ", showing " + showing
        case .noteTitle(_, let values, let title):
            let (values, showing) = valuesText(values, showing: title, style: style, spelling: spellingLookAlikes)
            return "note \(Text.quoted(title)): title " + values + ", showing " + showing
        case .priority(_, let title, let values, let showing):
            let (values, showing) = valuesText(values, showing: showing, style: style, spelling: spellingLookAlikes)
            return "note \(Text.quoted(title)): priority " + values + ", showing " + showing
        case .position(let note, let title, let moves):
            let time = style.timeFormatter(for: moves.map(\.time))
            let who = eachAuthorOnce(moves, "move", time: time).joined(separator: " and ")
            let place = notebook.notes.firstIndex { $0.id == note }.map { "showing it at position \($0 + 1) of \(notebook.notes.count) (index \($0) in peernote list)" } ?? "it is not shown"
            return "note \(Text.quoted(title)): moved concurrently by \(who), \(place)"
        case .deletedWhileEdited(_, let title, let deletedBy, let editedBy):
            let time = style.timeFormatter(for: (deletedBy + editedBy).map(\.time))
            let deleted = eachAuthorOnce(deletedBy, "delete", time: time).joined(separator: ", ")
            let edited = eachAuthorOnce(editedBy, "edit", time: time).joined(separator: ", ")
            return "note \(Text.quoted(title)): deleted by \(deleted) while edited by \(edited); it stays deleted and the edits are kept (restoring the note brings them back)"
        }
    }

    /// Each author once, in the order of their last write (time, then change id): `bob (10:05)`, or
    /// `bob (3 edits, last 10:05)` for several writes (`noun` names one), as when one author edited
    /// a note three times on a copy that had not seen its deletion.
    static func eachAuthorOnce(_ list: [Attribution], _ noun: String, time: (Date) -> String) -> [String] {
        lastWrites(list).map { w in
            "\(Text.author(w.last.author)) (\(w.count == 1 ? "" : Text.count(w.count, noun) + ", last ")\(time(w.last.time)))"
        }
    }

    /// Each author's last write and number of writes, in the order of their last writes (time, then change id).
    private static func lastWrites(_ list: [Attribution]) -> [(last: Attribution, count: Int)] {
        var byAuthor: [ExactString: (order: Int, last: Attribution, count: Int)] = [:]
        for (k, a) in sorted(list).enumerated() {
            byAuthor[ExactString(a.author)] = (k, a, (byAuthor[ExactString(a.author)]?.count ?? 0) + 1)
        }
        return byAuthor.values.sorted { $0.order < $1.order }.map { ($0.last, $0.count) }
    }

    /// `"a" (alice, 10:02) vs "b" (bob, 10:05)`, and the value shown, quoted; with `spelling`, look-alikes among them spelled out.
    /// Equal values (the same scalars) are one, with every author who wrote it: `"a" (alice, carol, 10:02) vs "b" (bob, 10:05)`.
    private static func valuesText(_ values: [ConflictValue], showing: String, style: RenderStyle, spelling: Bool) -> (values: String, showing: String) {
        let values = sorted(values)
        let time = style.timeFormatter(for: values.map(\.by.time))
        // In the order each value was first written.
        var groups: [(value: String, by: [Attribution])] = []
        var index: [ExactString: Int] = [:]
        for v in values {
            if let i = index[ExactString(v.value)] { groups[i].by.append(v.by) } else {
                index[ExactString(v.value)] = groups.count
                groups.append((v.value, [v.by]))
            }
        }
        let texts = groups.map(\.value) + [showing]
        let shown = spelling ? DisplayText.sideBySide(texts, Text.quoted) : texts.map(Text.quoted)
        let list = zip(groups, shown).map { g, text in "\(text) (\(writers(g.by, time: time)))" }.joined(separator: " vs ")
        return (list, shown[shown.count - 1])
    }

    /// Who wrote one value: each author once, at their last write, authors at one time sharing it:
    /// `alice, 10:02`, `alice, carol, 10:02`, `alice, 10:02; carol, 10:04`.
    private static func writers(_ list: [Attribution], time: (Date) -> String) -> String {
        var runs: [(authors: [String], time: String)] = []
        for w in lastWrites(list) {
            let author = Text.author(w.last.author), at = time(w.last.time)
            if runs.last?.time == at { runs[runs.count - 1].authors.append(author) } else { runs.append(([author], at)) }
        }
        return runs.map { ($0.authors + [$0.time]).joined(separator: ", ") }.joined(separator: "; ")
    }

    static func attributionJSON(_ a: Attribution) -> JSONValue {
        .object([("author", .string(a.author)), ("time", .string(Text.iso(a.time))), ("change", .string(a.change.fullDescription))])
    }

    /// The conflict as a JSON object (schema in man/pnmerge.1, CONFLICT OBJECTS).
    static func json(_ conflict: Conflict, in notebook: Notebook, style: RenderStyle) -> JSONValue {
        var fields: [(String, JSONValue)] = []
        let values: ([ConflictValue]) -> JSONValue = { list in
            .array(sorted(list).map { v in
                .object([("value", .string(v.value)), ("author", .string(v.by.author)), ("time", .string(Text.iso(v.by.time))),
                         ("change", .string(v.by.change.fullDescription))])
            })
        }
        switch conflict {
        case .notebookTitle(let v, let showing):
            fields = [("kind", .string("notebookTitle")), ("note", .null), ("noteTitle", .null), ("values", values(v)), ("showing", .string(showing))]
        case .noteTitle(let note, let v, let showing):
            fields = [("kind", .string("noteTitle")), ("note", .string(note.description)), ("noteTitle", .string(showing)),
                      ("values", values(v)), ("showing", .string(showing))]
        case .priority(let note, let title, let v, let showing):
            fields = [("kind", .string("priority")), ("note", .string(note.description)), ("noteTitle", .string(title)),
                      ("values", values(v)), ("showing", .string(showing))]
        case .position(let note, let title, let moves):
            fields = [("kind", .string("position")), ("note", .string(note.description)), ("noteTitle", .string(title)),
                      ("moves", .array(sorted(moves).map(attributionJSON))),
                      ("index", .optional(notebook.notes.firstIndex { $0.id == note }))]
        case .deletedWhileEdited(let note, let title, let deletedBy, let editedBy):
            fields = [("kind", .string("deletedWhileEdited")), ("note", .string(note.description)), ("noteTitle", .string(title)),
                      ("deletedBy", .array(sorted(deletedBy).map(attributionJSON))),
                      ("editedBy", .array(sorted(editedBy).map(attributionJSON)))]
        }
        fields.append(("description", .string(line(conflict, in: notebook, style: style, spellingLookAlikes: false))))
        return .object(fields)
    }
}

/// Note-level differences (`NotebookDiff`) in words and in JSON.
enum DiffRendering {
    /// One line per difference, e.g. `edited  "Plan": body, tags`.
    static func lines(_ diff: NotebookDiff, style: RenderStyle) -> [String] {
        var out: [String] = []
        if !diff.titleBefore.hasSameScalars(as: diff.titleAfter) {
            let titles = DisplayText.sideBySide([diff.titleBefore, diff.titleAfter], Text.quoted)
            out.append(style.paint("retitled", .yellow) + " notebook " + titles[0] + " → " + titles[1])
        }
        for change in diff.changes {
            switch change {
            case .added(let n):
                out.append(style.paint("added   ", .green) + " " + Text.quoted(n.title))
            case .restored(let n):
                out.append(style.paint("restored", .green) + " " + Text.quoted(n.title))
            case .deleted(let n):
                out.append(style.paint("deleted ", .red) + " " + Text.quoted(n.title))
            case .edited(let before, let after, let fields):
                // A title that changed only in its scalars is spelled out beside what it was.
                let titles = DisplayText.sideBySide([after.title, before.title], Text.quoted)
                let was = fields.contains(.title) ? " (was \(titles[1]))" : ""
                out.append(style.paint("edited  ", .yellow) + " " + titles[0] + was + ": " + fields.map(\.rawValue).joined(separator: ", "))
            case .moved(let n, let from, let to):
                out.append(style.paint("moved   ", .cyan) + " " + Text.quoted(n.title) + ": position \(from + 1) → \(to + 1)")
            }
        }
        return out
    }

    /// `{"change": "added"|"restored"|"deleted"|"edited"|"moved", "note": id, "title": …, …}`.
    static func json(_ change: NotebookDiff.NoteChange) -> JSONValue {
        switch change {
        case .added(let n):
            .object([("change", .string("added")), ("note", .string(n.id.description)), ("title", .string(n.title))])
        case .restored(let n):
            .object([("change", .string("restored")), ("note", .string(n.id.description)), ("title", .string(n.title))])
        case .deleted(let n):
            .object([("change", .string("deleted")), ("note", .string(n.id.description)), ("title", .string(n.title))])
        case .edited(let before, let after, let fields):
            .object([("change", .string("edited")), ("note", .string(after.id.description)), ("title", .string(after.title)),
                     ("titleBefore", .string(before.title)), ("fields", .strings(fields.map(\.rawValue)))])
        case .moved(let n, let from, let to):
            .object([("change", .string("moved")), ("note", .string(n.id.description)), ("title", .string(n.title)),
                     ("from", .int(from)), ("to", .int(to))])
        }
    }

    /// `{"before": …, "after": …}` when the notebook title changed, else null.
    static func titleJSON(_ diff: NotebookDiff) -> JSONValue {
        diff.titleBefore.hasSameScalars(as: diff.titleAfter) ? .null : .object([("before", .string(diff.titleBefore)), ("after", .string(diff.titleAfter))])
    }

    /// `[{"author": …, "changes": n}]`.
    static func authorsJSON(_ list: [(author: String, count: Int)]) -> JSONValue {
        .array(list.map { .object([("author", .string($0.author)), ("changes", .int($0.count))]) })
    }
}
