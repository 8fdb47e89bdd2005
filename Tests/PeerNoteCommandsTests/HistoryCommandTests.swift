import Foundation
import PeerNote
import PeerNoteCLISupport
import Testing
import TestSupport

/// `peernote log`, `blame`, `revert` and `edit --editor`'s header, through the built binaries,
/// on the bundled fixtures and on diverged copies.
@Suite("peernote log, blame, revert, whole-note editing (end to end)")
struct HistoryCommandTests {
    static let fixtures = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures").path

    @discardableResult
    func ok(_ args: [String], in dir: TempDir, env: [String: String] = [:], sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let r = try Binary.run(args, in: dir, env: env)
        #expect(r.status == 0, "peernote \(args.joined(separator: " ")) failed: \(r.err)", sourceLocation: sourceLocation)
        return r.out
    }

    /// Runs the built `pnmerge` (beside `peernote`).
    func pnmerge(_ args: [String], in dir: TempDir) throws -> RunResult {
        try Tool.pnmerge.run(args, in: dir.path, environment: Binary.environment([:]))
    }

    func jsonArray(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [[String: Any]] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]], sourceLocation: sourceLocation)
    }

    func copyFixture(_ name: String, to dir: TempDir, as target: String? = nil) throws -> String {
        let path = dir.file(target ?? name)
        try FileManager.default.copyItem(atPath: Self.fixtures + "/" + name, toPath: path)
        return path
    }

    /// A notebook with one note "Plan"; returns its id.
    func notebook(_ dir: TempDir, body: String = "passport\ncharger\ntickets") throws -> String {
        try ok(["new", "n.peernote", "--title", "Trip"], in: dir)
        return try ok(["add", "n.peernote", "--title", "Plan", "--body", body, "--tag", "todo"], in: dir).trimmingCharacters(in: .newlines)
    }

    /// The newest change's full id, as `log --json` gives it.
    func newestChange(_ dir: TempDir) throws -> String {
        let log = try jsonArray(try ok(["log", "n.peernote", "--json"], in: dir))
        return try #require(log.first?["short"] as? String)
    }

    // MARK: log

    @Test("log on a fixture: every change newest first, with what it did; log NOTE only the note's changes; --json keys as pnmerge log's plus notes")
    func logOnFixture() throws {
        let dir = try TempDir()
        let file = Self.fixtures + "/meeting.peernote"
        let document = try Document.open(file)
        let text = try ok(["log", file], in: dir)
        #expect(text.components(separatedBy: "\nchange ").count == document.changeCount)
        #expect(text.hasPrefix("change "))
        let json = try jsonArray(try ok(["log", file, "--json"], in: dir))
        #expect(json.count == document.changeCount)
        let pnmergeLog = try jsonArray(try pnmerge(["log", file, "--json"], in: dir).out)
        #expect(Set(json.first?.keys.map { $0 } ?? []) == Set(pnmergeLog.first?.keys.map { $0 } ?? []))
        #expect(json.first?.keys.contains("notes") == true)
        #expect(Set(json.compactMap { $0["id"] as? String }) == Set(pnmergeLog.compactMap { $0["id"] as? String }))

        // One note: only the changes whose notes list it.
        let hiring = try #require(document.notes.first { $0.title == "Hiring" })
        let touching = json.filter { entry in
            ((entry["notes"] as? [[String: Any]]) ?? []).contains { $0["note"] as? String == hiring.id.description }
        }
        let ofNote = try jsonArray(try ok(["log", file, "Hiring", "--json"], in: dir))
        #expect(!ofNote.isEmpty)
        #expect(ofNote.compactMap { $0["id"] as? String } == touching.compactMap { $0["id"] as? String })
        let noteText = try ok(["log", file, "hiring".capitalized], in: dir)
        #expect(noteText.components(separatedBy: "\nchange ").count == ofNote.count)
        #expect(noteText.contains("\"Hiring\""))

        // A deleted note has a history too.
        let deleted = try #require(document.deletedNotes.first)
        let ofDeleted = try jsonArray(try ok(["log", file, deleted.id.short, "--json"], in: dir))
        let kinds = ofDeleted.compactMap { ($0["notes"] as? [[String: Any]])?.first { $0["note"] as? String == deleted.id.description }?["change"] as? String }
        #expect(kinds.first == "deleted")
        #expect(kinds.last == "added")
    }

    @Test("pnmerge log --json lists the notes each change touched")
    func pnmergeLogNotes() throws {
        let dir = try TempDir()
        let id = try notebook(dir)
        try ok(["edit", "n.peernote", "Plan", "--priority", "high"], in: dir)
        let json = try jsonArray(try pnmerge(["log", "n.peernote", "--json"], in: dir).out)
        let notes = try #require(json.first?["notes"] as? [[String: Any]])
        #expect(notes.count == 1)
        #expect(notes.first?["note"] as? String == id)
        #expect(notes.first?["title"] as? String == "Plan")
        #expect(notes.first?["change"] as? String == "edited")
        #expect(notes.first?["summary"] as? String == "priority high \"Plan\"")
        #expect((json.last?["notes"] as? [Any])?.isEmpty == true, "creating the notebook touched no note")
    }

    @Test("log and blame of a note that is not there: one line, exit 64, nothing on standard output")
    func unknownNote() throws {
        let dir = try TempDir()
        _ = try notebook(dir)
        for command in ["log", "blame"] {
            let r = try Binary.run([command, "n.peernote", "Nope"], in: dir)
            #expect(r.status == 64)
            #expect(r.out.isEmpty)
            #expect(r.err.hasPrefix("peernote: n.peernote: no note matches \"Nope\""), "\(r.err)")
            #expect(r.err.split(separator: "\n").count == 1)
        }
    }

    // MARK: blame

    @Test("blame: each line with the change, author and time of its last edit; --json")
    func blame() throws {
        let dir = try TempDir()
        _ = try notebook(dir)
        let created = try newestChange(dir)
        try ok(["edit", "n.peernote", "Plan", "--body", "passport\nphone charger\ntickets", "--author", "Bob"], in: dir)
        let edited = try newestChange(dir)
        let text = try ok(["blame", "n.peernote", "Plan"], in: dir)
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        #expect(lines[0].hasPrefix(created + " (tester "), "\(lines[0])")
        #expect(lines[0].hasSuffix(" 1) passport"))
        #expect(lines[1].hasPrefix(edited + " (Bob    "), "\(lines[1])")
        #expect(lines[1].hasSuffix(" 2) phone charger"))
        #expect(lines[2].hasPrefix(created))
        let json = try jsonArray(try ok(["blame", "n.peernote", "Plan", "--json"], in: dir))
        #expect(json.map { $0["text"] as? String } == ["passport", "phone charger", "tickets"])
        #expect(json.map { $0["short"] as? String } == [created, edited, created])
        #expect(json.map { $0["line"] as? Int } == [1, 2, 3])
        #expect(json[1]["author"] as? String == "Bob")
        #expect((json[1]["change"] as? String)?.hasPrefix(edited.split(separator: "@")[0] + "@") == true)
    }

    @Test("blame on a fixture gives one line per line of the body")
    func blameFixture() throws {
        let dir = try TempDir()
        let file = Self.fixtures + "/meeting.peernote"
        let document = try Document.open(file)
        let note = try #require(document.notes.first { $0.body.contains("\n") })
        let lines = try jsonArray(try ok(["blame", file, note.id.short, "--json"], in: dir))
        let expected = note.body.hasSuffix("\n") ? note.body.dropLast().components(separatedBy: "\n") : note.body.components(separatedBy: "\n")
        #expect(lines.compactMap { $0["text"] as? String } == expected)
    }

    // MARK: revert

    @Test("revert undoes a body edit, a retitle and a tag; reverting the revert redoes them; --json")
    func revertAndRevertAgain() throws {
        let dir = try TempDir()
        _ = try notebook(dir)
        try ok(["edit", "n.peernote", "Plan", "--title", "Packing", "--body", "passport\nsunscreen", "--remove-tag", "todo", "--add-tag", "beach", "-m", "Beach trip"], in: dir)
        let edit = try newestChange(dir)
        let out = try ok(["revert", "n.peernote", edit], in: dir)
        let lines = out.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasSuffix(" Revert \(edit): Beach trip") == true, "\(out)")
        #expect(lines.count == 2 && lines[1].contains("\"Plan\""), "\(out)")
        var document = try Document.open(dir.file("n.peernote"))
        #expect(document.notes.map(\.title) == ["Plan"])
        #expect(document.notes.first?.body == "passport\ncharger\ntickets")
        #expect(document.notes.first?.tags == ["todo"])
        #expect(document.history.last?.message == "Revert \(edit): Beach trip")

        let revert = try newestChange(dir)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(try ok(["revert", "n.peernote", revert, "--json"], in: dir).utf8)) as? [String: Any])
        #expect(Set(json.keys) == ["reverted", "id", "short", "message", "notes", "notices"])
        #expect((json["reverted"] as? [String])?.count == 1)
        #expect(json["message"] as? String == "Revert \(revert): Revert \(edit): Beach trip")
        document = try Document.open(dir.file("n.peernote"))
        #expect(document.notes.first?.title == "Packing")
        #expect(document.notes.first?.body == "passport\nsunscreen")
        #expect(document.notes.first?.tags == ["beach"])
    }

    @Test("revert of an added note deletes it; of a deletion restores it; of a move puts it back")
    func revertNotes() throws {
        let dir = try TempDir()
        _ = try notebook(dir)
        try ok(["add", "n.peernote", "--title", "Extra"], in: dir)
        let added = try newestChange(dir)
        try ok(["move", "n.peernote", "Extra", "--to", "0"], in: dir)
        let moved = try newestChange(dir)
        try ok(["revert", "n.peernote", moved], in: dir)
        #expect(try Document.open(dir.file("n.peernote")).notes.map(\.title) == ["Plan", "Extra"])
        try ok(["rm", "n.peernote", "Plan"], in: dir)
        let removed = try newestChange(dir)
        try ok(["revert", "n.peernote", removed, added], in: dir)
        let document = try Document.open(dir.file("n.peernote"))
        #expect(document.notes.map(\.title) == ["Plan"])
        #expect(document.deletedNotes.map(\.title) == ["Extra"])
    }

    @Test("A bad change id, a change the file lacks, a bad run: one line, exit 64, the file byte for byte as it was")
    func badChanges() throws {
        let dir = try TempDir()
        _ = try notebook(dir)
        let edit = try newestChange(dir)
        let replica = String(edit.split(separator: "@")[1])
        let before = try dir.bytes("n.peernote")
        let cases: [(String, String)] = [
            ("nonsense", "peernote: n.peernote: no change nonsense in this document (a change is named SEQ@REPLICA, as log shows it: 3@a11ce001)"),
            ("99@\(replica)", "peernote: n.peernote: no change 99@\(replica) in this document"),
            ("1@ffffffff", "peernote: n.peernote: no change 1@ffffffff in this document"),
            ("2-99@\(replica)", "peernote: n.peernote: no change "),
            ("5-2@\(replica)", "peernote: n.peernote: \"5-2@\(replica)\" is not a run of changes"),
        ]
        for (change, message) in cases {
            let r = try Binary.run(["revert", "n.peernote", edit, change], in: dir)
            #expect(r.status == 64, "\(change): \(r.err)")
            #expect(r.out.isEmpty)
            #expect(r.err.hasPrefix(message), "\(change): \(r.err)")
            #expect(r.err.split(separator: "\n").count == 1, "\(r.err)")
            #expect(try dir.bytes("n.peernote") == before)
        }
        let none = try Binary.run(["revert", "n.peernote"], in: dir)
        #expect(none.status == 64)
        #expect(try dir.bytes("n.peernote") == before)
    }

    @Test("A value written since is left as it is, with a line on standard error; nothing left to undo records nothing")
    func writtenSince() throws {
        let dir = try TempDir()
        _ = try notebook(dir)
        try ok(["edit", "n.peernote", "Plan", "--priority", "high"], in: dir)
        let high = try newestChange(dir)
        try ok(["edit", "n.peernote", "Plan", "--priority", "low", "--author", "Bob"], in: dir)
        let before = try dir.bytes("n.peernote")
        let r = try Binary.run(["revert", "n.peernote", high], in: dir)
        #expect(r.status == 0)
        #expect(r.out.isEmpty)
        #expect(r.err.contains("peernote: n.peernote: the priority of note "))
        #expect(r.err.contains(" was written since by Bob; left as it is\n"))
        #expect(r.err.hasSuffix("peernote: n.peernote: nothing left to undo in \(high); nothing recorded\n"), "\(r.err)")
        #expect(try dir.bytes("n.peernote") == before)
    }

    @Test("pnmerge merge ends with the command that reverts what it brought in; running it undoes the other copy's edits, mine stay")
    func mergeRevertLine() throws {
        let dir = try TempDir()
        _ = try notebook(dir)
        try ok(["add", "n.peernote", "--title", "Other", "--body", "x"], in: dir)
        try FileManager.default.copyItem(atPath: dir.file("n.peernote"), toPath: dir.file("usb.peernote"))
        try ok(["edit", "usb.peernote", "Plan", "--body", "passport\ncharger\ntickets\nsunscreen", "--add-tag", "beach"], in: dir)
        try ok(["add", "usb.peernote", "--title", "From the stick"], in: dir)
        try ok(["edit", "n.peernote", "Other", "--title", "Other (home)"], in: dir)
        let mine = try Document.open(dir.file("n.peernote")).notebook
        let merge = try pnmerge(["merge", "n.peernote", "usb.peernote"], in: dir)
        #expect(merge.status == 0, "\(merge.err)")
        let last = try #require(merge.out.split(separator: "\n").last.map(String.init))
        #expect(last.hasPrefix("To undo what it brought in: peernote revert n.peernote "), "\(merge.out)")
        let words = last.dropFirst("To undo what it brought in: peernote ".count).split(separator: " ").map(String.init)
        // Each peernote run on the stick is an editing session of its own (a replica): a run each.
        #expect(words.count == 4, "\(words)")
        try ok(words, in: dir)
        let after = try Document.open(dir.file("n.peernote")).notebook
        #expect(after.notes.map(\.title) == mine.notes.map(\.title))
        #expect(after.notes.map(\.body) == mine.notes.map(\.body))
        #expect(after.notes.map(\.tags) == mine.notes.map(\.tags))

        // JSON: the same command under "revert"; an up-to-date merge has none.
        let again = try pnmerge(["merge", "n.peernote", "usb.peernote", "--json"], in: dir)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(again.out.utf8)) as? [String: Any])
        #expect(report["upToDate"] as? Bool == true)
        #expect(report["revert"] is NSNull)
    }

    @Test("merge --json gives the revert command under \"revert\"; a dry run and a result written to standard output have none")
    func mergeRevertJSON() throws {
        let dir = try TempDir()
        let alice = Self.fixtures + "/meeting-alice.peernote", bob = Self.fixtures + "/meeting-bob.peernote"
        let text = try pnmerge(["merge", alice, bob, "-o", "t.peernote"], in: dir)
        let json = try pnmerge(["merge", alice, bob, "-o", "j.peernote", "--json"], in: dir)
        #expect(text.status == 0 && json.status == 0, "\(text.err)\(json.err)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any])
        let command = try #require(report["revert"] as? String)
        #expect(command.hasPrefix("peernote revert j.peernote "))
        #expect(text.out.hasSuffix("To undo what it brought in: " + command.replacingOccurrences(of: "j.peernote", with: "t.peernote") + "\n"))
        let dry = try pnmerge(["merge", alice, bob, "-o", "d.peernote", "--dry-run"], in: dir)
        #expect(dry.status == 0 && !dry.out.contains("To undo"), "\(dry.out)")
        let piped = try pnmerge(["merge", alice, bob, "-o", "-"], in: dir)
        #expect(piped.status == 0 && !piped.err.contains("To undo"), "\(piped.err)")
    }

    @Test("On the diverged fixtures: the revert command merge prints runs, Bob's deletion is undone, and the file stays readable by pnmerge")
    func mergeFixturesThenRevert() throws {
        let dir = try TempDir()
        let alice = try copyFixture("meeting-alice.peernote", to: dir)
        _ = try copyFixture("meeting-bob.peernote", to: dir)
        let merge = try pnmerge(["merge", "meeting-alice.peernote", "meeting-bob.peernote", "-o", "m.peernote"], in: dir)
        #expect(merge.status == 0, "\(merge.err)")
        let last = try #require(merge.out.split(separator: "\n").last.map(String.init))
        #expect(last.hasPrefix("To undo what it brought in: peernote revert m.peernote "), "\(merge.out)")
        let words = last.dropFirst("To undo what it brought in: peernote ".count).split(separator: " ").map(String.init)
        let out = try ok(words + ["--json"], in: dir)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any])
        #expect((json["reverted"] as? [String])?.count == 5, "Bob's five changes")
        let result = try Document.open(dir.file("m.peernote"))
        let aliceNotes = try Document.open(alice).notebook.notes
        #expect(Set(result.notes.map(\.id)) == Set(aliceNotes.map(\.id)), "\"Decisions\", which Bob deleted, is back")
        let validate = try pnmerge(["validate", "m.peernote"], in: dir)
        #expect(validate.status == 0, "\(validate.out)\(validate.err)")
    }

    // MARK: edit --editor

    @Test("edit --editor opens title, tags and priority above the body; each changed part is recorded as its own edit, in one change")
    func editWholeNote() throws {
        let dir = try TempDir()
        let id = try notebook(dir)
        let seen = dir.file("seen.txt")
        let script = try dir.write("editor.sh", """
            #!/bin/sh
            cp "$1" '\(seen)'
            sed -i -e 's/^Title: Plan$/Title: Packing list/' -e 's/^Tags: todo$/Tags: todo, beach, a\\\\,b/' -e 's/^Priority: normal$/Priority: HIGH/' -e 's/^charger$/phone charger/' "$1"
            """, executable: true)
        try ok(["edit", "n.peernote", "Plan", "--editor", "-m", "whole note"], in: dir, env: ["EDITOR": script])
        #expect(try String(contentsOfFile: seen, encoding: .utf8) == "Title: Plan\nTags: todo\nPriority: normal\n\npassport\ncharger\ntickets")
        let document = try Document.open(dir.file("n.peernote"))
        let note = try #require(document.notes.first)
        #expect(note.id.description == id)
        #expect(note.title == "Packing list")
        #expect(note.tags == ["a,b", "beach", "todo"])
        #expect(note.priority == .high)
        #expect(note.body == "passport\nphone charger\ntickets")
        let entry = try #require(document.history.last)
        #expect(entry.message == "whole note")
        #expect(entry.summary.contains("retitled \"Packing list\""))
        #expect(entry.summary.contains("tagged "))
        #expect(entry.summary.contains("priority high"))
        #expect(entry.summary.contains("edited (+"))
    }

    @Test("edit --editor: options fill the header in; an untouched header line changes nothing, so a title conflict stays open")
    func editorPrefilledAndConflicts() throws {
        let dir = try TempDir()
        _ = try copyFixture("meeting-alice.peernote", to: dir)
        _ = try copyFixture("meeting-bob.peernote", to: dir)
        let merged = try pnmerge(["merge", "meeting-alice.peernote", "meeting-bob.peernote", "-o", "n.peernote"], in: dir)
        try #require(merged.status == 0, "\(merged.err)")
        let before = try Document.open(dir.file("n.peernote"))
        let conflicted = try #require(before.conflicts.first { if case .noteTitle = $0 { true } else { false } }?.note)
        let seen = dir.file("seen.txt")
        let script = try dir.write("editor.sh", "#!/bin/sh\ncp \"$1\" '\(seen)'\nprintf 'more\\n' >> \"$1\"\n", executable: true)
        try ok(["edit", "n.peernote", conflicted.description, "--editor", "--priority", "low", "--add-tag", "x"], in: dir, env: ["EDITOR": script])
        let header = try String(contentsOfFile: seen, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).prefix(4).map(String.init)
        #expect(header[2] == "Priority: low")
        #expect(header[1].hasPrefix("Tags: ") && header[1].hasSuffix("x"), "\(header[1])")
        #expect(header[3] == "")
        let after = try Document.open(dir.file("n.peernote"))
        #expect(after.note(conflicted)?.priority == .low)
        #expect(after.note(conflicted)?.tags.contains("x") == true)
        // The line break the editor's printf ended with is dropped: the body had none at its end.
        let body = try #require(after.note(conflicted)?.body)
        #expect(body == (before.note(conflicted)?.body ?? "") + "more")
        #expect(after.conflicts.contains { if case .noteTitle(let n, _, _) = $0 { n == conflicted } else { false } }, "the title conflict stays open")
    }

    @Test("edit --editor: a text without the header, or with a bad header line, is refused (65) with the text kept; nothing recorded")
    func editorBadHeader() throws {
        let dir = try TempDir()
        _ = try notebook(dir)
        let before = try dir.bytes("n.peernote")
        let tmp = try TempDir()
        let cases: [(String, String)] = [
            ("printf 'just a body' > \"$1\"", "line 1 (just a body) is not a header line"),
            ("sed -i 's/^Priority: normal$/Priority: urgent/' \"$1\"", "header line 3: priority \"urgent\" is not low, normal or high"),
            ("sed -i 's/^Priority: normal$/Colour: red/' \"$1\"", "line 3 (Colour: red) is not a header line"),
            ("sed -i 's/^Priority: normal$/Title: again/' \"$1\"", "the header has two Title: lines (line 3)"),
        ]
        for (command, message) in cases {
            let script = try dir.write("editor.sh", "#!/bin/sh\n\(command)\n", executable: true)
            let r = try Binary.run(["edit", "n.peernote", "Plan", "--editor"], in: dir, env: ["EDITOR": script, "TMPDIR": tmp.path])
            #expect(r.status == 65, "\(command): \(r.err)")
            #expect(r.err.hasPrefix("peernote: n.peernote: the edited text: \(message)"), "\(r.err)")
            #expect(r.err.contains("; nothing was recorded (the edited text is kept in \(tmp.path)/peernote-"), "\(r.err)")
            #expect(r.err.split(separator: "\n").count == 1)
            #expect(try dir.bytes("n.peernote") == before)
            #expect(try tmp.entries().count == 1, "the edited text is kept")
            for entry in try tmp.entries() { try FileManager.default.removeItem(atPath: tmp.file(entry)) }
        }
    }
}
