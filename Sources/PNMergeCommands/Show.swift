import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import PeerNote
import PeerNoteCLISupport

extension PNMerge {
    /// `pnmerge show FILE [--format text|markdown|json] [--at CHANGE]`.
    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show",
            abstract: "Print the notebook as a person reads it.",
            discussion: """
            Prints the notebook title and every live note in document order: title, \
            priority and tags, creation time and body, followed by the open conflicts. \
            --format markdown gives '# Title', then '## Note title', a priority/tags line \
            and the body for each note, for reading (a body line that would read as a heading, \
            such as '# Steps', is written '\\# Steps'; 'peernote export' writes the Markdown \
            that 'peernote import' reads back); --format json gives the object described in \
            pnmerge(1). --at CHANGE shows the notebook as it was just after that change \
            (a change id as 'pnmerge log' prints it, SEQ@REPLICA, with any unique prefix of \
            the replica).
            """
        )

        /// The output formats of `show`.
        enum Format: String, ExpressibleByArgument, CaseIterable {
            case text, markdown, json
        }

        @Argument(help: ArgumentHelp("The document ('-' for standard input).", valueName: "FILE"), completion: .file(extensions: ["peernote"]))
        var file: String

        @Option(name: .long, help: ArgumentHelp("Output format.", valueName: "text|markdown|json"))
        var format: Format = .text

        @Option(name: .long, help: ArgumentHelp("Show the notebook as it was just after CHANGE.", valueName: "CHANGE"))
        var at: String?

        func run() throws {
            try FileNameArgument.require([file])
            let input = try Inputs.load(file)
            // The notebook as it is, its notes made one at a time as they are written; or as
            // it was after a change.
            var notebook = ShownNotebook(input.document)
            if let at {
                let change: ChangeID
                do { change = try input.document.findChange(at) } catch {
                    throw CLIFailure(.usage, "\(input.name): \(error)")
                }
                do { notebook = ShownNotebook(try input.document.notebook(at: change)) } catch {
                    throw CLIFailure(.invalidInput, "\(input.name): \(error)")
                }
            }
            let style = RenderStyle.current
            // The resolving commands act on the file as it is now, not as it was at a change.
            let resolvable = at == nil && file != "-" && !Inputs.isNotAFile(file) ? file : nil
            var out = ChunkedWriter(to: Console.current.writeBytes)
            switch format {
            case .text: try NotebookRendering.text(notebook, style: style, resolvingIn: resolvable, to: &out)
            case .markdown: try NotebookRendering.markdown(notebook, style: style, to: &out)
            case .json: try NotebookRendering.json(notebook, style: style, to: &out)
            }
            try out.finish()
        }
    }
}

/// What `show` prints of a notebook: its id, title and open conflicts, and its live notes in
/// document order, given one at a time: a document's are made as they are written (at 20,000
/// notes, 7 MB of copies of their text not held at once), a past notebook's read from it.
struct ShownNotebook {
    let id: UUID
    let title: String
    let conflicts: [Conflict]
    let isEmpty: Bool
    /// Calls its argument with each live note, in document order.
    let forEachNote: ((Note) throws(CLIFailure) -> Void) throws(CLIFailure) -> Void
    /// The notebook whose notes the conflict lines name places in (`ConflictRendering`): the
    /// notes need their ids, in order, not their bodies.
    let places: () -> Notebook

    init(_ document: Document) {
        id = document.id
        title = document.title
        conflicts = document.conflicts
        isEmpty = document.noteCount == 0
        forEachNote = { (body: (Note) throws(CLIFailure) -> Void) throws(CLIFailure) in try document.forEachNote(body) }
        let conflicts = self.conflicts
        places = { document.notebook(forConflicts: conflicts) }
    }

    init(_ notebook: Notebook) {
        id = notebook.id
        title = notebook.title
        conflicts = notebook.conflicts
        isEmpty = notebook.notes.isEmpty
        forEachNote = { (body: (Note) throws(CLIFailure) -> Void) throws(CLIFailure) in for note in notebook.notes { try body(note) } }
        places = { notebook }
    }
}

/// A notebook as text, Markdown and JSON, for `show`, written a note at a time (`ChunkedWriter`).
/// In text and Markdown, titles and tags are shown on one line and bodies as lines, with control
/// characters made visible (`DisplayText`); tags that are the same text in other Unicode scalars
/// are each followed by their scalars. In Markdown, body lines that would read as a `#` or `##`
/// heading get a backslash (`MarkdownHeading.escapeBody`).
enum NotebookRendering {
    static func text(_ notebook: ShownNotebook, style: RenderStyle, resolvingIn file: String? = nil, to out: inout ChunkedWriter) throws(CLIFailure) {
        let title = notebook.title.isEmpty ? "(untitled notebook)" : DisplayText.oneLine(notebook.title)
        try out.lines([style.paint(title, .bold), String(repeating: "=", count: max(DisplayText.columns(title), 3))])
        if notebook.isEmpty { try out.lines(["", "(no notes)"]) }
        try notebook.forEachNote { (note: Note) throws(CLIFailure) in
            try out.line("")
            try out.line(style.paint(note.title.isEmpty ? "(untitled)" : DisplayText.oneLine(note.title), .bold))
            var facts = ["priority \(note.priority.rawValue)"]
            if !note.tags.isEmpty { facts.append("tags " + DisplayText.tagList(note.tags)) }
            facts.append("created " + style.dateTime(note.created))
            try out.line("  " + style.paint(facts.joined(separator: " · "), .dim))
            if !note.body.isEmpty {
                try out.indentedLines(of: DisplayText.multiline(note.body), indent: "  ")
            }
        }
        if !notebook.conflicts.isEmpty {
            let places = notebook.places()
            try out.lines(["", style.paint("Conflicts (\(notebook.conflicts.count)):", .bold)])
            try out.lines(notebook.conflicts.lazy.map { "  " + style.paint(ConflictRendering.line($0, in: places, style: style, resolvingIn: file), .yellow) })
        }
    }

    static func markdown(_ notebook: ShownNotebook, style: RenderStyle, to out: inout ChunkedWriter) throws(CLIFailure) {
        try out.line("# " + (notebook.title.isEmpty ? "(untitled notebook)" : DisplayText.oneLine(notebook.title)))
        try notebook.forEachNote { (note: Note) throws(CLIFailure) in
            try out.lines(["", "## " + (note.title.isEmpty ? "(untitled)" : DisplayText.oneLine(note.title)), ""])
            var facts = ["Priority: \(note.priority.rawValue)"]
            if !note.tags.isEmpty { facts.append("Tags: " + DisplayText.tagList(note.tags)) }
            facts.append("Created: " + style.dateTime(note.created))
            try out.line(facts.joined(separator: " · "))
            // A body line such as "# Steps" would read as a note or the notebook title: escaped
            // as `peernote export` escapes it ("\# Steps").
            if !note.body.isEmpty { try out.lines(["", DisplayText.multiline(MarkdownHeading.escapeBody(note.body))]) }
        }
        if !notebook.conflicts.isEmpty {
            let places = notebook.places()
            try out.lines(["", "---", "", "**Conflicts**", ""])
            try out.lines(notebook.conflicts.lazy.map { "- " + ConflictRendering.line($0, in: places, style: style) })
        }
    }

    /// `{"id", "title", "notes": [{"id", "title", "body", "tags", "priority", "created"}], "conflicts": […]}`
    /// (`NotebookJSONValue.notebook`), written a note at a time.
    static func json(_ notebook: ShownNotebook, style: RenderStyle, to out: inout ChunkedWriter) throws(CLIFailure) {
        let places = notebook.conflicts.isEmpty ? nil : notebook.places()
        let conflicts = JSONValue.array(notebook.conflicts.map { ConflictRendering.json($0, in: places ?? Notebook(id: notebook.id, title: notebook.title, notes: []), style: style) })
        try out.appendBytes { (bytes, flush) throws(CLIFailure) in
            try NotebookJSONValue.writeNotebook(id: notebook.id, title: notebook.title, conflicts: conflicts, into: &bytes, chunk: ChunkedWriter.chunk, flush: flush) {
                (note: (Note) throws(CLIFailure) -> Void) throws(CLIFailure) in try notebook.forEachNote(note)
            }
        }
    }
}
