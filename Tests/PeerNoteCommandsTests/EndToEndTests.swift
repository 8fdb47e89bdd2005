import Foundation
import PeerNote
import PeerNoteCLISupport
import PeerNoteCommands
import Testing
import TestSupport

/// End-to-end tests: the built `.build/debug/peernote` run as a separate process.
@Suite("peernote end to end")
struct EndToEndTests {
    /// Runs peernote and expects success; returns its standard output.
    @discardableResult
    func ok(_ args: [String], in dir: TempDir, env: [String: String] = [:], stdin: String? = nil,
            sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let r = try Binary.run(args, in: dir, env: env, stdin: stdin)
        #expect(r.status == 0, "peernote \(args.joined(separator: " ")) failed: \(r.err)", sourceLocation: sourceLocation)
        return r.out
    }

    /// A notebook `n.peernote` with notes "Alpha" and "Beta"; returns their ids.
    func makeNotebook(_ dir: TempDir, name: String = "n.peernote") throws -> (alpha: String, beta: String) {
        try ok(["new", name, "--title", "Book"], in: dir)
        let alpha = try ok(["add", name, "--title", "Alpha", "--body", "The quick brown fox jumps over the lazy dog."], in: dir)
        let beta = try ok(["add", name, "--title", "Beta", "--body", "one\ntwo\nthree\n", "--tag", "b"], in: dir)
        return (alpha.trimmingCharacters(in: .newlines), beta.trimmingCharacters(in: .newlines))
    }

    @Test("new, add, list, export: ids on stdout, order, columns")
    func basics() throws {
        let dir = try TempDir()
        let (alpha, beta) = try makeNotebook(dir)
        #expect(alpha.count == 16 && alpha.allSatisfy(\.isHexDigit))
        #expect(beta.count == 16 && alpha != beta)
        let gamma = try ok(["add", "n.peernote", "--title", "Gamma", "--at", "0", "--priority", "high", "--tag", "z", "--tag", "a"], in: dir)
            .trimmingCharacters(in: .newlines)
        let list = try ok(["list", "n.peernote"], in: dir)
        #expect(list == """
            0  \(gamma.prefix(8))  Gamma  a, z  high
            1  \(alpha.prefix(8))  Alpha  -     normal
            2  \(beta.prefix(8))  Beta   b     normal

            """)
        let document = try Document.open(dir.file("n.peernote"))
        #expect(document.title == "Book")
        #expect(document.notes.map(\.id.description) == [gamma, alpha, beta])
        #expect(document.notes[2].body == "one\ntwo\nthree\n")
        #expect(document.history.map(\.author).allSatisfy { $0 == "tester" })
        let markdown = try ok(["export", "n.peernote"], in: dir)
        let created = document.notes.map { TimeText.iso8601($0.created) }
        #expect(markdown.hasPrefix("# Book\n\n## Gamma\nTags: a, z · Priority: high · Created: \(created[0])\n\n## Alpha\nCreated: \(created[1])\n\nThe quick brown fox"))
        let json = try ok(["export", "n.peernote", "--format", "json"], in: dir)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect((object["notes"] as? [[String: Any]])?.compactMap { $0["title"] as? String } == ["Gamma", "Alpha", "Beta"])
    }

    @Test("export of a notebook larger than the chunks it is written in: what the whole-text renderers give")
    func exportLargeNotebook() throws {
        let dir = try TempDir()
        let doc = Document(title: "Many # notes")
        for i in 0 ..< 600 {
            doc.addNote(title: "N\(i)", body: "# Body \(i)\n" + String(repeating: "text \"\(i)\" ", count: 20), tags: ["t\(i % 4)"],
                        priority: i % 5 == 0 ? .high : .normal)
        }
        try dir.write(doc.save(), "big.peernote")
        let markdown = try ok(["export", "big.peernote"], in: dir)
        #expect(markdown.utf8.count > 2 << 16)
        #expect(markdown == MarkdownFormat.render(NotebookContent(doc.notebook)))
        let json = try ok(["export", "big.peernote", "--format", "json"], in: dir)
        #expect(json == NotebookJSON.render(doc.notebook))
        let listed = try ok(["list", "big.peernote", "--json"], in: dir)
        #expect(listed == JSONValue.array(doc.notes.enumerated().map { i, note in
            NotebookJSONValue.note(note, deleted: true, extra: [("index", .int(i))])
        }).rendered)
        let found = try ok(["search", "big.peernote", "Body", "--json"], in: dir)
        let hits = try #require(try JSONSerialization.jsonObject(with: Data(found.utf8)) as? [[String: Any]])
        #expect(hits.count == 600 && found.utf8.count > 1 << 16)
        let lines = try ok(["search", "big.peernote", "text \"599\""], in: dir)
        #expect(lines.split(separator: "\n").count == 1)
    }

    @Test("new and import refuse to overwrite, leaving the file as it was (exit 73)")
    func refuseOverwrite() throws {
        let dir = try TempDir()
        let existing = try dir.write("taken.peernote", "not mine")
        let r = try Binary.run(["new", "taken.peernote"], in: dir)
        #expect(r.status == 73)
        #expect(r.err.contains("taken.peernote") && r.err.contains("refusing to overwrite"))
        #expect(try String(contentsOfFile: existing, encoding: .utf8) == "not mine")
        _ = try dir.write("in.md", "## A\n")
        let i = try Binary.run(["import", "in.md", "-o", "taken.peernote"], in: dir)
        #expect(i.status == 73)
        #expect(try String(contentsOfFile: existing, encoding: .utf8) == "not mine")
    }

    @Test("edit records every option as one change, the body as character edits")
    func editOneChange() throws {
        let dir = try TempDir()
        let (alpha, _) = try makeNotebook(dir)
        let before = try Document.open(dir.file("n.peernote"))
        try ok(["edit", "n.peernote", "Alpha", "--title", "Alpha 2", "--body", "The quick red fox jumps over the lazy dog.",
                "--add-tag", "x", "--add-tag", "y", "--priority", "low", "-m", "Several things", "--author", "ann"], in: dir)
        try ok(["edit", "n.peernote", String(alpha.prefix(5)), "--remove-tag", "y"], in: dir)
        let after = try Document.open(dir.file("n.peernote"))
        #expect(after.changeCount == before.changeCount + 2)
        let edit = try #require(after.history.dropLast().last)
        #expect(edit.message == "Several things")
        #expect(edit.author == "ann")
        // "brown" -> "red": a handful of character inserts and deletes, not the whole text again.
        #expect(edit.operationCount < 15)
        let note = try #require(after.notes.first { $0.id.description == alpha })
        #expect(note.title == "Alpha 2")
        #expect(note.body == "The quick red fox jumps over the lazy dog.")
        #expect(note.tags == ["x"])
        #expect(note.priority == .low)
    }

    @Test("edit --body-file - reads the body from standard input, exactly")
    func bodyFromStdin() throws {
        let dir = try TempDir()
        _ = try makeNotebook(dir)
        try ok(["edit", "n.peernote", "Beta", "--body-file", "-"], in: dir, stdin: "new\nbody\n\n")
        #expect(try Document.open(dir.file("n.peernote")).notes[1].body == "new\nbody\n\n")
        let id = try ok(["add", "n.peernote", "--title", "From stdin", "--body-file", "-"], in: dir, stdin: "piped")
        #expect(try Document.open(dir.file("n.peernote")).notes.last?.body == "piped")
        #expect(id.hasSuffix("\n"))
    }

    @Test("--body-file and import read a pipe (a shell's <(command)) to its end; a device or a folder is refused")
    func bodyFromPipe() throws {
        let dir = try TempDir()
        _ = try makeNotebook(dir)
        let bash = "/bin/bash"
        try #require(FileManager.default.isExecutableFile(atPath: bash), "process substitution needs \(bash)")
        // Through bash, as people type it: <(…) names /dev/fd/N, a pipe.
        let peernote = try Binary.require()
        let script = "'\(peernote)' edit n.peernote Beta --body-file <(printf 'from a pipe\\nsecond line\\n') && "
            + "'\(peernote)' import <(printf '# Piped notebook\\n\\n## One\\n\\nbody\\n') -o piped.peernote"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: bash)
        process.arguments = ["-c", script]
        process.currentDirectoryURL = URL(fileURLWithPath: dir.path)
        process.environment = Binary.environment([:])
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(try Document.open(dir.file("n.peernote")).notes[1].body == "from a pipe\nsecond line\n")
        let imported = try Document.open(dir.file("piped.peernote"))
        #expect(imported.notebook.title == "Piped notebook")
        #expect(imported.notes.map(\.title) == ["One"])

        // Not every file that is not a regular one: a device and a folder are still refused.
        let device = try Binary.run(["edit", "n.peernote", "Alpha", "--body-file", "/dev/null"], in: dir)
        #expect(device.status == 66 && device.err.contains("/dev/null: is not a regular file or a pipe"))
        try FileManager.default.createDirectory(atPath: dir.file("folder"), withIntermediateDirectories: false)
        let folder = try Binary.run(["edit", "n.peernote", "Alpha", "--body-file", "folder"], in: dir)
        #expect(folder.status == 66 && folder.err.contains("folder: is a directory"))
    }

    @Test("edit --editor runs a fake $EDITOR script and records what it changed")
    func fakeEditor() throws {
        let dir = try TempDir()
        let (alpha, beta) = try makeNotebook(dir)
        // Like real editors, this one also ends the file with a newline; the body had none, so it is dropped.
        let script = try dir.write("editor.sh", "#!/bin/sh\nsed -i 's/brown/red/' \"$1\"\nprintf '\\n' >> \"$1\"\n", executable: true)
        let tmp = try TempDir()
        try ok(["edit", "n.peernote", alpha, "--editor", "-m", "via editor"], in: dir, env: ["EDITOR": script, "TMPDIR": tmp.path])
        var document = try Document.open(dir.file("n.peernote"))
        #expect(document.notes[0].body == "The quick red fox jumps over the lazy dog.")
        #expect(document.history.last?.message == "via editor")
        #expect(try tmp.entries().isEmpty, "the temporary file was left behind")

        // $VISUAL wins over $EDITOR; a body that ends with a newline keeps it.
        let upper = try dir.write("upper.sh", "#!/bin/sh\nsed -i 's/two/TWO/' \"$1\"\n", executable: true)
        try ok(["edit", "n.peernote", beta, "--editor"], in: dir, env: ["VISUAL": upper, "EDITOR": "false"])
        document = try Document.open(dir.file("n.peernote"))
        #expect(document.notes[1].body == "one\nTWO\nthree\n")
    }

    @Test("--editor with neither VISUAL nor EDITOR set and no terminal is refused (64), vi not started, nothing recorded")
    func noEditorWithoutTerminal() throws {
        let dir = try TempDir()
        _ = try makeNotebook(dir)
        let before = try dir.bytes("n.peernote")
        let tmp = try TempDir()
        let r = try Binary.run(["edit", "n.peernote", "Alpha", "--editor"], in: dir, env: ["TMPDIR": tmp.path])
        #expect(r.status == 64, "\(r.err)")
        #expect(r.err == "peernote: n.peernote: no editor to run: neither VISUAL nor EDITOR is set, and vi needs a terminal, which standard input or output is not; set EDITOR, or give the text with --body or --body-file\n")
        #expect(r.out.isEmpty)
        #expect(try dir.bytes("n.peernote") == before)
        #expect(try tmp.entries().isEmpty, "no temporary file was made")
    }

    @Test("A failing editor records nothing: exit 66, file byte-identical; an unchanged text records nothing either")
    func failingEditor() throws {
        let dir = try TempDir()
        _ = try makeNotebook(dir)
        let before = try dir.bytes("n.peernote")
        let script = try dir.write("fail.sh", "#!/bin/sh\nsed -i 's/brown/red/' \"$1\"\nexit 3\n", executable: true)
        let tmp = try TempDir()
        let r = try Binary.run(["edit", "n.peernote", "Alpha", "--editor"], in: dir, env: ["EDITOR": script, "TMPDIR": tmp.path])
        #expect(r.status == 66)
        #expect(r.err.contains("exited with status 3") && r.err.contains("nothing was recorded"))
        #expect(try dir.bytes("n.peernote") == before)
        // What the user typed before the editor failed is kept for them (vim exits 1 after :wq
        // when a command failed); an editor that changed nothing leaves nothing behind.
        #expect(r.err.contains("(the edited text is kept in \(tmp.path)/peernote-"))
        let kept = try tmp.entries()
        #expect(kept.count == 1)
        if let name = kept.first {
            #expect(try String(contentsOfFile: tmp.path + "/" + name, encoding: .utf8) == "Title: Alpha\nTags:\nPriority: normal\n\nThe quick red fox jumps over the lazy dog.")
            try FileManager.default.removeItem(atPath: tmp.path + "/" + name)
        }
        let untouched = try Binary.run(["edit", "n.peernote", "Alpha", "--editor"], in: dir, env: ["EDITOR": "false", "TMPDIR": tmp.path])
        #expect(untouched.status == 66 && !untouched.err.contains("kept"))
        #expect(untouched.err == "peernote: n.peernote: the editor (false) exited with status 1; nothing was recorded\n", "\(untouched.err)")
        #expect(try tmp.entries().isEmpty)

        // Text that is not UTF-8 is refused, and kept for the user rather than thrown away (the
        // offset counts the header's 37 bytes before the body's 44).
        let binary = try dir.write("binary.sh", "#!/bin/sh\nprintf '\\377' >> \"$1\"\n", executable: true)
        let bad = try Binary.run(["edit", "n.peernote", "Alpha", "--editor"], in: dir, env: ["EDITOR": binary, "TMPDIR": tmp.path])
        #expect(bad.status == 65)
        #expect(bad.err.hasPrefix("peernote: n.peernote: the edited text is not valid UTF-8 at offset 81; nothing was recorded (the edited text is kept in \(tmp.path)/peernote-"), "\(bad.err)")
        #expect(try tmp.entries().count == 1)
        #expect(try dir.bytes("n.peernote") == before)

        // An editor that returns at once without a change (a GUI editor not told to wait) gets a hint.
        let same = try Binary.run(["edit", "n.peernote", "Alpha", "--editor"], in: dir, env: ["EDITOR": "true"])
        #expect(same.status == 0)
        #expect(same.err.contains("no changes"))
        #expect(same.err.hasPrefix("peernote: n.peernote: no changes; nothing recorded\npeernote: n.peernote: the editor (true) returned at once; if it opens a window, make it wait"), "\(same.err)")
        #expect(try dir.bytes("n.peernote") == before)
        // One that took its time (a person who looked and changed nothing) gets none.
        let slow = try Binary.run(["edit", "n.peernote", "Alpha", "--editor"], in: dir, env: ["EDITOR": "sleep 1.2; true"])
        #expect(slow.status == 0 && slow.err.contains("no changes") && !slow.err.contains("returned at once"), "\(slow.err)")
    }

    @Test("An editor that leaves a FIFO in place of the file is refused at once (66), not waited on forever")
    func editorLeavesFIFO() throws {
        let dir = try TempDir()
        _ = try makeNotebook(dir)
        let before = try dir.bytes("n.peernote")
        let script = try dir.write("fifo.sh", "#!/bin/sh\nrm -f \"$1\"\nmkfifo \"$1\"\n", executable: true)
        let tmp = try TempDir()
        let r = try Binary.run(["edit", "n.peernote", "Alpha", "--editor"], in: dir, env: ["EDITOR": script, "TMPDIR": tmp.path])
        #expect(r.status == 66, "\(r.err)")
        #expect(r.err.hasPrefix("peernote: n.peernote: cannot read the edited text: \(tmp.path)/peernote-") && r.err.hasSuffix(": is not a regular file\n"), "\(r.err)")
        #expect(try dir.bytes("n.peernote") == before)
        #expect(try tmp.entries().isEmpty, "the FIFO is removed")
        // A folder or a dangling link in its place: refused the same way, and removed.
        for leftover in ["mkdir \"$1\"", "ln -s /nonexistent/x \"$1\"", "mkfifo \"$1\"; exit 1", "mkdir \"$1\"; exit 1"] {
            let editor = try dir.write("left.sh", "#!/bin/sh\nrm -f \"$1\"\n\(leftover)\n", executable: true)
            let left = try Binary.run(["edit", "n.peernote", "Alpha", "--editor"], in: dir, env: ["EDITOR": editor, "TMPDIR": tmp.path])
            #expect(left.status == 66 && !left.err.contains("kept in"), "\(left.err)")
            #expect(left.err.contains(leftover.hasSuffix("exit 1") ? "exited with status 1" : "cannot read the edited text"), "\(left.err)")
            #expect(try tmp.entries().isEmpty, "\(leftover): removed")
        }
    }

    @Test("An editor that exits 0 but removes the file records nothing and says so, as other editor failures do (exit 66)")
    func editorRemovesFile() throws {
        let dir = try TempDir()
        _ = try makeNotebook(dir)
        let before = try dir.bytes("n.peernote")
        let tmp = try TempDir()
        let r = try Binary.run(["edit", "n.peernote", "Alpha", "--editor"], in: dir, env: ["EDITOR": "rm", "TMPDIR": tmp.path])
        #expect(r.status == 66)
        #expect(r.err.hasPrefix("peernote: n.peernote: the editor (rm) removed \(tmp.path)/peernote-"), "\(r.err)")
        #expect(r.err.hasSuffix(".md; nothing was recorded\n"), "\(r.err)")
        #expect(r.err.split(separator: "\n").count == 1 && !r.err.contains("No such file"), "\(r.err)")
        #expect(try dir.bytes("n.peernote") == before)
        #expect(try tmp.entries().isEmpty)
    }

    @Test("The file is not locked while the editor runs: a change made meanwhile is kept")
    func editorWithConcurrentChange() throws {
        let dir = try TempDir()
        _ = try makeNotebook(dir)
        let binary = try Binary.require()
        let script = try dir.write("busy.sh", """
            #!/bin/sh
            "\(binary)" add "\(dir.file("n.peernote"))" --title Meanwhile --author other >/dev/null || exit 9
            "\(binary)" edit "\(dir.file("n.peernote"))" Alpha --body "The quick brown fox jumps over the lazy dog. Twice." || exit 9
            sed -i 's/^The/A/' "$1"

            """, executable: true)
        let r = try Binary.run(["edit", "n.peernote", "Alpha", "--editor"], in: dir, env: ["EDITOR": script])
        #expect(r.status == 0)
        let document = try Document.open(dir.file("n.peernote"))
        #expect(document.notes.map(\.title) == ["Alpha", "Beta", "Meanwhile"])
        #expect(document.notes[0].body == "A quick brown fox jumps over the lazy dog. Twice.")
        // Both edits are kept, merged; the user is told to look (a fix made twice would be there twice).
        #expect(r.err.contains("peernote: n.peernote: note \"Alpha\": its body was changed while the editor was open; both edits are kept, merged"), "\(r.err)")
    }

    @Test("An edit made in the editor to a note deleted meanwhile is kept, and the user is told")
    func editorOnNoteDeletedMeanwhile() throws {
        let dir = try TempDir()
        _ = try makeNotebook(dir)
        let binary = try Binary.require()
        let script = try dir.write("rm.sh", """
            #!/bin/sh
            "\(binary)" rm "\(dir.file("n.peernote"))" Alpha || exit 9
            sed -i 's/brown/red/' "$1"

            """, executable: true)
        let r = try Binary.run(["edit", "n.peernote", "Alpha", "--editor"], in: dir, env: ["EDITOR": script])
        #expect(r.status == 0)
        #expect(r.err.contains("peernote: n.peernote: note \"Alpha\" was deleted while the editor was open; the edit is kept with it ('peernote restore' brings both back)"), "\(r.err)")
        try ok(["restore", "n.peernote", "Alpha"], in: dir)
        #expect(try Document.open(dir.file("n.peernote")).notes[0].body == "The quick red fox jumps over the lazy dog.")
    }


    @Test("A rewritten document keeps its owner and group (when this user may give them)")
    func ownerKept() throws {
        let dir = try TempDir()
        _ = try makeNotebook(dir)
        let path = dir.file("n.peernote")
        guard chown(path, 4321, 4322) == 0 else {
            // Only root may give a file away: the behaviour is not observable here.
            print("ownerKept: skipped, chown needs root (running as uid \(getuid()))")
            return
        }
        #expect(chmod(path, 0o660) == 0)
        try ok(["edit", "n.peernote", "Alpha", "--add-tag", "kept"], in: dir)
        var st = stat()
        #expect(stat(path, &st) == 0)
        #expect(st.st_uid == 4321 && st.st_gid == 4322)
        #expect(st.st_mode & 0o7777 == 0o660)
        #expect(try Document.open(path).notes[0].tags == ["kept"])
    }

    @Test("peernote list and export read a notebook from a pipe; add refuses one (it writes the file back)")
    func readOnlyPipes() throws {
        let dir = try TempDir()
        _ = try makeNotebook(dir)
        let list = try peernoteScript(#"mkfifo p; cat n.peernote > p & exec "$0" list p"#, in: dir)
        #expect(list.status == 0 && list.out.contains("Alpha") && list.out.contains("Beta"), "\(list.err)")
        let export = try peernoteScript(#"rm -f p; mkfifo p; cat n.peernote > p & exec "$0" export p --format json"#, in: dir)
        #expect(export.status == 0 && export.out.contains("\"Alpha\""), "\(export.err)")
        let add = try peernoteScript(#"rm -f p; mkfifo p; exec "$0" add p --title x"#, in: dir)
        #expect(add.status == 66 && add.err == "peernote: p: is a pipe, and this command writes the file back: it needs a regular file\n", "\(add.err)")
    }

    @Test("Importing an empty Markdown file warns that the notebook is empty (exit 0); one with notes does not")
    func importEmpty() throws {
        let dir = try TempDir()
        _ = try dir.write("empty.md", "\n  \n")
        let r = try Binary.run(["import", "empty.md", "-o", "e.peernote"], in: dir)
        #expect(r.status == 0 && r.err == "peernote: empty.md: warning: it is empty; the notebook has no title and no notes\n", "\(r.err)")
        _ = try dir.write("bom.md", "\u{FEFF}")
        let bom = try Binary.run(["import", "bom.md", "-o", "b.peernote"], in: dir)
        #expect(bom.status == 0 && bom.err.contains("bom.md: warning: it is empty"), "a byte-order mark alone is empty too: \(bom.err)")
        _ = try dir.write("one.md", "## A\n\nbody\n")
        let one = try Binary.run(["import", "one.md", "-o", "o.peernote"], in: dir)
        #expect(one.status == 0 && one.err.isEmpty, "\(one.err)")
    }

    @Test("An empty tag an import brought in can be removed")
    func removeEmptyTag() throws {
        let dir = try TempDir()
        _ = try dir.write("t.json", #"{"notes": [{"title": "t", "tags": ["a", ""]}]}"#)
        try ok(["import", "t.json", "-o", "n.peernote"], in: dir)
        #expect(try Document.open(dir.file("n.peernote")).notes[0].tags == ["", "a"])
        try ok(["edit", "n.peernote", "t", "--remove-tag", ""], in: dir)
        #expect(try Document.open(dir.file("n.peernote")).notes[0].tags == ["a"])
    }

    @Test("rm, list --deleted, restore, move, title")
    func removeRestoreMoveTitle() throws {
        let dir = try TempDir()
        let (alpha, beta) = try makeNotebook(dir)
        try ok(["rm", "n.peernote", "Alpha"], in: dir)
        #expect(try ok(["list", "n.peernote"], in: dir) == "0  \(beta.prefix(8))  Beta  b  normal\n")
        #expect(try ok(["list", "n.peernote", "--deleted"], in: dir) == "-  \(alpha.prefix(8))  Alpha  -  normal\n")
        let edited = try Binary.run(["edit", "n.peernote", "Alpha", "--title", "x"], in: dir)
        #expect(edited.status == 64)
        #expect(edited.err.contains("is deleted") && edited.err.contains("peernote restore"))
        try ok(["restore", "n.peernote", "Alpha"], in: dir)
        var document = try Document.open(dir.file("n.peernote"))
        #expect(document.notes.map(\.title) == ["Alpha", "Beta"])
        let restored = try dir.bytes("n.peernote")
        let again = try Binary.run(["restore", "n.peernote", "Alpha"], in: dir)
        // A live note: exit 0, one line naming the file, nothing recorded.
        #expect(again.status == 0)
        #expect(again.err == "peernote: n.peernote: note \(alpha.prefix(8)) \"Alpha\" is not deleted; nothing recorded\n", "\(again.err)")
        #expect(try dir.bytes("n.peernote") == restored)

        try ok(["move", "n.peernote", "Alpha", "--to", "1"], in: dir)
        document = try Document.open(dir.file("n.peernote"))
        #expect(document.notes.map(\.title) == ["Beta", "Alpha"])
        let before = try dir.bytes("n.peernote")
        let far = try Binary.run(["move", "n.peernote", "Alpha", "--to", "2"], in: dir)
        #expect(far.status == 64 && far.err.contains("--to 2 is out of range: from 0 to 1"), "\(far.err)")
        #expect(try dir.bytes("n.peernote") == before)
        // Where it already is, and a title the notebook already has: one line naming the file, exit 0.
        let stay = try Binary.run(["move", "n.peernote", "Alpha", "--to", "1"], in: dir)
        #expect(stay.status == 0)
        #expect(stay.err == "peernote: n.peernote: note \(alpha.prefix(8)) \"Alpha\" is already at index 1; nothing recorded\n", "\(stay.err)")
        #expect(try dir.bytes("n.peernote") == before)

        try ok(["title", "n.peernote", "Renamed book"], in: dir)
        document = try Document.open(dir.file("n.peernote"))
        #expect(document.title == "Renamed book")
        let retitled = try dir.bytes("n.peernote")
        let sameTitle = try Binary.run(["title", "n.peernote", "Renamed book"], in: dir)
        #expect(sameTitle.status == 0 && sameTitle.err == "peernote: n.peernote: no changes; nothing recorded\n", "\(sameTitle.err)")
        #expect(try dir.bytes("n.peernote") == retitled)
        #expect(try ok(["export", "n.peernote"], in: dir).hasPrefix("# Renamed book\n"))
    }

    @Test("Notes are named by id, id prefix or unique title; anything else lists candidates (exit 64)")
    func naming() throws {
        let dir = try TempDir()
        let (alpha, beta) = try makeNotebook(dir)
        let twin = try ok(["add", "n.peernote", "--title", "Beta"], in: dir).trimmingCharacters(in: .newlines)
        try ok(["edit", "n.peernote", alpha.uppercased(), "--add-tag", "byid"], in: dir)
        try ok(["edit", "n.peernote", String(alpha.prefix(6)), "--add-tag", "byprefix"], in: dir)
        try ok(["edit", "n.peernote", "Alpha", "--add-tag", "bytitle"], in: dir)
        #expect(try Document.open(dir.file("n.peernote")).notes[0].tags == ["byid", "byprefix", "bytitle"])
        let before = try dir.bytes("n.peernote")
        let ambiguous = try Binary.run(["edit", "n.peernote", "Beta", "--title", "x"], in: dir)
        #expect(ambiguous.status == 64)
        #expect(ambiguous.err.contains(String(beta.prefix(8))) && ambiguous.err.contains(String(twin.prefix(8))))
        let none = try Binary.run(["rm", "n.peernote", "Gamma"], in: dir)
        #expect(none.status == 64)
        #expect(none.err.hasPrefix("peernote: n.peernote: no note matches \"Gamma\""))
        #expect(none.err.contains(String(alpha.prefix(8))))
        #expect(try dir.bytes("n.peernote") == before)
    }

    @Test("add and edit --title accept a title another live note has, with a one-line warning naming it")
    func sharedTitleWarning() throws {
        let dir = try TempDir()
        let (alpha, beta) = try makeNotebook(dir)
        // A rename to the title of another live note: recorded, and warned about.
        let renamed = try Binary.run(["edit", "n.peernote", alpha, "--title", "Beta"], in: dir)
        #expect(renamed.status == 0)
        #expect(renamed.err == "peernote: n.peernote: warning: note \(beta.prefix(8)) \"Beta\" has this title too; the title alone will no longer pick either note: name them by id\n",
                "\(renamed.err)")
        #expect(try Document.open(dir.file("n.peernote")).notes.first { $0.id.description == alpha }?.title == "Beta")
        // … which is what the warning says: "Beta" no longer names one note.
        let ambiguous = try Binary.run(["edit", "n.peernote", "Beta", "--body", "x"], in: dir)
        #expect(ambiguous.status == 64 && ambiguous.err.contains("matches several notes"))

        // add: the same, naming both notes that have it already.
        let added = try Binary.run(["add", "n.peernote", "--title", "Beta"], in: dir)
        #expect(added.status == 0 && added.out.count == 17)
        #expect(added.err == "peernote: n.peernote: warning: 2 notes have this title too: \(alpha.prefix(8)) \"Beta\", \(beta.prefix(8)) \"Beta\"; the title alone picks none of these notes: name them by id\n",
                "\(added.err)")

        // No warning: a title no other note has, the note's own title, a deleted note's title,
        // or a look-alike (the same text in other scalars is another title).
        for args in [["add", "n.peernote", "--title", "Gamma"], ["edit", "n.peernote", alpha, "--title", "Beta", "--add-tag", "t"],
                     ["edit", "n.peernote", "Gamma", "--title", "Delta"]] {
            let r = try Binary.run(args, in: dir)
            #expect(r.status == 0 && r.err.isEmpty, "\(args): \(r.err)")
        }
        try ok(["add", "n.peernote", "--title", "Gone"], in: dir)
        try ok(["rm", "n.peernote", "Gone"], in: dir)
        try ok(["add", "n.peernote", "--title", "caf\u{E9}"], in: dir)
        for args in [["edit", "n.peernote", "Delta", "--title", "Gone"], ["add", "n.peernote", "--title", "cafe\u{301}"]] {
            let r = try Binary.run(args, in: dir)
            #expect(r.status == 0 && r.err.isEmpty, "\(args): \(r.err)")
        }

        // edit --title with --editor warns too, once the edit is merged in (the header holds the
        // title --title gave; the note's body, empty, follows it).
        let script = try dir.write("editor.sh", "#!/bin/sh\nprintf 'new body' >> \"$1\"\n", executable: true)
        let viaEditor = try Binary.run(["edit", "n.peernote", "Gone", "--title", "caf\u{E9}", "--editor"], in: dir, env: ["EDITOR": script])
        #expect(viaEditor.status == 0)
        #expect(viaEditor.err.hasPrefix("peernote: n.peernote: warning: note ") && viaEditor.err.contains(" \"caf\u{E9}\" has this title too"),
                "\(viaEditor.err)")
        let edited = try Document.open(dir.file("n.peernote")).notes.filter { $0.body == "new body" }
        #expect(edited.count == 1 && edited.allSatisfy { sameScalars($0.title, "caf\u{E9}") })
    }

    @Test("--remove-tag of a tag the note lacks and --add-tag of one it has say so, naming the file, note and tag; exit 0, the rest of the edit is recorded")
    func unchangedTags() throws {
        let dir = try TempDir()
        let (_, beta) = try makeNotebook(dir)
        let note = "note \(beta.prefix(8)) \"Beta\""
        let before = try dir.bytes("n.peernote")
        let missing = try Binary.run(["edit", "n.peernote", "Beta", "--remove-tag", "zzz"], in: dir)
        #expect(missing.status == 0)
        #expect(missing.err == "peernote: n.peernote: \(note) has no tag \"zzz\"; nothing to remove\npeernote: n.peernote: no changes; nothing recorded\n", "\(missing.err)")
        let present = try Binary.run(["edit", "n.peernote", "Beta", "--add-tag", "b", "--add-tag", "b"], in: dir)
        #expect(present.status == 0)
        #expect(present.err == "peernote: n.peernote: \(note) already has tag \"b\"; not added again\npeernote: n.peernote: no changes; nothing recorded\n", "\(present.err)")
        #expect(try dir.bytes("n.peernote") == before)
        // With the editor too (it opened and changed nothing: the lines come before "no changes").
        let viaEditor = try Binary.run(["edit", "n.peernote", "Beta", "--editor", "--remove-tag", "zzz"], in: dir, env: ["EDITOR": "sleep 1.2; true"])
        #expect(viaEditor.status == 0)
        #expect(viaEditor.err == missing.err, "\(viaEditor.err)")
        #expect(try dir.bytes("n.peernote") == before)
        // Beside changes that do happen: the line, and the change recorded.
        let mixed = try Binary.run(["edit", "n.peernote", "Beta", "--remove-tag", "b", "--remove-tag", "zzz", "--add-tag", "c"], in: dir)
        #expect(mixed.status == 0)
        #expect(mixed.err == "peernote: n.peernote: \(note) has no tag \"zzz\"; nothing to remove\n", "\(mixed.err)")
        #expect(try Document.open(dir.file("n.peernote")).notes[1].tags == ["c"])
    }

    @Test("A usage error is one line 'peernote: … (see 'peernote SUBCOMMAND --help')', then the usage synopsis; exit 64")
    func usageErrors() throws {
        let dir = try TempDir()
        _ = try makeNotebook(dir)
        let cases: [(args: [String], first: String, usage: String)] = [
            (["edit", "n.peernote", "Alpha"], "peernote: nothing to change: give --title, --body, --body-file, --editor, --add-tag, --remove-tag or --priority (see 'peernote edit --help')", "Usage: peernote edit "),
            (["add"], "peernote: missing expected argument '<FILE>' (see 'peernote add --help')", "Usage: peernote add "),
            (["list", "n.peernote", "--bogus"], "peernote: unknown option '--bogus' (see 'peernote list --help')", "Usage: peernote list "),
            (["lsit"], "peernote: unknown command 'lsit'; did you mean 'list'? (see 'peernote --help')", "Commands: new, add, "),
            // An argument's own error, lower case after the prefix; it names the option, not the file.
            (["edit", "n.peernote", "Alpha", "--add-tag", ""], "peernote: --add-tag: a tag cannot be empty (see 'peernote edit --help')", "Usage: peernote edit "),
            (["add", "n.peernote", "--title", "x", "--tag", "ok", "--tag", ""], "peernote: --tag: a tag cannot be empty (see 'peernote add --help')", "Usage: peernote add "),
            // The option as typed: -m, which the arguments' normalisation spells --message.
            (["new", "zz.peernote", "-m", "hi"], "peernote: unknown option '-m' (see 'peernote new --help')", "Usage: peernote new "),
            (["new", "zz.peernote", "--message", "hi"], "peernote: unknown option '--message' (see 'peernote new --help')", "Usage: peernote new "),
            // An unknown option rather than the argument missing beside it; one that reads as a
            // value (a note's title) is told where such a value goes.
            (["edit", "n.peernote", "-draft-", "--body", "T2"], "peernote: unknown option '-draft-'; a note or other value that starts with '-' goes last, after the options and --: -- -draft- (see 'peernote edit --help')", "Usage: peernote edit "),
            (["rm", "n.peernote", "-q"], "peernote: unknown option '-q' (see 'peernote rm --help')", "Usage: peernote rm "),
        ]
        for c in cases {
            let r = try Binary.run(c.args, in: dir)
            #expect(r.status == 64, "\(c.args)")
            #expect(r.out.isEmpty, "\(c.args)")
            let lines = r.err.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            #expect(lines.first == c.first, "\(c.args): \(r.err)")
            #expect(lines.count == 3 && lines[1].hasPrefix(c.usage) && lines[2].isEmpty, "\(c.args): \(r.err)")
            #expect(!r.err.contains("Error:") && !r.err.contains("for more information"), "\(c.args): \(r.err)")
        }
        // A failure a command reports itself is still its one line, with no usage after it.
        let none = try Binary.run(["rm", "n.peernote", "Gamma"], in: dir)
        #expect(none.status == 64 && none.err.hasPrefix("peernote: n.peernote: no note matches") && none.err.split(separator: "\n").count == 1)
        // Help and the version still go to standard output, exit 0.
        let help = try Binary.run(["add", "--help"], in: dir)
        #expect(help.status == 0 && help.err.isEmpty && help.out.contains("USAGE: peernote add <FILE>"))
        let version = try Binary.run(["--version"], in: dir)
        #expect(version.status == 0 && version.out.hasPrefix("peernote ") && version.err.isEmpty)
    }

    @Test("Export then import keeps titles, bodies, tags and priorities (Markdown and JSON)")
    func exportImport() throws {
        let dir = try TempDir()
        try ok(["new", "n.peernote", "--title", "Round trip"], in: dir)
        let bodies = ["# looks like a heading\n## and another\n\\# escaped already\n", "Tags: fake · Priority: high", "", "\n\ntrailing\n\n\n"]
        for (i, body) in bodies.enumerated() {
            let file = try dir.write("body\(i).txt", body)
            try ok(["add", "n.peernote", "--title", "Note #\(i) \\ with\\backslash", "--body-file", file,
                    "--tag", "t\(i)", "--tag", "comma, tag", "--priority", ["low", "normal", "high", "low"][i]], in: dir)
        }
        let original = try Document.open(dir.file("n.peernote")).notebook
        for format in ["markdown", "json"] {
            let exported = try ok(["export", "n.peernote", "--format", format], in: dir)
            let source = try dir.write("export.\(format == "json" ? "json" : "md")", exported)
            let out = "imported-\(format).peernote"
            try ok(["import", source, "-o", out, "--author", "importer"], in: dir)
            let imported = try Document.open(dir.file(out))
            #expect(imported.title == original.title)
            #expect(imported.notes.count == original.notes.count)
            for (a, b) in zip(imported.notes, original.notes) {
                #expect(sameScalars(a.title, b.title) && sameScalars(a.body, b.body) && a.tags == b.tags && a.priority == b.priority)
            }
            #expect(imported.id != original.id)
            #expect(imported.history.allSatisfy { $0.author == "importer" })
            let again = try ok(["export", out, "--format", format], in: dir)
            if format == "markdown" { #expect(again == exported) } else { #expect(again.count == exported.count) }
        }
        // From standard input too (format from the first character).
        let json = try ok(["export", "n.peernote", "--format", "json"], in: dir)
        try ok(["import", "-", "-o", "stdin.peernote"], in: dir, stdin: json)
        #expect(try Document.open(dir.file("stdin.peernote")).notes.map(\.title) == original.notes.map(\.title))
    }

    @Test("Export then import keeps each note's creation date, and a CRLF body (Markdown and JSON); a bad date is refused")
    func exportImportCreated() throws {
        let dir = try TempDir()
        let may = Date(timeIntervalSince1970: 1_714_555_800)  // 2024-05-01T09:30:00Z
        let document = Document(title: "Dated", author: "tester", time: may)
        document.clock = { may }
        document.addNote(title: "May", body: "line one\r\nline two\r\n")
        document.addNote(title: "Older", tags: ["t"], created: Date(timeIntervalSince1970: 946_684_800))  // 2000-01-01
        try document.write(to: dir.file("dated.peernote"))
        let original = try Document.open(dir.file("dated.peernote")).notes
        #expect(original.map(\.created.timeIntervalSince1970) == [1_714_555_800, 946_684_800])
        for format in ["markdown", "json"] {
            let exported = try ok(["export", "dated.peernote", "--format", format], in: dir)
            #expect(exported.contains(format == "json" ? "\"created\": \"2000-01-01T00:00:00Z\"" : "## Older\nTags: t · Created: 2000-01-01T00:00:00Z\n"))
            let source = try dir.write("dated.\(format == "json" ? "json" : "md")", exported)
            let out = "back-\(format).peernote"
            try ok(["import", source, "-o", out], in: dir)
            let back = try Document.open(dir.file(out)).notes
            #expect(back.map(\.created) == original.map(\.created), "\(format)")
            #expect(back.map(\.title) == ["May", "Older"])
            #expect(sameScalars(back[0].body, "line one\r\nline two\r\n"), "\(format): \(Array(back[0].body.unicodeScalars))")
            if format == "markdown" { #expect(try ok(["export", out], in: dir) == exported) }
        }
        // A Markdown file edited on two systems: some lines end in CRLF, some in LF.
        _ = try dir.write("mixed.md", "# Book\r\n\r\n## Mixed\r\nCreated: 2000-01-01T00:00:00Z\r\n\r\nbody\n\n## Plain\n\ntext\n")
        try ok(["import", "mixed.md", "-o", "mixed.peernote"], in: dir)
        let mixed = try Document.open(dir.file("mixed.peernote"))
        #expect(sameScalars(mixed.title, "Book"))
        #expect(mixed.notes.map(\.title) == ["Mixed", "Plain"] && mixed.notes.map(\.body) == ["body", "text"])
        #expect(mixed.notes.first?.created.timeIntervalSince1970 == 946_684_800)
        // A date that does not exist: one line naming the file and the note, exit 65, nothing written.
        _ = try dir.write("bad.json", "{\"notes\": [{\"title\": \"ok\"}, {\"title\": \"Trip\\nplans\", \"created\": \"2024-02-30T00:00:00Z\"}]}")
        let r = try Binary.run(["import", "bad.json", "-o", "bad.peernote"], in: dir)
        #expect(r.status == 65)
        #expect(r.err == "peernote: bad.json: notes[1].created: \"2024-02-30T00:00:00Z\" is not a date and time like 2024-05-01T09:30:00Z (note \"Trip\\nplans\")\n")
        #expect(!FileManager.default.fileExists(atPath: dir.file("bad.peernote")))
    }

    @Test("Two copies edited with peernote, merged with the library: every edit is present")
    func twoCopiesMerge() throws {
        let dir = try TempDir()
        let (alpha, beta) = try makeNotebook(dir)
        try FileManager.default.copyItem(atPath: dir.file("n.peernote"), toPath: dir.file("laptop.peernote"))
        try FileManager.default.copyItem(atPath: dir.file("n.peernote"), toPath: dir.file("phone.peernote"))
        // Laptop: rename Alpha, change the start of Beta's body, add a note.
        try ok(["edit", "laptop.peernote", alpha, "--title", "Alpha (laptop)", "--author", "laptop"], in: dir)
        try ok(["edit", "laptop.peernote", beta, "--body", "ONE\ntwo\nthree\n", "--author", "laptop"], in: dir)
        try ok(["add", "laptop.peernote", "--title", "Laptop note", "--author", "laptop"], in: dir)
        // Phone: tag Alpha, change the end of Beta's body and its priority, move Beta first.
        try ok(["edit", "phone.peernote", alpha, "--add-tag", "phone", "--author", "phone"], in: dir)
        try ok(["edit", "phone.peernote", beta, "--body", "one\ntwo\nthree\nfour\n", "--priority", "high", "--author", "phone"], in: dir)
        try ok(["move", "phone.peernote", beta, "--to", "0", "--author", "phone"], in: dir)

        let laptop = try Document.open(dir.file("laptop.peernote"))
        let phone = try Document.open(dir.file("phone.peernote"))
        let summary = try laptop.merge(phone)
        #expect(summary.changeCount == 3)
        #expect(laptop.conflicts.isEmpty)
        let notes = laptop.notes
        #expect(notes.map(\.title) == ["Beta", "Alpha (laptop)", "Laptop note"])
        #expect(notes[1].tags == ["phone"])
        #expect(notes[0].body == "ONE\ntwo\nthree\nfour\n")
        #expect(notes[0].priority == .high)
        #expect(Set(laptop.history.map(\.author)) == ["tester", "laptop", "phone"])

        // The merged result is an ordinary document peernote keeps editing.
        try laptop.write(to: dir.file("merged.peernote"), mode: .compact)
        try ok(["edit", "merged.peernote", "Beta", "--add-tag", "after-merge"], in: dir)
        #expect(try Document.open(dir.file("merged.peernote")).notes[0].tags == ["after-merge", "b"])
    }

    @Test("restore brings back a note deleted on one copy with the edits made to it on another")
    func restoreConcurrentEdits() throws {
        let dir = try TempDir()
        let (_, beta) = try makeNotebook(dir)
        try FileManager.default.copyItem(atPath: dir.file("n.peernote"), toPath: dir.file("other.peernote"))
        try ok(["rm", "n.peernote", beta], in: dir)
        try ok(["edit", "other.peernote", beta, "--body", "one\ntwo\nthree\nand more\n"], in: dir)
        let merged = try Document.open(dir.file("n.peernote"))
        try merged.merge(try Document.open(dir.file("other.peernote")))
        #expect(merged.notes.map(\.title) == ["Alpha"])
        try merged.write(to: dir.file("merged.peernote"))
        try ok(["restore", "merged.peernote", String(beta.prefix(6))], in: dir)
        let restored = try Document.open(dir.file("merged.peernote"))
        #expect(restored.notes.map(\.title) == ["Alpha", "Beta"])
        #expect(restored.notes[1].body == "one\ntwo\nthree\nand more\n")
    }

    @Test("Eight concurrent adds to one file: eight notes, none lost")
    func concurrentAdds() throws {
        let dir = try TempDir()
        try ok(["new", "n.peernote"], in: dir)
        let running = try (0 ..< 8).map { i in try Binary.start(["add", "n.peernote", "--title", "Note \(i)", "--body", String(repeating: "x", count: 200 * i)], in: dir) }
        let results = try running.map { try $0.finish() }
        for r in results { #expect(r.status == 0, "\(r.err)") }
        let document = try Document.open(dir.file("n.peernote"))
        #expect(Set(document.notes.map(\.title)) == Set((0 ..< 8).map { "Note \($0)" }))
        #expect(Set(document.notes.map(\.id.description)) == Set(results.map { $0.out.trimmingCharacters(in: .newlines) }))
    }

    @Test("Damaged, missing and unreadable inputs: one line naming the file, the right status, nothing written")
    func badInputs() throws {
        let dir = try TempDir()
        _ = try makeNotebook(dir)
        let good = try dir.bytes("n.peernote")
        try dir.write(Array(good.prefix(good.count - 5)), "damaged.peernote")
        let damaged = try dir.bytes("damaged.peernote")
        let listed = try Binary.run(["list", "damaged.peernote"], in: dir)
        #expect(listed.status == 65)
        #expect(listed.err.hasPrefix("peernote: damaged.peernote: "))
        #expect(listed.err.filter { $0 == "\n" }.count == 1)
        // Its first blocks are intact (each command appended one): the line says how to get them back.
        #expect(listed.err.contains("; 'pnmerge salvage damaged.peernote -o NEW.peernote' recovers its "), "\(listed.err)")
        let edited = try Binary.run(["add", "damaged.peernote", "--title", "x"], in: dir)
        #expect(edited.status == 65)
        #expect(edited.err.contains("'pnmerge salvage "), "\(edited.err)")
        #expect(try dir.bytes("damaged.peernote") == damaged)

        let missing = try Binary.run(["add", "missing.peernote", "--title", "x"], in: dir)
        #expect(missing.status == 66 && missing.err.contains("missing.peernote"))
        #expect(!FileManager.default.fileExists(atPath: dir.file(".missing.peernote.lock")))

        let noBody = try Binary.run(["edit", "n.peernote", "Alpha", "--body-file", "nope.txt"], in: dir)
        #expect(noBody.status == 66 && noBody.err.contains("nope.txt"))
        try Data([0x41, 0xC3]).write(to: URL(fileURLWithPath: dir.file("latin.txt")))
        let badBody = try Binary.run(["edit", "n.peernote", "Alpha", "--body-file", "latin.txt"], in: dir)
        #expect(badBody.status == 65 && badBody.err.contains("latin.txt: offset 1"))
        let stdinDoc = try Binary.run(["add", "-", "--title", "x"], in: dir)
        #expect(stdinDoc.status == 64)
        _ = try dir.write("bad.json", "{\"notes\": 3}")
        let badJSON = try Binary.run(["import", "bad.json", "-o", "out.peernote"], in: dir)
        #expect(badJSON.status == 65 && badJSON.err.contains("bad.json"))
        #expect(!FileManager.default.fileExists(atPath: dir.file("out.peernote")))
        #expect(try dir.bytes("n.peernote") == good)
    }

    @Test("A document that is a symbolic link is updated through the link, which stays a link")
    func symlinkedDocument() throws {
        let dir = try TempDir()
        _ = try makeNotebook(dir)
        try FileManager.default.createSymbolicLink(atPath: dir.file("link.peernote"), withDestinationPath: "n.peernote")
        try ok(["title", "link.peernote", "Via link"], in: dir)
        let attributes = try FileManager.default.attributesOfItem(atPath: dir.file("link.peernote"))
        #expect(attributes[.type] as? FileAttributeType == .typeSymbolicLink)
        #expect(try Document.open(dir.file("n.peernote")).title == "Via link")
    }

    @Test("The author: --author, else PEERNOTE_AUTHOR")
    func author() throws {
        let dir = try TempDir()
        try ok(["new", "n.peernote", "--author", "explicit"], in: dir)
        try ok(["add", "n.peernote", "--title", "x"], in: dir, env: ["PEERNOTE_AUTHOR": "from-env"])
        try ok(["title", "n.peernote", "T", "--author", "wins"], in: dir, env: ["PEERNOTE_AUTHOR": "from-env"])
        #expect(try Document.open(dir.file("n.peernote")).history.map(\.author) == ["explicit", "from-env", "wins"])
        // An empty --author is not "no --author": refused, nothing recorded, nothing created.
        let before = try dir.bytes("n.peernote")
        for args in [["title", "n.peernote", "U", "--author", ""], ["title", "n.peernote", "U", "--author="], ["new", "m.peernote", "--author", ""]] {
            let r = try Binary.run(args, in: dir, env: ["PEERNOTE_AUTHOR": "from-env"])
            #expect(r.status == 64, "\(args): \(r.err)")
            #expect(r.err == "peernote: --author is empty: give a name, or leave --author out to use $PEERNOTE_AUTHOR, git's user.name or the login name\n")
        }
        #expect(try dir.bytes("n.peernote") == before)
        #expect(!FileManager.default.fileExists(atPath: dir.file("m.peernote")))
    }

    @Test("An empty FILE, or one ending in '/', is a usage error (exit 64), not a file that cannot be created (74), is missing (66) or \"already exists\"")
    func emptyFileName() throws {
        let dir = try TempDir()
        _ = try dir.write("in.md", "# A\n")
        _ = try dir.write("trip.peernote", "")
        let folder = "a name ending in '/' names a folder; name a .peernote file"
        let cases: [([String], String)] = [
            (["new", ""], "the file name is empty: name a .peernote file"),
            (["import", "in.md", "-o", ""], "the file name is empty: name a .peernote file"),
            (["add", "", "--title", "x"], "the file name is empty: name a .peernote file"),
            (["list", ""], "the file name is empty: name a .peernote file"),
            (["import", "", "-o", "x.peernote"], "the file name is empty: name a file, or - for standard input"),
            (["new", "newdir/"], "newdir/: " + folder),
            (["new", "trip.peernote/"], "trip.peernote/: " + folder),
            (["import", "in.md", "-o", "out/"], "out/: " + folder),
            (["list", "trip.peernote/"], "trip.peernote/: " + folder),
        ]
        for (args, message) in cases {
            let r = try Binary.run(args, in: dir)
            #expect(r.status == 64, "\(args): \(r.err)")
            #expect(r.err == "peernote: \(message)\n", "\(args)")
        }
        #expect(try dir.entries() == ["in.md", "trip.peernote"])
    }

    @Test("A note that matches nothing, or several, lists the titles cut to 60 characters: a 100,000-character title makes no 100,000-character message")
    func longTitlesInCandidates() throws {
        let dir = try TempDir()
        let long = String(repeating: "T", count: 100_000)
        #expect(try Binary.run(["new", "n.peernote", "--title", "N"], in: dir).status == 0)
        let first = try Binary.run(["add", "n.peernote", "--title", long], in: dir)
        #expect(first.status == 0)
        // The warning that the title is shared names the other note with its title cut too.
        let second = try Binary.run(["add", "n.peernote", "--title", long], in: dir)
        #expect(second.status == 0 && second.err.contains("has this title too") && second.err.count < 400, "\(second.err.count) characters")
        // One note of that title deleted, then named: "is deleted", and restore of the live one: "is not deleted", both cut.
        let firstID = first.out.trimmingCharacters(in: .newlines), secondID = second.out.trimmingCharacters(in: .newlines)
        #expect(try Binary.run(["rm", "n.peernote", firstID], in: dir).status == 0)
        let deleted = try Binary.run(["edit", "n.peernote", firstID, "--body", "x"], in: dir)
        #expect(deleted.status == 64 && deleted.err.contains("is deleted") && deleted.err.count < 400, "\(deleted.err.count) characters")
        let notDeleted = try Binary.run(["restore", "n.peernote", secondID], in: dir)
        #expect(notDeleted.status == 0 && notDeleted.err.contains("is not deleted") && notDeleted.err.count < 400, "\(notDeleted.err.count) characters")
        #expect(try Binary.run(["restore", "n.peernote", firstID], in: dir).status == 0)
        let none = try Binary.run(["rm", "n.peernote", "zzzz"], in: dir)
        #expect(none.status == 64 && none.err.count < 400, "\(none.err.count) characters")
        #expect(none.err.contains("\"" + String(repeating: "T", count: 60) + "…\""), "\(none.err.prefix(300))")
        let several = try Binary.run(["rm", "n.peernote", String(repeating: "T", count: 70)], in: dir)
        #expect(several.status == 64 && several.err.count < 100_000, "\(several.err.count) characters")
    }

    @Test("rm on a note deleted on one copy while edited on another accepts the deletion; on a plain deleted note it points to restore")
    func removeAcceptsDeletion() throws {
        let dir = try TempDir()
        let a = Document(title: "T", author: "alice")
        let n = a.addNote(title: "Doomed", body: "abc")
        let b = a.fork(author: "bob")
        try a.deleteNote(n)
        try b.insertText(n, at: 3, "def")
        try a.merge(b)
        try FileStore.writeAtomically(a.save(), to: dir.file("m.peernote"))
        #expect(a.conflicts.count == 1)

        let r = try Binary.run(["rm", "m.peernote", "Doomed", "--author", "carol"], in: dir)
        #expect(r.status == 0, "\(r.err)")
        let after = try Document.open(dir.file("m.peernote"))
        #expect(after.conflicts.isEmpty)
        #expect(after.history.last?.message.contains("accepting the deletion") == true)
        let again = try Binary.run(["rm", "m.peernote", "Doomed"], in: dir)
        #expect(again.status == 64)
        #expect(again.err.contains("is deleted; bring it back with: peernote restore m.peernote"), "\(again.err)")
    }

    @Test("import to - or onto an existing file is refused before SOURCE is read: the refusal is the only line")
    func importRefusedFirst() throws {
        let dir = try TempDir()
        _ = try dir.write("g.md", "text before any heading\n# A\nbody\n")
        _ = try dir.write("existing", "x")
        let toStdout = try Binary.run(["import", "g.md", "-o", "-"], in: dir)
        #expect(toStdout.status == 64)
        #expect(toStdout.err == "peernote: the output must be a file, not - (standard output)\n", "\(toStdout.err)")
        let onto = try Binary.run(["import", "g.md", "-o", "existing"], in: dir)
        #expect(onto.status == 73)
        #expect(onto.err == "peernote: existing: already exists; refusing to overwrite it\n", "\(onto.err)")
        // Imported for real, the warning is given.
        let ok = try Binary.run(["import", "g.md", "-o", "g.peernote"], in: dir)
        #expect(ok.status == 0 && ok.err.contains("warning: text before the first heading"), "\(ok.err)")
    }

    @Test("import of JSON with a repeated key, a lone surrogate escape or a trailing comma: exit 65, one line with the offset, nothing created")
    func importRefusesLossyJSON() throws {
        let dir = try TempDir()
        let cases: [(String, String)] = [
            ("{\"notes\":[{\"title\":\"first\"}],\"notes\":[{\"title\":\"second\"},{\"title\":\"third\"}]}",
             "peernote: in.json: offset 29: the key \"notes\" appears twice in one object (first at offset 1)"),
            ("{\"notes\":[{\"title\":\"a\",\"title\":\"b\"}]}",
             "peernote: in.json: offset 23: the key \"title\" appears twice in one object (first at offset 11)"),
            ("{\"notes\":[{\"title\":\"a\",\"body\":\"x \\udc00 y\"}]}",
             "peernote: in.json: offset 33: \\udc00 is a low surrogate"),
            ("{\"notes\":[{\"title\":\"a\"},]}",
             "peernote: in.json: offset 23: not valid JSON: a comma before ']'"),
        ]
        for (json, start) in cases {
            _ = try dir.write("in.json", json)
            let r = try Binary.run(["import", "in.json", "-o", "out.peernote"], in: dir)
            #expect(r.status == 65, "\(json): \(r.err)")
            #expect(r.err.hasPrefix(start), "\(r.err)")
            #expect(r.err.filter { $0 == "\n" }.count == 1)
            #expect(!FileManager.default.fileExists(atPath: dir.file("out.peernote")))
        }
    }

    @Test("edit naming a title two deleted notes have lists both and says how to restore one by id (exit 64)")
    func severalDeletedByTitle() throws {
        let dir = try TempDir()
        try ok(["new", "r.peernote"], in: dir)
        var ids: [String] = []
        for _ in 0 ..< 2 {
            ids.append(try ok(["add", "r.peernote", "--title", "Same"], in: dir).trimmingCharacters(in: .newlines))
            try ok(["rm", "r.peernote", "Same"], in: dir)
        }
        let r = try Binary.run(["edit", "r.peernote", "Same", "--body", "x"], in: dir)
        #expect(r.status == 64)
        #expect(r.err.hasPrefix("peernote: r.peernote: \"Same\" matches only deleted notes, 2 of them: "), "\(r.err)")
        #expect(r.err.hasSuffix("; bring one back by its id with: peernote restore r.peernote ID\n"), "\(r.err)")
        for id in ids { #expect(r.err.contains("\(id.prefix(8)) \"Same\""), "\(r.err)") }
        try ok(["restore", "r.peernote", String(ids[1].prefix(8))], in: dir)
        try ok(["edit", "r.peernote", "Same", "--body", "x"], in: dir)
    }

    @Test("restore names a deleted note first: a title a live note and a deleted one share brings back the deleted one; several deleted ones are listed by id (exit 64)")
    func restoreByTitleSharedWithLiveNote() throws {
        let dir = try TempDir()
        try ok(["new", "r.peernote"], in: dir)
        let gone = try ok(["add", "r.peernote", "--title", "X", "--body", "old"], in: dir).trimmingCharacters(in: .newlines)
        try ok(["rm", "r.peernote", "X"], in: dir)
        let live = try ok(["add", "r.peernote", "--title", "X", "--body", "new"], in: dir).trimmingCharacters(in: .newlines)
        let restored = try Binary.run(["restore", "r.peernote", "X"], in: dir)
        #expect(restored.status == 0)
        // Back beside a live note of that title: said, as add and a rename say it.
        #expect(restored.err == "peernote: r.peernote: warning: note \(live.prefix(8)) \"X\" has this title too; the title alone will no longer pick either note: name them by id\n", "\(restored.err)")
        let doc = try Document.open(dir.file("r.peernote"))
        #expect(Set(doc.notes.map(\.id.description)) == [gone, live])
        #expect(doc.deletedNotes.isEmpty)
        // Two deleted notes titled "Y": listed, by id; the file is left as it was.
        for _ in 0 ..< 2 {
            try ok(["add", "r.peernote", "--title", "Y"], in: dir)
            try ok(["rm", "r.peernote", "Y"], in: dir)
        }
        let before = try dir.bytes("r.peernote")
        let r = try Binary.run(["restore", "r.peernote", "Y"], in: dir)
        #expect(r.status == 64)
        #expect(r.err.hasPrefix("peernote: r.peernote: \"Y\" matches 2 deleted notes: "), "\(r.err)")
        #expect(r.err.hasSuffix("; give the id of the one to bring back: peernote restore r.peernote ID\n"), "\(r.err)")
        #expect(try dir.bytes("r.peernote") == before)
        // A prefix of a deleted note's id that is also a live note's title names both: refused
        // (not the deleted one brought back without a word).
        let groceries = try ok(["add", "r.peernote", "--title", "Groceries"], in: dir).trimmingCharacters(in: .newlines)
        try ok(["rm", "r.peernote", "Groceries"], in: dir)
        let prefix = String(groceries.prefix(8))
        try ok(["add", "r.peernote", "--title", prefix], in: dir)
        let clash = try Binary.run(["restore", "r.peernote", prefix], in: dir)
        #expect(clash.status == 64 && clash.err.contains("matches several notes") && clash.err.contains("(an id prefix and a title)"), "\(clash.err)")
        #expect(try Document.open(dir.file("r.peernote")).deletedNotes.contains { $0.id.description == groceries })
        // A live note's title that no deleted note has: nothing to do, as before.
        try ok(["add", "r.peernote", "--title", "Z"], in: dir)
        let notDeleted = try Binary.run(["restore", "r.peernote", "Z"], in: dir)
        #expect(notDeleted.status == 0 && notDeleted.err.contains("is not deleted; nothing recorded"), "\(notDeleted.err)")
    }

    @Test("A list of candidate notes spells out titles that look alike (the same text in other Unicode scalars), and only those")
    func lookAlikeCandidates() throws {
        let dir = try TempDir()
        try ok(["new", "u.peernote"], in: dir)
        let nfc = try ok(["add", "u.peernote", "--title", "caf\u{E9}"], in: dir).trimmingCharacters(in: .newlines)
        let nfd = try ok(["add", "u.peernote", "--title", "cafe\u{301}"], in: dir).trimmingCharacters(in: .newlines)
        let plain = try ok(["add", "u.peernote", "--title", "tea"], in: dir).trimmingCharacters(in: .newlines)
        // A name that matches no title, not even in other letter case, and none closely.
        let r = try Binary.run(["edit", "u.peernote", "nothing like it", "--body", "x"], in: dir)
        #expect(r.status == 64)
        #expect(r.err == "peernote: u.peernote: no note matches \"nothing like it\"; notes: \(nfc.prefix(8)) \"caf\u{E9}\" (caf\\u{e9}), "
            + "\(nfd.prefix(8)) \"cafe\u{301}\" (cafe\\u{301}), \(plain.prefix(8)) \"tea\"\n", "\(r.err)")
        // Long look-alike titles: cut, and spelled out as cut (not an 836-byte line).
        let long = String(repeating: "\u{E9}", count: 300), longNFD = String(repeating: "e\u{301}", count: 300)
        try ok(["new", "l.peernote"], in: dir)
        try ok(["add", "l.peernote", "--title", long], in: dir)
        try ok(["add", "l.peernote", "--title", longNFD], in: dir)
        let cut = try Binary.run(["edit", "l.peernote", "nosuch", "--body", "y"], in: dir)
        #expect(cut.status == 64 && cut.err.contains("…\" (") && cut.err.unicodeScalars.count < 1_200, "\(cut.err.unicodeScalars.count) scalars")
    }

    @Test("import of a .peernote document says what it is and what to do instead (exit 65, nothing written); import from standard input names it <stdin>")
    func importOfADocument() throws {
        let dir = try TempDir()
        try ok(["new", "trip.peernote", "--title", "Trip"], in: dir)
        let r = try Binary.run(["import", "trip.peernote", "-o", "x.peernote"], in: dir)
        #expect(r.status == 65)
        #expect(r.err == "peernote: trip.peernote: is a .peernote document, not Markdown or JSON: import reads what export writes "
            + "(to copy a notebook, copy its file; to combine two copies, pnmerge merge)\n", "\(r.err)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("x.peernote")))
        let empty = try Binary.run(["import", "-", "-o", "e.peernote"], in: dir, stdin: "")
        #expect(empty.status == 0, "\(empty.err)")
        #expect(empty.err == "peernote: <stdin>: warning: it is empty; the notebook has no title and no notes\n", "\(empty.err)")
    }

    @Test("A --body-file that cannot be read names the option; FILE's spelling is checked before the body is read; a document read from standard input is <stdin> in messages")
    func bodyFileAndStdinNames() throws {
        let dir = try TempDir()
        try ok(["new", "n.peernote"], in: dir)
        let missing = try Binary.run(["add", "n.peernote", "--title", "x", "--body-file", "missing.txt"], in: dir)
        #expect(missing.status == 66 && missing.err == "peernote: missing.txt: No such file or directory (--body-file)\n", "\(missing.err)")
        let folder = try Binary.run(["add", "n.peernote", "--title", "x", "--body-file", "d/"], in: dir)
        #expect(folder.status == 64 && folder.err == "peernote: d/: a name ending in '/' names a folder; name a file, or - for standard input (--body-file)\n", "\(folder.err)")
        // FILE first: its refusal, not the body file's, and standard input is not read.
        let first = try Binary.run(["add", "x/", "--title", "x", "--body-file", "missing.txt"], in: dir)
        #expect(first.status == 64 && first.err == "peernote: x/: a name ending in '/' names a folder; name a .peernote file\n", "\(first.err)")
        let edit = try Binary.run(["edit", "", "x", "--body-file", "missing.txt"], in: dir)
        #expect(edit.status == 64 && edit.err == "peernote: the file name is empty: name a .peernote file\n", "\(edit.err)")
        let stdin = try Binary.run(["list", "-"], in: dir, stdin: "hello")
        #expect(stdin.status == 65 && stdin.err.hasPrefix("peernote: <stdin>: "), "\(stdin.err)")
    }

    @Test("new and import onto a symbolic link to a missing file say so (exit 73), not that the file exists, and write nothing through it")
    func danglingLink() throws {
        let dir = try TempDir()
        _ = try dir.write("in.md", "# A\n")
        try FileManager.default.createSymbolicLink(atPath: dir.file("dl.peernote"), withDestinationPath: "nowhere.peernote")
        let message = "peernote: dl.peernote: is a symbolic link to a file that does not exist; not written through it (remove the link, or name the file it points to)\n"
        for args in [["new", "dl.peernote"], ["import", "in.md", "-o", "dl.peernote"]] {
            let r = try Binary.run(args, in: dir)
            #expect(r.status == 73, "\(args): \(r.err)")
            #expect(r.err == message, "\(args): \(r.err)")
        }
        #expect(!FileManager.default.fileExists(atPath: dir.file("nowhere.peernote")))
        // A file that exists is still "already exists".
        try ok(["new", "n.peernote"], in: dir)
        #expect(try Binary.run(["new", "n.peernote"], in: dir).err == "peernote: n.peernote: already exists; refusing to overwrite it\n")
    }

    /// Tags, titles and authors are stored as typed and matched by their exact Unicode scalars
    /// (peernote(5), CONVENTIONS): "café" as U+00E9 and as "e" + U+0301 are two spellings.
    @Test("edit stores tags, titles and authors as typed, and names the stored spelling when only a look-alike matches")
    func exactSpellings() throws {
        let nfc = "caf\u{E9}", nfd = "cafe\u{301}", joseNFC = "Jos\u{E9}", joseNFD = "Jose\u{301}"
        func bytes(_ strings: [String]) -> [[UInt8]] { strings.map { Array($0.utf8) } }
        let dir = try TempDir()
        try ok(["new", "n.peernote", "--title", "T"], in: dir)
        let id = try ok(["add", "n.peernote", "--title", "x", "--tag", nfc, "--author", joseNFC], in: dir).trimmingCharacters(in: .newlines)
        // A second tag, not "no changes".
        try ok(["edit", "n.peernote", "x", "--add-tag", nfd], in: dir)
        #expect(bytes(try Document.open(dir.file("n.peernote")).notes[0].tags) == bytes([nfd, nfc]))
        // The author's name keeps its bytes.
        try ok(["edit", "n.peernote", "x", "--title", "y", "--author", joseNFD], in: dir)
        let authors = try Document.open(dir.file("n.peernote")).history.map(\.author)
        #expect(bytes(authors) == bytes(["tester", joseNFC, "tester", joseNFD]))
        // Removing one spelling leaves the other.
        try ok(["edit", "n.peernote", "y", "--remove-tag", nfd], in: dir)
        let before = try Document.open(dir.file("n.peernote"))
        #expect(bytes(before.notes[0].tags) == bytes([nfc]))
        // Removing it again: only the other spelling is there; refused, naming it, nothing recorded.
        let removed = try Binary.run(["edit", "n.peernote", "y", "--remove-tag", nfd], in: dir)
        #expect(removed.status == 64)
        #expect(removed.err.hasPrefix("peernote: n.peernote: note \(id.prefix(8)) has no tag"), "\(removed.err)")
        #expect(removed.err.contains("(cafe\\u{301})") && removed.err.contains("(caf\\u{e9})"), "\(removed.err)")
        #expect(removed.err.split(separator: "\n").count == 1, "\(removed.err)")
        #expect(try Document.open(dir.file("n.peernote")).changeCount == before.changeCount)
        // A title is found only as spelled; a look-alike is named, by its id.
        try ok(["edit", "n.peernote", "y", "--title", nfc], in: dir)
        let lookAlike = try Binary.run(["edit", "n.peernote", nfd, "--priority", "high"], in: dir)
        #expect(lookAlike.status == 64)
        #expect(lookAlike.err.contains("no note has the title") && lookAlike.err.contains("(caf\\u{e9})")
                && lookAlike.err.contains("name it by its id, \(id.prefix(8))"), "\(lookAlike.err)")
        try ok(["edit", "n.peernote", nfc, "--title", nfd], in: dir)
        let after = try Document.open(dir.file("n.peernote"))
        #expect(after.changeCount == before.changeCount + 2)
        #expect(bytes([after.notes[0].title]) == bytes([nfd]))
        // import keeps both spellings of a tag, as two tags.
        let json = "{\"notes\": [{\"title\": \"t\", \"tags\": [\"\(nfc)\", \"\(nfd)\", \"\(nfc)\"]}]}"
        let source = try dir.write("in.json", json)
        try ok(["import", source, "-o", "imported.peernote"], in: dir)
        #expect(bytes(try Document.open(dir.file("imported.peernote")).notes[0].tags) == bytes([nfd, nfc]))
        let exported = try ok(["export", "imported.peernote", "--format", "json"], in: dir)
        // Byte for byte (String.contains would match a look-alike).
        let line = Array("\"tags\": [\n        \"\(nfd)\",\n        \"\(nfc)\"\n      ]".utf8), out = Array(exported.utf8)
        #expect(out.indices.contains { out[$0...].starts(with: line) }, "\(exported)")
    }

    /// Whether `text` holds `part` byte for byte (`String.contains` matches a look-alike too).
    func holds(_ text: String, _ part: String) -> Bool {
        let t = Array(text.utf8), p = Array(part.utf8)
        return t.indices.contains { t[$0...].starts(with: p) }
    }

    @Test("list spells out a note's tags that are the same text in other scalars; other tags print as before")
    func listSpellsLookAlikeTags() throws {
        let nfc = "caf\u{E9}", nfd = "cafe\u{301}"
        let dir = try TempDir()
        try ok(["new", "n.peernote", "--title", "T"], in: dir)
        try ok(["add", "n.peernote", "--title", "both", "--tag", nfc, "--tag", nfd, "--tag", "x"], in: dir)
        try ok(["add", "n.peernote", "--title", "one", "--tag", nfc, "--tag", "x"], in: dir)
        let lines = try ok(["list", "n.peernote"], in: dir).split(separator: "\n").map(String.init)
        #expect(lines.count == 2)
        #expect(holds(lines[0], "  \(nfd) (cafe\\u{301}), \(nfc) (caf\\u{e9}), x  "), "\(lines[0])")
        #expect(holds(lines[1], "  \(nfc), x  ") && !lines[1].contains("\\u{"), "\(lines[1])")
    }

    /// "xệ" in three spellings, all canonically equivalent: U+1EC7; "e", U+0323, U+0302; "e", U+0302, U+0323.
    static let xe = (one: "x\u{1EC7}", belowFirst: "xe\u{323}\u{302}", aboveFirst: "xe\u{302}\u{323}")

    @Test("A title that only look-alikes match names every note that has one, at most ten")
    func everyLookAlikeTitle() throws {
        let dir = try TempDir()
        try ok(["new", "n.peernote", "--title", "T"], in: dir)
        let first = try ok(["add", "n.peernote", "--title", Self.xe.one], in: dir).prefix(8)
        let second = try ok(["add", "n.peernote", "--title", Self.xe.belowFirst], in: dir).prefix(8)
        let r = try Binary.run(["edit", "n.peernote", Self.xe.aboveFirst, "--body", "z"], in: dir)
        #expect(r.status == 64)
        #expect(r.err.split(separator: "\n").count == 1, "\(r.err)")
        #expect(holds(r.err, "\(first) \"\(Self.xe.one)\" (x\\u{1ec7})"), "\(r.err)")
        #expect(holds(r.err, "\(second) \"\(Self.xe.belowFirst)\" (xe\\u{323}\\u{302})"), "\(r.err)")
        // Eleven more: ten are named, then how many there are in all.
        var ids = [String(first), String(second)]
        for _ in 0 ..< 11 { ids.append(String(try ok(["add", "n.peernote", "--title", Self.xe.one], in: dir).prefix(8))) }
        let many = try Binary.run(["edit", "n.peernote", Self.xe.aboveFirst, "--body", "z"], in: dir)
        #expect(many.status == 64)
        #expect(ids.filter { many.err.contains($0) }.count == 10, "\(many.err)")
        #expect(many.err.contains(", … (13 in all)"), "\(many.err)")
    }

    @Test("A --remove-tag that only look-alikes match names every one of the note's tags that is one")
    func everyLookAlikeTag() throws {
        let dir = try TempDir()
        try ok(["new", "n.peernote", "--title", "T"], in: dir)
        try ok(["add", "n.peernote", "--title", "N", "--tag", Self.xe.one, "--tag", Self.xe.belowFirst, "--tag", "x"], in: dir)
        let before = try Document.open(dir.file("n.peernote")).changeCount
        let r = try Binary.run(["edit", "n.peernote", "N", "--remove-tag", Self.xe.aboveFirst], in: dir)
        #expect(r.status == 64)
        #expect(r.err.split(separator: "\n").count == 1, "\(r.err)")
        #expect(holds(r.err, "\"\(Self.xe.one)\" (x\\u{1ec7})"), "\(r.err)")
        #expect(holds(r.err, "\"\(Self.xe.belowFirst)\" (xe\\u{323}\\u{302})"), "\(r.err)")
        #expect(try Document.open(dir.file("n.peernote")).changeCount == before)
    }
}
