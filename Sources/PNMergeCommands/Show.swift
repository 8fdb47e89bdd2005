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
            var notebook = input.document.notebook
            if let at {
                let change: ChangeID
                do { change = try input.document.findChange(at) } catch {
                    throw CLIFailure(.usage, "\(input.name): \(error)")
                }
                do { notebook = try input.document.notebook(at: change) } catch {
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

/// A notebook as text, Markdown and JSON, for `show`, written a note at a time (`ChunkedWriter`).
/// In text and Markdown, titles and tags are shown on one line and bodies as lines, with control
/// characters made visible (`DisplayText`); tags that are the same text in other Unicode scalars
/// are each followed by their scalars. In Markdown, body lines that would read as a `#` or `##`
/// heading get a backslash (`MarkdownHeading.escapeBody`).
enum NotebookRendering {
    static func text(_ notebook: Notebook, style: RenderStyle, resolvingIn file: String? = nil, to out: inout ChunkedWriter) throws(CLIFailure) {
        let title = notebook.title.isEmpty ? "(untitled notebook)" : DisplayText.oneLine(notebook.title)
        try out.lines([style.paint(title, .bold), String(repeating: "=", count: max(DisplayText.columns(title), 3))])
        if notebook.notes.isEmpty { try out.lines(["", "(no notes)"]) }
        for note in notebook.notes {
            try out.line("")
            try out.line(style.paint(note.title.isEmpty ? "(untitled)" : DisplayText.oneLine(note.title), .bold))
            var facts = ["priority \(note.priority.rawValue)"]
            if !note.tags.isEmpty { facts.append("tags " + DisplayText.tagList(note.tags)) }
            facts.append("created " + style.dateTime(note.created))
            try out.line("  " + style.paint(facts.joined(separator: " · "), .dim))
            if !note.body.isEmpty {
                try out.lines(DisplayText.bodyLines(note.body).lazy.map { "  " + $0 })
            }
        }
        if !notebook.conflicts.isEmpty {
            try out.lines(["", style.paint("Conflicts (\(notebook.conflicts.count)):", .bold)])
            try out.lines(notebook.conflicts.lazy.map { "  " + style.paint(ConflictRendering.line($0, in: notebook, style: style, resolvingIn: file), .yellow) })
        }
    }

    static func markdown(_ notebook: Notebook, style: RenderStyle, to out: inout ChunkedWriter) throws(CLIFailure) {
        try out.line("# " + (notebook.title.isEmpty ? "(untitled notebook)" : DisplayText.oneLine(notebook.title)))
        for note in notebook.notes {
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
            try out.lines(["", "---", "", "**Conflicts**", ""])
            try out.lines(notebook.conflicts.lazy.map { "- " + ConflictRendering.line($0, in: notebook, style: style) })
        }
    }

    /// `{"id", "title", "notes": [{"id", "title", "body", "tags", "priority", "created"}], "conflicts": […]}`
    /// (`NotebookJSONValue.notebook`), written a note at a time.
    static func json(_ notebook: Notebook, style: RenderStyle, to out: inout ChunkedWriter) throws(CLIFailure) {
        let conflicts = JSONValue.array(notebook.conflicts.map { ConflictRendering.json($0, in: notebook, style: style) })
        try out.appendBytes { (bytes, flush) throws(CLIFailure) in
            try NotebookJSONValue.writeNotebook(notebook, conflicts: conflicts, into: &bytes, chunk: ChunkedWriter.chunk, flush: flush)
        }
    }
}
