import ArgumentParser
import Foundation
import PeerNote
import PeerNoteCLISupport
import Testing
import TestSupport
@testable import PeerNoteCommands

@Suite("Argument parsing")
struct ParsingTests {
    @Test("Every subcommand names itself (ArgumentParser would otherwise derive the name from the type's name at every start)")
    func subcommandsNameThemselves() {
        let unnamed = PeerNoteCLI.configuration.subcommands.filter { $0.configuration.commandName == nil }.map { "\($0)" }
        #expect(unnamed.isEmpty, "subcommands without commandName: \(unnamed)")
        #expect(PeerNoteCLI.configuration.subcommands.count >= 10)
    }

    /// The exit status ArgumentParser gives a parse or validation failure.
    func status(_ args: [String]) -> Int32? {
        do {
            _ = try PeerNoteCLI.parseAsRoot(args)
            return nil
        } catch {
            return PeerNoteCLI.exitCode(for: error).rawValue
        }
    }

    @Test("add: title, body, repeated tags, priority and index")
    func add() throws {
        let command = try #require(try PeerNoteCLI.parseAsRoot(
            ["add", "n.peernote", "--title", "T", "--body", "B", "--tag", "a", "--tag", "b", "--priority", "high", "--at", "2", "--author", "ann", "-m", "msg"]
        ) as? PeerNoteCLI.Add)
        #expect(command.file == "n.peernote")
        #expect(command.title == "T")
        #expect(command.body.body == "B")
        #expect(command.body.bodyFile == nil)
        #expect(command.tags == ["a", "b"])
        #expect(command.priority == .high)
        #expect(command.index == 2)
        #expect(command.author.author == "ann")
        #expect(command.message.message == "msg")
    }

    /// `args` parsed as the peernote executable parses them (`normalizedArguments` first).
    func parsed(_ args: [String]) throws -> any ParsableCommand {
        try PeerNoteCLI.parseAsRoot(PeerNoteCLI.normalizedArguments(args))
    }

    @Test("Option values are taken as given: empty with '=', or '--', '---' and '-x' apart")
    func verbatimValues() throws {
        // `--title=` is an empty title, not the next argument taken as the title.
        let edit = try #require(try parsed(["edit", "n.peernote", "A", "--title=", "--priority=high"]) as? PeerNoteCLI.Edit)
        #expect(edit.title == "")
        #expect(edit.priority == .high)
        let add = try #require(try parsed(["add", "n.peernote", "--title=", "--tag=urgent", "--body="]) as? PeerNoteCLI.Add)
        #expect(add.title == "")
        #expect(add.tags == ["urgent"])
        #expect(add.body.body == "")
        // Values that look like options or like the end of options.
        let dashes = try #require(try parsed(["add", "n.peernote", "--title", "--", "--body", "---", "-m", "--x", "--author", "-"]) as? PeerNoteCLI.Add)
        #expect(dashes.title == "--")
        #expect(dashes.body.body == "---")
        #expect(dashes.message.message == "--x")
        #expect(dashes.author.author == "-")
        let tags = try #require(try parsed(["edit", "n.peernote", "A", "--add-tag", "--", "--remove-tag", "a=b", "--title", "", "--body", "x"]) as? PeerNoteCLI.Edit)
        #expect(tags.addTags == ["--"])
        #expect(tags.removeTags == ["a=b"])
        #expect(tags.title == "")
        #expect(tags.body.body == "x")
        // After a `--` that is not a value, arguments are left alone.
        let title = try #require(try parsed(["title", "n.peernote", "--", "--title"]) as? PeerNoteCLI.Title)
        #expect(title.title == "--title")
        #expect(PeerNoteCLI.normalizedArguments(["title", "n.peernote", "--", "--body", "x"]) == ["title", "n.peernote", "--", "--body", "x"])
        // A value that starts with a combining mark (it would join the "=" of `--title=VALUE` into
        // one character, which ArgumentParser does not split at).
        let mark = try #require(try parsed(["add", "n.peernote", "--title", "\u{301}abc", "--body", "\u{301}x", "--tag", "\u{20E3}"]) as? PeerNoteCLI.Add)
        #expect(mark.title == "\u{301}abc")
        #expect(mark.body.body == "\u{301}x")
        #expect(mark.tags == ["\u{20E3}"])
        // A value option last, with nothing after it, is still a missing value.
        #expect(throws: (any Error).self) { try parsed(["add", "n.peernote", "--title"]) }
    }

    @Test("add: --title is required; --body and --body-file exclude each other; priority and index are checked")
    func addErrors() {
        #expect(status(["add", "n.peernote"]) == 64)
        #expect(status(["add", "n.peernote", "--title", "T", "--body", "x", "--body-file", "f"]) == 64)
        #expect(status(["add", "n.peernote", "--title", "T", "--priority", "urgent"]) == 64)
        #expect(status(["add", "n.peernote", "--title", "T", "--at", "-1"]) == 64)
        #expect(status(["add", "n.peernote", "--title", "T", "--tag", ""]) == 64)
        #expect(status(["edit", "n.peernote", "T", "--add-tag", ""]) == 64)
        // An empty tag an import brought in can be removed.
        #expect(status(["edit", "n.peernote", "T", "--remove-tag", ""]) == nil)
        #expect(status(["add", "n.peernote", "--title", "T"]) == nil)
    }

    @Test("edit: every option, and -m")
    func edit() throws {
        let command = try #require(try PeerNoteCLI.parseAsRoot(
            ["edit", "n.peernote", "1a2b", "--title", "New", "--body-file", "-", "--add-tag", "x", "--add-tag", "y", "--remove-tag", "z", "--priority", "low", "-m", "why"]
        ) as? PeerNoteCLI.Edit)
        #expect(command.note == "1a2b")
        #expect(command.title == "New")
        #expect(command.body.bodyFile == "-")
        #expect(command.addTags == ["x", "y"])
        #expect(command.removeTags == ["z"])
        #expect(command.priority == .low)
        #expect(command.message.message == "why")
        #expect(command.editor == false)
        let withEditor = try #require(try PeerNoteCLI.parseAsRoot(["edit", "n.peernote", "x", "--editor"]) as? PeerNoteCLI.Edit)
        #expect(withEditor.editor)
    }

    @Test("edit: nothing to change, several body sources, and a tag both added and removed are usage errors")
    func editErrors() {
        #expect(status(["edit", "n.peernote", "x"]) == 64)
        #expect(status(["edit", "n.peernote", "x", "--editor", "--body", "b"]) == 64)
        #expect(status(["edit", "n.peernote", "x", "--editor", "--body-file", "f"]) == 64)
        #expect(status(["edit", "n.peernote", "x", "--body", "b", "--body-file", "f"]) == 64)
        #expect(status(["edit", "n.peernote", "x", "--add-tag", "t", "--remove-tag", "t"]) == 64)
        #expect(status(["edit", "n.peernote", "x", "--add-tag", ""]) == 64)
        #expect(status(["edit", "n.peernote"]) == 64)
    }

    @Test("rm, restore, move, title, list, export, import")
    func otherCommands() throws {
        let rm = try #require(try PeerNoteCLI.parseAsRoot(["rm", "n.peernote", "abc"]) as? PeerNoteCLI.Remove)
        #expect(rm.note == "abc")
        #expect(try PeerNoteCLI.parseAsRoot(["restore", "n.peernote", "abc"]) is PeerNoteCLI.Restore)
        let move = try #require(try PeerNoteCLI.parseAsRoot(["move", "n.peernote", "abc", "--to", "0"]) as? PeerNoteCLI.Move)
        #expect(move.index == 0)
        #expect(status(["move", "n.peernote", "abc"]) == 64)
        #expect(status(["move", "n.peernote", "abc", "--to", "-2"]) == 64)
        let title = try #require(try PeerNoteCLI.parseAsRoot(["title", "n.peernote", "Hello world"]) as? PeerNoteCLI.Title)
        #expect(title.title == "Hello world")
        let list = try #require(try PeerNoteCLI.parseAsRoot(["list", "n.peernote", "--deleted"]) as? PeerNoteCLI.List)
        #expect(list.deleted)
        let export = try #require(try PeerNoteCLI.parseAsRoot(["export", "n.peernote", "--format", "json"]) as? PeerNoteCLI.Export)
        #expect(export.format == .json)
        #expect(status(["export", "n.peernote", "--format", "yaml"]) == 64)
        let imp = try #require(try PeerNoteCLI.parseAsRoot(["import", "in.md", "-o", "out.peernote", "--title", "T"]) as? PeerNoteCLI.Import)
        #expect(imp.output == "out.peernote")
        #expect(imp.format == nil)
        #expect(imp.title == "T")
        #expect(status(["import", "in.md"]) == 64)
        #expect(status(["frobnicate"]) == 64)
    }

    @Test("Import picks the format from the extension, else from the first character")
    func importFormatDetection() {
        #expect(PeerNoteCLI.Import.detect("a.JSON", Array("# x".utf8)) == .json)
        #expect(PeerNoteCLI.Import.detect("a.md", Array("{}".utf8)) == .markdown)
        #expect(PeerNoteCLI.Import.detect("-", Array(" \n{\"notes\":[]}".utf8)) == .json)
        #expect(PeerNoteCLI.Import.detect("notes", Array("## a".utf8)) == .markdown)
        // As the help says (which must not imply a .txt file is sniffed): .txt, .markdown
        // and .md are Markdown whatever they hold; another extension is sniffed.
        #expect(PeerNoteCLI.Import.detect("a.txt", Array("{\"notes\":[]}".utf8)) == .markdown)
        #expect(PeerNoteCLI.Import.detect("a.markdown", Array("{}".utf8)) == .markdown)
        #expect(PeerNoteCLI.Import.detect("a.text", Array("{}".utf8)) == .json)
        let help = PeerNoteCLI.helpMessage(for: PeerNoteCLI.Import.self, columns: 400)
        #expect(help.contains("Markdown for .md, .markdown and .txt"), "\(help)")
    }

    @Test("Every subcommand's help renders, and the command names are the documented ones")
    func help() {
        let names = PeerNoteCLI.configuration.subcommands.compactMap { $0.configuration.commandName ?? String(describing: $0).lowercased() }
        #expect(names == ["new", "add", "edit", "rm", "restore", "move", "title", "list", "show", "search", "conflicts", "resolve",
                          "log", "blame", "revert", "export", "import"])
        for sub in PeerNoteCLI.configuration.subcommands {
            #expect(!PeerNoteCLI.helpMessage(for: sub).isEmpty)
        }
    }
}

@Suite("Commands in process")
struct InProcessTests {
    @Test("new then add, run in process, write a document the library reads")
    func newAndAdd() throws {
        let dir = try TempDir()
        let file = dir.file("n.peernote")
        var new = try #require(try PeerNoteCLI.parseAsRoot(["new", file, "--title", "Book", "--author", "ann"]) as? PeerNoteCLI.New)
        try new.run()
        var add = try #require(try PeerNoteCLI.parseAsRoot(["add", file, "--title", "First", "--body", "text", "--tag", "t", "--author", "bob"]) as? PeerNoteCLI.Add)
        try add.run()
        let document = try Document.open(file)
        #expect(document.title == "Book")
        #expect(document.notes.map(\.title) == ["First"])
        #expect(document.notes.first?.body == "text")
        #expect(document.notes.first?.tags == ["t"])
        #expect(document.history.map(\.author) == ["ann", "bob"])
        #expect(document.history.last?.message == "Add note \"First\"")
    }

    @Test("A failing edit leaves the file byte-identical and reports the usage status")
    func failingUpdateLeavesFile() throws {
        let dir = try TempDir()
        let file = dir.file("n.peernote")
        let document = Document(title: "T", author: "a")
        document.addNote(title: "Only")
        try document.write(to: file, mode: .compact)
        let before = try dir.bytes("n.peernote")
        #expect(throws: CLIFailure.self) {
            try DocumentFile.update(file, author: "x") { d in
                d.setTitle("changed")
                throw CLIFailure(.usage, "stop")
            }
        }
        #expect(try dir.bytes("n.peernote") == before)
        var edit = try #require(try PeerNoteCLI.parseAsRoot(["edit", file, "Missing", "--title", "x"]) as? PeerNoteCLI.Edit)
        #expect(throws: ExitCode(64)) { try edit.run() }
        #expect(try dir.bytes("n.peernote") == before)
    }

    @Test("Note lookup errors list the candidates")
    func lookupErrors() throws {
        let document = Document(title: "T", author: "a")
        let a = document.addNote(title: "Same")
        let b = document.addNote(title: "Same")
        let c = document.addNote(title: "Gone")
        try document.deleteNote(c)
        do {
            _ = try NoteLookup.find("Same", in: document, path: "f")
            Issue.record("an ambiguous title was accepted")
        } catch {
            #expect(error.status == .usage)
            #expect(error.message.contains(a.short) && error.message.contains(b.short))
        }
        do {
            _ = try NoteLookup.find("nothing", in: document, path: "f")
            Issue.record("a title no note has was accepted")
        } catch {
            #expect(error.status == .usage)
            #expect(error.message.contains("no note matches") && error.message.contains(a.short) && !error.message.contains(c.short))
        }
        do {
            _ = try NoteLookup.find("Gone", in: document, path: "f")
            Issue.record("a deleted note was found")
        } catch {
            #expect(error.message.contains("is deleted") && error.message.contains("peernote restore f \(c.short)"))
        }
        #expect(try NoteLookup.findAny("Gone", in: document, path: "f").id == c)
        #expect(try NoteLookup.find(a.description.uppercased(), in: document, path: "f").id == a)
        #expect(try NoteLookup.find(String(b.description.prefix(6)), in: document, path: "f").id == b)
    }

    @Test("A title only deleted notes have, two or more of them, is named as such: their ids and how to restore one")
    func severalDeletedMatches() throws {
        let document = Document(title: "T", author: "a")
        let a = document.addNote(title: "Same")
        try document.deleteNote(a)
        let b = document.addNote(title: "Same")
        try document.deleteNote(b)
        let live = document.addNote(title: "Other")
        do {
            _ = try NoteLookup.find("Same", in: document, path: "my notes.peernote")
            Issue.record("a title only deleted notes have was found")
        } catch {
            #expect(error.status == .usage)
            // In the order `list --deleted` shows them.
            let shown = document.deletedNotes.map { "\($0.id.short) \"Same\"" }.joined(separator: ", ")
            #expect(Set(document.deletedNotes.map(\.id)) == [a, b])
            #expect(error.message == "my notes.peernote: \"Same\" matches only deleted notes, 2 of them: \(shown); bring one back by its id with: peernote restore 'my notes.peernote' ID",
                    "\(error.message)")
            #expect(!error.message.contains(live.short))
        }
        // Named by its id, each is the one deleted note it names.
        do {
            _ = try NoteLookup.find(a.short, in: document, path: "f")
            Issue.record("a deleted note was found")
        } catch {
            #expect(error.message == "f: note \(a.short) \"Same\" is deleted; bring it back with: peernote restore f \(a.short)")
        }
        #expect(NoteLookup.deletedMatches("Same", in: document).map(\.id) == document.deletedNotes.map(\.id))
        #expect(NoteLookup.deletedMatches(b.description.uppercased(), in: document).map(\.id) == [b])
        #expect(NoteLookup.deletedMatches("Other", in: document).isEmpty)
    }

    @Test("A title that is also another note's id prefix is ambiguous, not a silent pick")
    func prefixVersusTitle() throws {
        let document = Document(title: "T", author: "a")
        let first = document.addNote(title: "First")
        let prefix = String(first.description.prefix(NoteID.shortestPrefix))
        let titled = document.addNote(title: prefix)
        do {
            let found = try NoteLookup.find(prefix, in: document, path: "f")
            Issue.record("\(prefix) resolved to \(found.title)")
        } catch {
            #expect(error.status == .usage)
            #expect(error.message.contains(first.short) && error.message.contains(titled.short))
        }
        #expect(try NoteLookup.find(String(first.description.prefix(12)), in: document, path: "f").id == first)
    }

    @Test("A title shorter than an id prefix names its note; a short prefix that names nothing says ids need 4 digits")
    func shortTitlesAndPrefixes() throws {
        let document = Document(title: "T", author: "a")
        let first = document.addNote(title: "First")
        let digit = String(first.description.prefix(1))
        // A note titled with the first digit of another's id: the title names it, no clash.
        let titled = document.addNote(title: digit)
        #expect(try NoteLookup.find(digit, in: document, path: "f").id == titled)
        #expect(NoteLookup.sharedTitleWarning(digit, of: titled, in: document, path: "f") == nil)
        // Two or three digits of First's id that are no title: not found, and told why.
        for k in 2 ..< NoteID.shortestPrefix {
            let short = String(first.description.prefix(k))
            do {
                let found = try NoteLookup.find(short, in: document, path: "f")
                Issue.record("\(short) resolved to \(found.title)")
            } catch {
                #expect(error.status == .usage)
                #expect(error.message.hasPrefix("f: no note matches \"\(short)\" (an id prefix needs at least 4 digits); notes: "), "\(error.message)")
            }
        }
        // Nor does a deleted note's id begin to name it with fewer digits (and the hint says so).
        let gone = document.addNote(title: "Gone")
        try document.deleteNote(gone)
        let goneShort = String(gone.description.prefix(2))
        do {
            let found = try NoteLookup.find(goneShort, in: document, path: "f")
            Issue.record("\(goneShort) resolved to \(found.title)")
        } catch {
            #expect(error.message.contains("(an id prefix needs at least 4 digits)"), "\(error.message)")
        }
        // A title that is no id's beginning gets no such hint.
        do { _ = try NoteLookup.find("zz", in: document, path: "f") } catch {
            #expect(!error.message.contains("needs at least"), "\(error.message)")
        }
        // A hex title of 4 digits that begins another note's id cannot name its note: add warns.
        let clash = String(first.description.prefix(NoteID.shortestPrefix))
        let hex = document.addNote(title: clash)
        let warning = try #require(NoteLookup.sharedTitleWarning(clash, of: hex, in: document, path: "f"))
        #expect(warning == "f: warning: note \(first.short) \"First\" has an id that starts with this title; the title alone will not pick this note: name it by id")
    }

    @Test("list aligns its columns and paints only when asked to")
    func listRendering() throws {
        let document = Document(title: "T", author: "a")
        let a = document.addNote(title: "Short", tags: ["x", "y"], priority: .high)
        let b = document.addNote(title: "A longer\ntitle")
        let plain = PeerNoteCLI.List.render(document, color: false)
        #expect(plain == """
            0  \(a.short)  Short            x, y  high
            1  \(b.short)  A longer\\ntitle  -     normal

            """)
        let painted = PeerNoteCLI.List.render(document, color: true)
        #expect(painted.contains("\u{1B}[31mhigh\u{1B}[0m"))
        #expect(PeerNoteCLI.List.render(document, deleted: true, color: false) == "")
    }

    @Test("list writes a long listing in pieces of whole lines that make up the whole listing")
    func listInPieces() throws {
        let document = Document(title: "T", author: "a")
        // Past one piece of the command's own size, titles of wide characters among them.
        for k in 0 ..< 2_000 {
            document.addNote(title: k % 5 == 0 ? "笔记 \(k)" : "Note \(k)", tags: k % 3 == 0 ? ["t\(k)"] : [], priority: k % 7 == 0 ? .low : .normal)
        }
        for color in [false, true] {
            let whole = PeerNoteCLI.List.render(document, color: color)
            #expect(whole.utf8.count > PeerNoteCLI.List.outputChunk)
            #expect(whole.split(separator: "\n").count == 2_000)
            for chunk in [1, 100, 4096, PeerNoteCLI.List.outputChunk] {
                var pieces: [[UInt8]] = []
                document.withNoteRows(matching: NoteFilter()) { rows in
                    PeerNoteCLI.List.write(rows, color: color, chunk: chunk) { pieces.append($0) }
                }
                #expect(pieces.allSatisfy { $0.last == 0x0A })
                #expect(pieces.dropLast().allSatisfy { $0.count >= chunk })
                #expect(String(decoding: pieces.joined(), as: UTF8.self) == whole)
                #expect(pieces.count > 1)
            }
        }
        // A filter's notes and the deleted ones (2,000 notes: several chunks of the note table):
        // each line starts with the note's index among the live notes ('-' when deleted) and its
        // short id, in the summaries' order.
        for k in stride(from: 3, to: 2_000, by: 97) { try document.deleteNote(document.notes[k % document.noteCount].id) }
        let tag = try #require(document.notes.first { !$0.tags.isEmpty }?.tags.first)
        for filter in [NoteFilter(), NoteFilter(tags: [tag]), NoteFilter(priority: .low)] {
            for deleted in [false, true] {
                let expected = deleted ? document.deletedNoteSummaries(matching: filter).map { ("-", $0.id.short) }
                    : document.noteSummaries(matching: filter).map { ("\($0.index)", $0.note.id.short) }
                let listed = PeerNoteCLI.List.render(document, matching: filter, deleted: deleted, color: false).split(separator: "\n").map { line in
                    let cells = line.split(separator: " ")
                    return (String(cells[0]), String(cells[1]))
                }
                #expect(listed.map(\.0) == expected.map(\.0) && listed.map(\.1) == expected.map(\.1))
                #expect(!listed.isEmpty || deleted)
            }
        }
        #expect(PeerNoteCLI.List.render(document, deleted: true, color: false).split(separator: "\n").count == 21)
    }

    @Test("A body file must be UTF-8; the error names the offset")
    func bodyFileUTF8() throws {
        let dir = try TempDir()
        let bad = dir.file("bad.txt")
        try Data([0x61, 0x62, 0xFF, 0x63]).write(to: URL(fileURLWithPath: bad))
        do {
            _ = try TextFile.read(bad)
            Issue.record("invalid UTF-8 was accepted")
        } catch {
            #expect(error.status == .invalidInput)
            #expect(error.message == "\(bad): offset 2: not valid UTF-8 text")
        }
        // Standard input is named as pnmerge names it, with the option that read it; a .peernote
        // document given as text is named as one.
        do {
            _ = try TextFile.decode([0x61, 0xFF], path: "-", option: "--body-file")
            Issue.record("invalid UTF-8 was accepted")
        } catch {
            #expect(error.message == "<stdin>: offset 1: not valid UTF-8 text (--body-file)")
        }
        do {
            _ = try TextFile.decode(Document(title: "T", author: "a").save(), path: "n.peernote", option: "--body-file")
            Issue.record("a document was read as text")
        } catch {
            #expect(error.message == "n.peernote: is a .peernote document, not text (--body-file)")
        }
        do {
            _ = try TextFile.read(dir.file("missing.txt"))
            Issue.record("a missing file was read")
        } catch {
            #expect(error.status == .noInput)
        }
    }

    @Test("The line break an editor adds to a body without one is dropped, \\r\\n included")
    func editorAddedLineBreak() {
        let drop = PeerNoteCLI.Edit.droppingAddedLineBreak
        #expect(drop("abc\n", "abc") == "abc")
        #expect(drop("abc\n", "abc\n") == "abc\n")
        #expect(drop("line1\r\nline2\r\n", "line1\r\nline2") == "line1\r\nline2")
        #expect(drop("line1\r\nline2\r\n", "line1\r\nline2\r\n") == "line1\r\nline2\r\n")
        // An editor that saves DOS files: every line it wrote ends in CRLF, so the last CR is its line end too.
        #expect(drop("abc\r\n", "abc") == "abc")
        #expect(drop("alpha\r\nbeta\r\n", "alpha\nbeta") == "alpha\r\nbeta")
        // An editor that adds only a final CRLF to LF lines: that CR is its too. A body's own final lone CR stays.
        #expect(drop("a\nb\r\n", "a\nb") == "a\nb")
        #expect(drop("a\r\nb\r\r\n", "a\r\nb\r") == "a\r\nb\r\r")
        #expect(drop("abc", "abc") == "abc")
    }

    @Test("The editor command: $VISUAL, else $EDITOR, else vi")
    func editorCommand() {
        #expect(EditorSession.command(environment: ["VISUAL": "code -w", "EDITOR": "nano"]) == "code -w")
        #expect(EditorSession.command(environment: ["VISUAL": "", "EDITOR": "nano"]) == "nano")
        #expect(EditorSession.command(environment: [:]) == "vi")
        // vi is not started without a terminal (it would write screen codes, then fail).
        #expect(throws: CLIFailure.self) { try EditorSession.requireUsableEditor(environment: [:], terminal: false, notebook: "n") }
        #expect(throws: CLIFailure.self) { try EditorSession.requireUsableEditor(environment: ["EDITOR": " "], terminal: false, notebook: "n") }
        #expect(throws: Never.self) { try EditorSession.requireUsableEditor(environment: [:], terminal: true, notebook: "n") }
        #expect(throws: Never.self) { try EditorSession.requireUsableEditor(environment: ["EDITOR": "ed"], terminal: false, notebook: "n") }
        #expect(throws: Never.self) { try EditorSession.requireUsableEditor(environment: ["VISUAL": "ed"], terminal: false, notebook: "n") }
    }
}

/// `-mFIX` and `-oFILE`: a short option with its value glued on, as POSIX tools take it.
@Suite("A short option's value glued on")
struct GluedShortOptionTests {
    @Test("The splitter: -mhi is -m hi before --, a verbatim option's value is left whole, and only the options named split")
    func splitter() {
        let options: Set<String> = ["-m"], verbatim: Set<String> = ["--title", "--message"]
        func split(_ a: [String]) -> [String] { GluedShortOption.split(a, options: options, valueOptions: verbatim).arguments }
        #expect(split(["edit", "f", "N", "-mhi"]) == ["edit", "f", "N", "-m", "hi"])
        #expect(GluedShortOption.split(["edit", "f", "N", "-mhi"], options: options, valueOptions: verbatim).split == ["-mhi"])
        #expect(split(["edit", "f", "--title", "-mhi", "N"]) == ["edit", "f", "--title", "-mhi", "N"])
        #expect(split(["edit", "f", "-m", "-mx", "N"]) == ["edit", "f", "-m", "-mx", "N"])
        #expect(split(["edit", "f", "--", "-mhi"]) == ["edit", "f", "--", "-mhi"])
        #expect(split(["edit", "f", "-q", "--message=x", "-o"]) == ["edit", "f", "-q", "--message=x", "-o"])
        #expect(GluedShortOption.split(["list", "-mx"], options: [], valueOptions: verbatim).arguments == ["list", "-mx"])
        #expect(GluedShortOption.split(["add", "-mbook.peernote"], options: options, valueOptions: verbatim) { w, _ in w.hasSuffix(".peernote") }.arguments
                == ["add", "-mbook.peernote"])
    }

    @Test("peernote: a glued -m only where a command records a message; a file name and a note keep their hints")
    func gluedMessageHints() throws {
        let dir = try TempDir()
        #expect(try Binary.run(["new", "x.peernote", "--title", "T"], in: dir).status == 0)
        // `new` and `list` have no -m: the word is named as typed.
        let new = try Binary.run(["new", "y.peernote", "-mhi"], in: dir)
        #expect(new.status == 64 && new.err.contains("unknown option '-mhi'"), "\(new.err)")
        let list = try Binary.run(["list", "x.peernote", "-mx"], in: dir)
        #expect(list.status == 64 && list.err.contains("unknown option '-mx'"), "\(list.err)")
        // A file name that starts with -m is refused as a file name, with how to write it.
        let add = try Binary.run(["add", "-mbook.peernote", "--title", "X"], in: dir)
        #expect(add.status == 64 && add.err.contains("-mbook.peernote: a file name that starts with '-' reads as options; write it as ./-mbook.peernote"), "\(add.err)")
        // A word holding an h, which ArgumentParser read as flags with -h: help, exit 0, nothing
        // done (`new y.peernote -mhi` made no notebook); refused, with how to write a value.
        let hello = try Binary.run(["rm", "x.peernote", "-hello"], in: dir)
        #expect(hello.status == 64 && hello.out.isEmpty
                && hello.err.contains("unknown option '-hello' (read as single-letter options, it would only show the help); a note or other value that starts with '-' goes last, after the options and --: -- -hello"), "\(hello)")
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/y.peernote"))
        #expect(try Binary.run(["edit", "x.peernote", "--title", "-hello", "--", "-x"], in: dir).err.contains("no note matches"), "a title's value is left alone")
        // A note named -mylist, read as -m ylist: the error says so, and how to write it.
        let rm = try Binary.run(["rm", "x.peernote", "-mylist"], in: dir)
        #expect(rm.status == 64 && rm.err.contains("-mylist was read as -m ylist (a note or other value that starts with '-' goes last, after the options and --: -- -mylist)"), "\(rm.err)")
    }

    @Test("peernote: -mFIX records the message (it showed help, exit 0, and recorded nothing); import -oFILE writes FILE")
    func peernoteRecords() throws {
        let dir = try TempDir()
        #expect(try Binary.run(["new", "n.peernote", "--title", "T"], in: dir).status == 0)
        #expect(try Binary.run(["add", "n.peernote", "--title", "Note", "--body", "a", "-mfirst"], in: dir).status == 0)
        let edit = try Binary.run(["edit", "n.peernote", "Note", "--body", "b", "-mhi"], in: dir)
        #expect(edit.status == 0 && edit.out.isEmpty, "\(edit)")
        let doc = try Document.load(FileStore.read(dir.path + "/n.peernote"))
        #expect(doc.notebook.notes.first?.body == "b")
        #expect(doc.history.map(\.message).suffix(2).sorted() == ["first", "hi"], "\(doc.history.map(\.message))")
        let md = dir.path + "/in.md"
        try Data("# One\n\nbody\n".utf8).write(to: URL(fileURLWithPath: md))
        #expect(try Binary.run(["import", "in.md", "-oout.peernote"], in: dir).status == 0)
        #expect(FileManager.default.fileExists(atPath: dir.path + "/out.peernote"))
    }
}
