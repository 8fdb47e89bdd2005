import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import PeerNote
import PeerNoteCLISupport

extension PNMerge {
    /// `pnmerge textconv FILE`: the notebook as stable, line-oriented text for `git diff` and `git log -p`.
    struct Textconv: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "textconv",
            abstract: "Print a notebook as stable lines of text, for git diff.",
            discussion: """
            Git runs it as 'pnmerge textconv -- FILE' for paths marked 'diff=peernote' \
            ('pnmerge git-setup' configures it), so 'git diff' and 'git log -p' show note \
            changes as text. The notebook title comes first, then for each live note in \
            order a header line with its title, short id, priority and tags, and its body \
            lines indented by four spaces, then the open conflicts. The text depends only \
            on the notebook: the same notebook prints the same text, whatever the file's \
            layout (compact or appended) and whenever it runs (times are UTC).

            An empty file prints nothing. A damaged file prints one line saying so on \
            standard output (so that a damaged revision does not stop 'git log -p'), the \
            usual 'FILE: offset N: what is wrong' line on standard error, and exits 0.
            """
        )

        @Argument(help: ArgumentHelp("The document ('-' for standard input).", valueName: "FILE"), completion: .file(extensions: ["peernote"]))
        var file: String

        func run() throws {
            try FileNameArgument.require([file])
            let bytes = try Inputs.readBytes(file)
            if bytes.isEmpty { return }
            let document: Document
            do { document = try Document.load(bytes) } catch {
                let line = "\(Inputs.displayName(file)): \(error)"
                Console.current.writeError(errorLine(line))
                try Console.current.emit("(not a valid .peernote document: \(DisplayText.oneLine("\(error)")))\n")
                return
            }
            ProcessEnd.keep(document)
            var out = ChunkedWriter(to: Console.current.writeBytes)
            try TextconvRendering.text(ShownNotebook(document), to: &out)
            try out.finish()
        }
    }
}

/// The line-oriented rendering `textconv` prints: a function of the notebook alone, written a
/// note at a time (`ChunkedWriter`).
enum TextconvRendering {
    static func text(_ notebook: ShownNotebook, to out: inout ChunkedWriter) throws(CLIFailure) {
        // Fixed style: no colour, UTC, so the text never depends on where or when it is made.
        let style = RenderStyle(color: false, timeZone: .utc)
        try out.line("# " + oneLine(notebook.title.isEmpty ? "(untitled notebook)" : notebook.title))
        try notebook.forEachNote { (note: Note) throws(CLIFailure) in
            try out.line("")
            var header = "## " + oneLine(note.title.isEmpty ? "(untitled)" : note.title) + "  [\(note.id.short)]"
            header += " priority: \(note.priority.rawValue)"
            if !note.tags.isEmpty { header += " tags: " + DisplayText.tagList(note.tags) }
            try out.line(header)
            if !note.body.isEmpty {
                try out.indentedLines(of: DisplayText.multiline(note.body), indent: "    ")
            }
        }
        if !notebook.conflicts.isEmpty {
            let places = notebook.places()
            try out.lines(["", "Conflicts (\(notebook.conflicts.count)):"])
            try out.lines(notebook.conflicts.lazy.map { "  " + ConflictRendering.line($0, in: places, style: style) })
        }
    }

    /// A title or tag on one line: line breaks become `\n` (so every note keeps one header line),
    /// and every other control character is made visible too (`DisplayText.oneLine`).
    static func oneLine(_ s: String) -> String { DisplayText.oneLine(s) }
}
