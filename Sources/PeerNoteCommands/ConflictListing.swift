import PeerNote
import PeerNoteCLISupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Open conflicts as `show` and `conflicts` print them: numbered per note, each value numbered
/// as `peernote resolve --pick` takes it, with who wrote it and when, and the command that
/// closes the conflict.
enum ConflictListing {
    /// The style peernote prints in: colour on a terminal that wants it, local times.
    static var style: RenderStyle { RenderStyle(color: Terminal.colorEnabled(), timeZone: .local) }

    /// `file` as a resolving command names it, or nil when it is standard input or a pipe (what
    /// was read is gone by the time a command could be run on it).
    static func resolvable(_ file: String) -> String? {
        guard file != "-" else { return nil }
        var st = stat()
        if stat(file, &st) == 0, st.st_mode & S_IFMT == S_IFIFO { return nil }
        return file
    }

    /// The notebook the lines and JSON of `conflicts` are rendered in: its notes are made (every
    /// body read out of the document) only when a conflict about concurrent moves needs their
    /// positions; else it holds none, as nothing else of the conflicts reads them.
    static func notebook(for conflicts: [Conflict], in document: Document) -> Notebook {
        let moved = conflicts.contains { if case .position = $0 { true } else { false } }
        return moved ? document.notebook : Notebook(id: document.id, title: document.title, notes: [], conflicts: conflicts)
    }

    /// The lines of one conflict, `number` its place among its note's conflicts:
    ///
    ///     1. title, showing "Dentist appt"
    ///          1  "Dentist" (alice, 2026-11-20 10:02)
    ///          2  "Dentist appt" (bob, 2026-11-20 10:05)
    ///        resolve: peernote resolve n.peernote 1a2b3c4d title --pick N
    static func lines(_ conflict: Conflict, number: Int, in document: Document, notebook: Notebook, file: String?, style: RenderStyle) -> [String] {
        let choices = document.choices(for: conflict)
        let time = style.timeFormatter(for: choices.flatMap(\.by).map(\.time))
        let heading: String
        switch conflict {
        case .notebookTitle(_, let showing), .noteTitle(_, _, let showing):
            heading = "title, showing \(Text.quoted(showing))"
        case .priority(_, _, _, let showing):
            heading = "priority, showing \(showing)"
        case .position(let note, _, _):
            heading = "position (moved concurrently), " + (notebook.notes.firstIndex { $0.id == note }.map { "showing it at index \($0)" } ?? "not shown")
        case .deletedWhileEdited:
            heading = "deleted while edited on another copy; it stays deleted and the edits are kept"
        }
        var out = ["\(number). " + style.paint(heading, .yellow)]
        let texts = DisplayText.sideBySide(choices.map(\.value), Text.quoted)
        for (choice, text) in zip(choices, texts) {
            let shown: String
            switch conflict {
            case .position: shown = "index \(choice.value)"
            case .priority: shown = choice.value
            case .deletedWhileEdited: shown = choice.number == 1 ? "keep it deleted" : "restore it, with the edits"
            default: shown = text
            }
            out.append("     \(choice.number)  \(shown) (\(ConflictRendering.writers(choice.by, time: time)))")
        }
        if let file { out.append("   resolve: " + ConflictRendering.resolveCommand(conflict, file: file)) }
        return out
    }

    /// The conflict's JSON object (`ConflictRendering.json`) with its numbered choices and, for a
    /// file, the command that closes it.
    static func json(_ conflict: Conflict, in document: Document, notebook: Notebook, file: String?, style: RenderStyle) -> JSONValue {
        ConflictRendering.json(conflict, in: notebook, style: style, choices: document.choices(for: conflict), resolvingIn: file)
    }

    /// What an edit of note `note` closed: a line for each conflict of `before` (its conflicts
    /// before the edit) that `after` (after it) lacks, saying the value it now has.
    static func closed(_ before: [Conflict], _ after: [Conflict], note: Note?, in document: Document, path: String) -> [String] {
        let open = Set(after.compactMap(\.field))
        return before.compactMap { conflict -> String? in
            if case .notebookTitle = conflict {
                guard after.isEmpty else { return nil }
                return "\(path): the conflict on the notebook's title is closed: it is \(Text.quoted(document.title)) on every copy this merges into"
            }
            guard let field = conflict.field, !open.contains(field), let id = conflict.note else { return nil }
            let now = document.note(id)
            let name = "note \(id.short) \(Text.quoted(now?.title ?? note?.title ?? ""))"
            let value: String
            switch field {
            case .title: value = "its title is \(Text.quoted(now?.title ?? ""))"
            case .priority: value = "its priority is \(now?.priority.rawValue ?? "normal")"
            case .position: value = "it is at index \(document.index(of: id).map(String.init) ?? "-")"
            case .deleted: value = now?.isDeleted == false ? "it is restored, with the edits" : "it stays deleted"
            }
            return "\(path): the \(field.rawValue) conflict of \(name) is closed: \(value) on every copy this merges into"
        }
    }
}
