#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import PeerNote

/// How results are shown to a person: colour on or off, and the time zone for times.
public struct RenderStyle: Sendable {
    public var color: Bool
    public var timeZone: DisplayTimeZone

    public init(color: Bool = false, timeZone: DisplayTimeZone = .utc) {
        self.color = color
        self.timeZone = timeZone
    }

    public func paint(_ text: String, _ s: Terminal.Style) -> String { Terminal.paint(text, s, enabled: color) }

    /// `2024-03-01 10:02`, in the style's time zone.
    public func dateTime(_ date: Date) -> String { TimeText.dateTime(date, in: timeZone) }
    /// `10:02`.
    public func clock(_ date: Date) -> String { TimeText.clock(date, in: timeZone) }
    /// `2024-03-01`.
    public func day(_ date: Date) -> String { TimeText.day(date, in: timeZone) }
    /// `2024-03-01 10:02:33 +0100`, for `log`.
    public func fullDateTime(_ date: Date) -> String { TimeText.fullDateTime(date, in: timeZone) }

    /// Times for a group of attributions: `HH:mm` when they fall on one day, else with the date.
    public func timeFormatter(for dates: [Date]) -> (Date) -> String {
        let days = Set(dates.map { self.day($0) })
        if days.count <= 1 { return { self.clock($0) } }
        return { self.dateTime($0) }
    }
}

/// Text helpers shared by the renderers.
public enum Text {
    /// A value in double quotes, with quotes and backslashes escaped, and line breaks, every other
    /// control character and the directional formatting characters made visible (`DisplayText`),
    /// so it stays on one line, the terminal acts on none of it, and it cannot reorder the line.
    public static func quoted(_ s: String) -> String {
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
    public static func author(_ name: String) -> String { name.isEmpty ? "<no author>" : DisplayText.oneLine(name) }

    /// `1 change`, `3 changes`.
    public static func count(_ n: Int, _ singular: String, _ plural: String? = nil) -> String {
        "\(n) \(n == 1 ? singular : (plural ?? singular + "s"))"
    }

    /// `alice 2, bob 1`.
    public static func authors(_ list: [(author: String, count: Int)]) -> String {
        list.map { "\(author($0.author)) \($0.count)" }.joined(separator: ", ")
    }

    /// ISO 8601 in UTC, e.g. `2024-03-01T10:02:33Z`.
    public static func iso(_ date: Date) -> String { TimeText.iso8601(date) }
}

/// Conflicts in words and in JSON.
public enum ConflictRendering {
    /// Attributions in a stable order (time, then change id), identical on every copy.
    public static func sorted(_ list: [Attribution]) -> [Attribution] {
        list.sorted { ($0.time, $0.change) < ($1.time, $1.change) }
    }

    public static func sorted(_ list: [ConflictValue]) -> [ConflictValue] {
        list.sorted { ($0.by.time, $0.by.change) < ($1.by.time, $1.by.change) }
    }

    /// One line, e.g. `note "Groceries": title "Shopping" (alice, 10:02) vs "Groceries" (bob, 10:05), showing "Groceries"`.
    /// Values that are the same text in other Unicode scalars are each followed by their scalars
    /// (`DisplayText.sideBySide`), unless `spellingLookAlikes` is false: the JSON `description`
    /// keeps the plain line, its values carry the exact strings.
    public static func line(_ conflict: Conflict, in notebook: Notebook, style: RenderStyle, spellingLookAlikes: Bool = true) -> String {
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
    public static func eachAuthorOnce(_ list: [Attribution], _ noun: String, time: (Date) -> String) -> [String] {
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
    public static func writers(_ list: [Attribution], time: (Date) -> String) -> String {
        var runs: [(authors: [String], time: String)] = []
        for w in lastWrites(list) {
            let author = Text.author(w.last.author), at = time(w.last.time)
            if runs.last?.time == at { runs[runs.count - 1].authors.append(author) } else { runs.append(([author], at)) }
        }
        return runs.map { ($0.authors + [$0.time]).joined(separator: ", ") }.joined(separator: "; ")
    }

    public static func attributionJSON(_ a: Attribution) -> JSONValue {
        .object([("author", .string(a.author)), ("time", .string(Text.iso(a.time))), ("change", .string(a.change.fullDescription))])
    }

    /// The command that closes `conflict` in the notebook at `file`, for a person to run:
    /// `peernote resolve FILE ID FIELD --pick N` (N numbers the values as they are listed,
    /// oldest first; for a note deleted while edited, 1 keeps it deleted and 2 restores it), or
    /// for the notebook's title `peernote title FILE TITLE`.
    public static func resolveCommand(_ conflict: Conflict, file: String) -> String {
        let quoted = DisplayText.oneLine(ShellQuote.path(file))
        guard let note = conflict.note, let field = conflict.field else { return "peernote title \(quoted) TITLE" }
        return "peernote resolve \(quoted) \(note.short) \(field.rawValue) --pick N"
    }

    /// `line` followed by the command that resolves the conflict (`resolveCommand`), when the
    /// notebook is a file a person can name (`file` nil: standard input, a pipe, a device).
    /// `when` follows the word "resolve": " once merged" where the conflict is not in `file`
    /// yet and will be once the other copy is merged into it (`pnmerge diff`).
    public static func line(_ conflict: Conflict, in notebook: Notebook, style: RenderStyle, resolvingIn file: String?, when: String = "") -> String {
        let text = line(conflict, in: notebook, style: style)
        guard let file else { return text }
        // N numbers the values as the line lists them, oldest first; a deletion lists none.
        var how = ""
        if case .deletedWhileEdited = conflict { how = " (N: 1 keeps it deleted, 2 restores it)" }
        return text + "; resolve" + when + ": " + resolveCommand(conflict, file: file) + how
    }

    /// The conflict as a JSON object (schema in man/pnmerge.1, JSON OUTPUT, CONFLICT): `kind`,
    /// `field` (as `peernote resolve` names it; null for the notebook title), `note`, `title`
    /// (the note's title, as notes are keyed everywhere; null for the notebook title), the values
    /// or attributions of its kind, `description`; then, when given, `choices` (numbered as
    /// `peernote resolve --pick` takes them) and `resolve` (the command that closes it).
    public static func json(_ conflict: Conflict, in notebook: Notebook, style: RenderStyle,
                            choices: [ConflictChoice]? = nil, resolvingIn file: String? = nil) -> JSONValue {
        var fields: [(String, JSONValue)] = []
        let values: ([ConflictValue]) -> JSONValue = { list in
            .array(sorted(list).map { v in
                .object([("value", .string(v.value)), ("author", .string(v.by.author)), ("time", .string(Text.iso(v.by.time))),
                         ("change", .string(v.by.change.fullDescription))])
            })
        }
        let field: JSONValue = .optional(conflict.field?.rawValue)
        switch conflict {
        case .notebookTitle(let v, let showing):
            fields = [("kind", .string("notebookTitle")), ("field", field), ("note", .null), ("title", .null), ("values", values(v)), ("showing", .string(showing))]
        case .noteTitle(let note, let v, let showing):
            fields = [("kind", .string("noteTitle")), ("field", field), ("note", .string(note.description)), ("title", .string(showing)),
                      ("values", values(v)), ("showing", .string(showing))]
        case .priority(let note, let title, let v, let showing):
            fields = [("kind", .string("priority")), ("field", field), ("note", .string(note.description)), ("title", .string(title)),
                      ("values", values(v)), ("showing", .string(showing))]
        case .position(let note, let title, let moves):
            fields = [("kind", .string("position")), ("field", field), ("note", .string(note.description)), ("title", .string(title)),
                      ("moves", .array(sorted(moves).map(attributionJSON))),
                      ("index", .optional(notebook.notes.firstIndex { $0.id == note }))]
        case .deletedWhileEdited(let note, let title, let deletedBy, let editedBy):
            fields = [("kind", .string("deletedWhileEdited")), ("field", field), ("note", .string(note.description)), ("title", .string(title)),
                      ("deletedBy", .array(sorted(deletedBy).map(attributionJSON))),
                      ("editedBy", .array(sorted(editedBy).map(attributionJSON)))]
        }
        fields.append(("description", .string(line(conflict, in: notebook, style: style, spellingLookAlikes: false))))
        if let choices {
            fields.append(("choices", .array(choices.map { c in
                .object([("number", .int(c.number)), ("value", .string(c.value)), ("index", .optional(c.index)),
                         ("by", .array(c.by.map(attributionJSON)))])
            })))
        }
        if let file { fields.append(("resolve", .string(resolveCommand(conflict, file: file)))) }
        return .object(fields)
    }
}
