import Foundation
import PeerNote
import Testing
import TestSupport

/// Runs `pnmerge`, built beside `peernote`, with the test environment.
func runPNMerge(_ args: [String], in dir: TempDir) throws -> RunResult {
    try Tool.pnmerge.run(args, in: dir.path, environment: Binary.environment(["TZ": "UTC"]))
}

/// `show`, `search`, `list` filters, `conflicts` and `resolve`, and how notes are named, run
/// through the built binaries on the fixtures and on copies diverged in the test.
@Suite("peernote show, search, list filters, conflicts, resolve")
struct ReadingCommandsTests {
    static let fixtures = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures").path

    /// Runs peernote (local times in UTC) and expects exit 0; returns its standard output.
    @discardableResult
    func ok(_ args: [String], in dir: TempDir, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let r = try Binary.run(args, in: dir, env: ["TZ": "UTC"])
        #expect(r.status == 0, "peernote \(args.joined(separator: " ")): \(r.err)", sourceLocation: sourceLocation)
        return r.out
    }

    /// Runs peernote and expects it to fail with `status`, one line on standard error, nothing on
    /// standard output, and `file` (when given) unchanged byte for byte; returns the line.
    @discardableResult
    func refused(_ args: [String], status: Int32 = 64, in dir: TempDir, file: String? = nil,
                 sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let before = try file.map { try dir.bytes($0) }
        let r = try Binary.run(args, in: dir, env: ["TZ": "UTC"])
        #expect(r.status == status, "peernote \(args.joined(separator: " ")): \(r.status) \(r.err)", sourceLocation: sourceLocation)
        #expect(r.out.isEmpty, "nothing on stdout: \(r.out)", sourceLocation: sourceLocation)
        #expect(r.err.split(separator: "\n").count == 1, "one line: \(r.err)", sourceLocation: sourceLocation)
        if let file, let before { #expect(try dir.bytes(file) == before, "\(file) unchanged", sourceLocation: sourceLocation) }
        return r.err
    }

    func json(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(text.utf8))
    }

    /// `m.peernote`: the bundled alice and bob copies merged, with four open conflicts: a move
    /// ("Customer feedback"), a title ("Release 2.4 …"), a priority ("Hiring") and a note
    /// deleted while edited ("Decisions").
    @discardableResult
    func merged(_ dir: TempDir) throws -> String {
        let r = try runPNMerge(["merge", "\(Self.fixtures)/meeting-alice.peernote", "\(Self.fixtures)/meeting-bob.peernote", "-o", "m.peernote"], in: dir)
        try #require(r.status == 0, "\(r.err)")
        return r.out
    }

    /// A notebook with "Dentist" (tags health, todo; high), "Groceries" (body "milk\nEggs\neggnog") and "Plans".
    func notebook(_ dir: TempDir) throws -> (dentist: String, groceries: String) {
        try ok(["new", "n.peernote", "--title", "Home"], in: dir)
        let dentist = try ok(["add", "n.peernote", "--title", "Dentist", "--tag", "health", "--tag", "todo", "--priority", "high",
                              "--body", "call Monday\nbring the card"], in: dir).trimmingCharacters(in: .newlines)
        let groceries = try ok(["add", "n.peernote", "--title", "Groceries", "--body", "milk\nEggs\neggnog", "--tag", "todo"], in: dir)
            .trimmingCharacters(in: .newlines)
        try ok(["add", "n.peernote", "--title", "Plans", "--body", "nothing about eggs"], in: dir)
        return (dentist, groceries)
    }

    // MARK: show

    @Test("show prints a note's title, id, priority, tags, creation time and body; --json has the note's keys, index and conflicts")
    func showNote() throws {
        let dir = try TempDir()
        let (dentist, _) = try notebook(dir)
        let text = try ok(["show", "n.peernote", "Dentist"], in: dir)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines[0] == "Dentist")
        #expect(lines[1].hasPrefix("id \(dentist) · priority high · tags health, todo · created 20"), "\(lines[1])")
        #expect(Array(lines[2...]) == ["", "call Monday", "bring the card", ""])
        #expect(!text.contains("Conflicts"))
        let object = try #require(try json(try ok(["show", "n.peernote", dentist.prefix(6).description, "--json"], in: dir)) as? [String: Any])
        #expect(object["id"] as? String == dentist && object["title"] as? String == "Dentist")
        #expect(object["body"] as? String == "call Monday\nbring the card" && object["tags"] as? [String] == ["health", "todo"])
        #expect(object["priority"] as? String == "high" && object["deleted"] as? Bool == false && object["index"] as? Int == 0)
        #expect((object["conflicts"] as? [Any])?.isEmpty == true)
        #expect((object["created"] as? String)?.hasSuffix("Z") == true)
    }

    @Test("show numbers a note's open conflicts and their values, each value with author and time, and names the resolving command")
    func showConflicts() throws {
        let dir = try TempDir()
        try merged(dir)
        let text = try ok(["show", "m.peernote", "Hiring"], in: dir)
        #expect(text.contains("""
            Conflicts (1):
              1. priority, showing low
                   1  high (Alice Martin, 
            """), "\(text)")
        #expect(text.contains("     2  low (Bob Okafor, "), "\(text)")
        let id = try #require(try Document.open(dir.file("m.peernote")).notes.first { $0.title == "Hiring" }?.id)
        #expect(text.hasSuffix("    resolve: peernote resolve m.peernote \(id.short) priority --pick N\n"), "\(text)")
        // A deleted note is shown, marked so, with its conflict: 1 keeps it deleted, 2 restores it.
        let deleted = try ok(["show", "m.peernote", "Decisions"], in: dir)
        #expect(deleted.contains(" · deleted · "), "\(deleted)")
        #expect(deleted.contains("1  keep it deleted (Bob Okafor") && deleted.contains("2  restore it, with the edits (Alice Martin"), "\(deleted)")
        // Read from standard input: no resolving command, which would name nothing.
        let r = try peernoteScript(#""$0" show - Hiring < m.peernote"#, in: dir)
        #expect(r.status == 0 && r.out.contains("1. priority") && !r.out.contains("resolve:"), "\(r.out) \(r.err)")
    }

    // MARK: note names

    @Test("a NOTE is found by its title in other letter case, by a former title, and a name that matches nothing gets the closest titles")
    func noteNames() throws {
        let dir = try TempDir()
        let (dentist, _) = try notebook(dir)
        #expect(try ok(["show", "n.peernote", "dentist"], in: dir).hasPrefix("Dentist\n"))
        #expect(try ok(["show", "n.peernote", "GROCERIES"], in: dir).hasPrefix("Groceries\n"))
        let typo = try refused(["show", "n.peernote", "Dentst"], in: dir)
        #expect(typo == "peernote: n.peernote: no note matches \"Dentst\"; did you mean: \(dentist.prefix(8)) \"Dentist\"?\n")
        // Nothing close: the notes are listed, as before.
        #expect(try refused(["show", "n.peernote", "Zebra crossing"], in: dir).contains("; notes: "))
        // Retitled: the old title finds it, and says which note it is now.
        try ok(["edit", "n.peernote", "Dentist", "--title", "Dentist at 9"], in: dir)
        let r = try Binary.run(["show", "n.peernote", "dentist"], in: dir)
        #expect(r.status == 0 && r.out.hasPrefix("Dentist at 9\n"), "\(r.out) \(r.err)")
        #expect(r.err == "peernote: n.peernote: \"dentist\" is a former title of note \(dentist.prefix(8)), now \"Dentist at 9\"\n")
        // An edit by a wrong name writes nothing.
        try refused(["edit", "n.peernote", "Dentst at 9", "--priority", "low"], in: dir, file: "n.peernote")
        // Two notes that differ only in letter case: neither is picked by a third spelling.
        try ok(["add", "n.peernote", "--title", "plans"], in: dir)
        #expect(try refused(["show", "n.peernote", "PLANS"], in: dir).contains("matches several notes"))
        #expect(try ok(["show", "n.peernote", "plans"], in: dir).hasPrefix("plans\n"))
    }

    // MARK: search

    @Test("search matches titles and body lines ignoring case, names the note and the line; --regex, --tag, --json; a bad regex is exit 64")
    func search() throws {
        let dir = try TempDir()
        let (dentist, groceries) = try notebook(dir)
        let g = groceries.prefix(8)
        let hits = try ok(["search", "n.peernote", "EGG"], in: dir)
        let plans = try #require(try Document.open(dir.file("n.peernote")).notes.first { $0.title == "Plans" }).id.short
        #expect(hits == """
            \(g)  "Groceries"  line 2: Eggs
            \(g)  "Groceries"  line 3: eggnog
            \(plans)  "Plans"  line 1: nothing about eggs

            """)
        #expect(try ok(["search", "n.peernote", "dent"], in: dir) == "\(dentist.prefix(8))  \"Dentist\"  title: Dentist\n")
        #expect(try ok(["search", "n.peernote", "EGG", "--case-sensitive"], in: dir).isEmpty)
        #expect(try ok(["search", "n.peernote", "^egg", "--regex"], in: dir) == "\(g)  \"Groceries\"  line 2: Eggs\n\(g)  \"Groceries\"  line 3: eggnog\n")
        #expect(try ok(["search", "n.peernote", "e", "--tag", "health"], in: dir).split(separator: "\n").allSatisfy { $0.hasPrefix(dentist.prefix(8)) })
        let array = try #require(try json(try ok(["search", "n.peernote", "card", "--json"], in: dir)) as? [[String: Any]])
        #expect(array.count == 1)
        #expect(array.first?["note"] as? String == dentist && array.first?["title"] as? String == "Dentist")
        #expect(array.first?["field"] as? String == "body" && array.first?["line"] as? Int == 2 && array.first?["text"] as? String == "bring the card")
        let title = try #require(try json(try ok(["search", "n.peernote", "plans", "--json"], in: dir)) as? [[String: Any]])
        #expect(title.first?["field"] as? String == "title" && title.first?["line"] is NSNull)
        #expect(try refused(["search", "n.peernote", "(unclosed", "--regex"], in: dir).hasPrefix("peernote: \"(unclosed\" is not a regular expression: "))
        #expect(try refused(["search", "n.peernote", "(unclosed", "--regex", "--json"], in: dir).contains("regular expression"))
    }

    // MARK: list filters

    @Test("list --tag (every one), --priority, --conflicts and --deleted keep the matching notes at their indexes; --json")
    func listFilters() throws {
        let dir = try TempDir()
        let (dentist, groceries) = try notebook(dir)
        let todo = try ok(["list", "n.peernote", "--tag", "todo"], in: dir).split(separator: "\n")
        #expect(todo.map { $0.split(separator: " ").prefix(2).joined(separator: " ") } == ["0 \(dentist.prefix(8))", "1 \(groceries.prefix(8))"])
        let both = try ok(["list", "n.peernote", "--tag", "todo", "--tag", "health"], in: dir).split(separator: "\n")
        #expect(both.count == 1 && both.first?.hasPrefix("0  \(dentist.prefix(8))") == true)
        let normal = try ok(["list", "n.peernote", "--priority", "normal"], in: dir).split(separator: "\n")
        #expect(normal.map { $0.prefix(1) } == ["1", "2"], "indexes among all the notes: \(normal)")
        #expect(try ok(["list", "n.peernote", "--conflicts"], in: dir).isEmpty)
        let array = try #require(try json(try ok(["list", "n.peernote", "--tag", "todo", "--json"], in: dir)) as? [[String: Any]])
        #expect(array.map { $0["id"] as? String } == [dentist, groceries])
        #expect(array.map { $0["index"] as? Int } == [0, 1])
        #expect(Set(array[0].keys) == ["id", "title", "body", "tags", "priority", "created", "deleted", "index"])
        try ok(["rm", "n.peernote", "Groceries"], in: dir)
        let deleted = try #require(try json(try ok(["list", "n.peernote", "--deleted", "--json"], in: dir)) as? [[String: Any]])
        #expect(deleted.count == 1 && deleted[0]["index"] is NSNull && deleted[0]["deleted"] as? Bool == true)
        // On merged copies: the notes with an open conflict.
        try merged(dir)
        let conflicted = try ok(["list", "m.peernote", "--conflicts"], in: dir)
        #expect(conflicted.split(separator: "\n").count == 3, "\(conflicted)")
        for title in ["Customer feedback", "Release 2.4 status", "Hiring"] { #expect(conflicted.contains(title)) }
        #expect(try ok(["list", "m.peernote", "--conflicts", "--deleted"], in: dir).contains("Decisions"))
    }

    // MARK: conflicts

    @Test("conflicts lists every open conflict grouped by note, values numbered with author and time; --json uses title, field, choices, resolve")
    func conflicts() throws {
        let dir = try TempDir()
        try merged(dir)
        let text = try ok(["conflicts", "m.peernote"], in: dir)
        let document = try Document.open(dir.file("m.peernote"))
        let hiring = try #require(document.notes.first { $0.title == "Hiring" }).id.short
        #expect(text.contains("""
            note \(hiring) "Hiring"
              1. priority, showing low
                   1  high (Alice Martin, 09:05)
                   2  low (Bob Okafor, 09:06)
                 resolve: peernote resolve m.peernote \(hiring) priority --pick N

            """), "\(text)")
        #expect(text.contains("1. title, showing \"Release 2.4 status (RC slipped to Friday)\""))
        #expect(text.contains("1. position (moved concurrently), showing it at index 0"))
        #expect(text.contains("\"Decisions\" (deleted)"))
        #expect(text.components(separatedBy: "resolve: peernote resolve").count - 1 == 4)
        let array = try #require(try json(try ok(["conflicts", "m.peernote", "--json"], in: dir)) as? [[String: Any]])
        #expect(array.count == 4)
        #expect(array.allSatisfy { $0["noteTitle"] == nil && $0["title"] is String && $0["choices"] is [Any] && $0["resolve"] is String })
        let priority = try #require(array.first { $0["field"] as? String == "priority" })
        let choices = try #require(priority["choices"] as? [[String: Any]])
        #expect(choices.map { $0["number"] as? Int } == [1, 2] && choices.map { $0["value"] as? String } == ["high", "low"])
        #expect((choices[0]["by"] as? [[String: Any]])?.first?["author"] as? String == "Alice Martin")
        // Nothing open: nothing printed, exit 0.
        let (_, _) = try notebook(dir)
        #expect(try ok(["conflicts", "n.peernote"], in: dir).isEmpty)
        #expect(try ok(["conflicts", "n.peernote", "--json"], in: dir) == "[]\n")
    }

    // MARK: resolve

    @Test("resolve --pick and --value close a conflict with one change that merges everywhere, and say what they resolved")
    func resolve() throws {
        let dir = try TempDir()
        try merged(dir)
        let r = try ok(["resolve", "m.peernote", "Hiring", "priority", "--pick", "1"], in: dir)
        let hiring = try #require(try Document.open(dir.file("m.peernote")).notes.first { $0.title == "Hiring" })
        #expect(r == "Resolved the priority conflict of note \(hiring.id.short) \"Hiring\": kept priority high (value 1).\n")
        #expect(hiring.priority == .high)
        try ok(["resolve", "m.peernote", "release 2.4 status (rc slipped to friday)", "title", "--value", "Release 2.4"], in: dir)
        let moved = try #require(try json(try ok(["resolve", "m.peernote", "Customer feedback", "position", "--pick", "2", "--json"], in: dir)) as? [String: Any])
        #expect(moved["field"] as? String == "position" && moved["choice"] as? Int == 2)
        try ok(["resolve", "m.peernote", "Decisions", "deleted", "--pick", "2"], in: dir)
        let document = try Document.open(dir.file("m.peernote"))
        #expect(document.conflicts.isEmpty, "\(document.conflicts)")
        #expect(document.notes.map(\.title).contains("Release 2.4") && document.notes.map(\.title).contains("Decisions"))
        #expect(document.notes.firstIndex { $0.title == "Customer feedback" } == Int(moved["value"] as? String ?? ""))
        // Each choice is a change: merged into bob's copy, the conflicts close there too.
        let bob = try dir.write("bob.peernote", "")
        try Data(contentsOf: URL(fileURLWithPath: "\(Self.fixtures)/meeting-bob.peernote")).write(to: URL(fileURLWithPath: bob))
        let merge = try runPNMerge(["merge", "bob.peernote", "m.peernote"], in: dir)
        #expect(merge.status == 0, "\(merge.err)")
        #expect(try Document.open(bob).conflicts.isEmpty)
        #expect(try Document.open(bob).notes.first { $0.id == hiring.id }?.priority == .high)
    }

    @Test("resolve refuses, with one line, exit 64 and the file unchanged: an unknown note, a field with no conflict, a bad field, a pick out of range, a bad value")
    func resolveRefusals() throws {
        let dir = try TempDir()
        try merged(dir)
        let hiring = try #require(try Document.open(dir.file("m.peernote")).notes.first { $0.title == "Hiring" }).id.short
        let f = "m.peernote"
        #expect(try refused(["resolve", f, "Hirng", "priority", "--pick", "1"], in: dir, file: f).contains("did you mean: \(hiring) \"Hiring\"?"))
        #expect(try refused(["resolve", f, "Hiring", "title", "--pick", "1"], in: dir, file: f)
            == "peernote: m.peernote: note \(hiring) has no open title conflict; its open conflicts: priority\n")
        #expect(try refused(["resolve", f, "Hiring", "colour", "--pick", "1"], in: dir, file: f)
            == "peernote: resolve: \"colour\" is not a field that holds conflicts: title, priority, position or deleted\n")
        #expect(try refused(["resolve", f, "Hiring", "priority", "--pick", "3"], in: dir, file: f)
            == "peernote: m.peernote: pick 3 is out of range: the priority conflict of note \(hiring) has 2 values, 1 to 2\n")
        #expect(try refused(["resolve", f, "Hiring", "priority", "--pick", "0"], in: dir, file: f).contains("out of range"))
        #expect(try refused(["resolve", f, "Hiring", "priority", "--value", "urgent"], in: dir, file: f).contains("is not a priority"))
        #expect(try refused(["resolve", f, "Customer feedback", "position", "--value", "9"], in: dir, file: f).contains("is not an index"))
        #expect(try refused(["resolve", f, "Decisions", "deleted", "--value", "maybe"], in: dir, file: f).contains("deleted (true) or restored (false)"))
        #expect(try refused(["resolve", f, "Hiring", "priority"], in: dir, file: f).contains("--pick N"))
        #expect(try refused(["resolve", f, "Hiring", "priority", "--pick", "1", "--value", "low"], in: dir, file: f).contains("not both"))
    }

    @Test("an edit that closes a conflict says so on standard error: edit, move, rm, restore, title")
    func editsThatCloseConflicts() throws {
        let dir = try TempDir()
        try merged(dir)
        let document = try Document.open(dir.file("m.peernote"))
        let hiring = try #require(document.notes.first { $0.title == "Hiring" }).id.short
        let edit = try Binary.run(["edit", "m.peernote", "Hiring", "--priority", "normal"], in: dir)
        #expect(edit.status == 0)
        #expect(edit.err == "peernote: m.peernote: the priority conflict of note \(hiring) \"Hiring\" is closed: its priority is normal on every copy this merges into\n")
        let move = try Binary.run(["move", "m.peernote", "Customer feedback", "--to", "3"], in: dir)
        #expect(move.status == 0 && move.err.contains("the position conflict of note ") && move.err.contains("it is at index 3"), "\(move.err)")
        let rm = try Binary.run(["rm", "m.peernote", "Decisions"], in: dir)
        #expect(rm.status == 0 && rm.err.contains("the deleted conflict of note ") && rm.err.contains("it stays deleted"), "\(rm.err)")
        // An edit that closes nothing says nothing.
        let quiet = try Binary.run(["edit", "m.peernote", "Hiring", "--add-tag", "x"], in: dir)
        #expect(quiet.status == 0 && quiet.err.isEmpty, "\(quiet.err)")
        let left = try Document.open(dir.file("m.peernote")).conflicts.map(\.field)
        #expect(left == [.title])
        // restore settles a deletion the other way.
        let other = try TempDir()
        try merged(other)
        let restore = try Binary.run(["restore", "m.peernote", "Decisions"], in: other)
        #expect(restore.status == 0 && restore.err.contains("the deleted conflict of note ") && restore.err.contains("it is restored, with the edits"),
                "\(restore.err)")
    }

    // MARK: pnmerge

    @Test("pnmerge merge ends each conflict it lists with the command that resolves it; its JSON keys a conflict's note title as title")
    func mergeNamesResolvingCommand() throws {
        let dir = try TempDir()
        let report = try merged(dir)
        let conflictLines = report.split(separator: "\n").filter { $0.hasPrefix("  note \"") }
        #expect(conflictLines.count == 4)
        #expect(conflictLines.allSatisfy { $0.contains("; resolve: peernote resolve m.peernote ") }, "\(report)")
        let json = try runPNMerge(["merge", "\(Self.fixtures)/meeting-alice.peernote", "\(Self.fixtures)/meeting-bob.peernote", "-o", "j.peernote", "--json"], in: dir)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any])
        let conflicts = try #require(object["conflicts"] as? [[String: Any]])
        #expect(conflicts.count == 4 && conflicts.allSatisfy { $0["noteTitle"] == nil && $0["title"] is String && $0["resolve"] is String })
        // A dry run writes no file: no command to name.
        let dry = try runPNMerge(["merge", "--dry-run", "\(Self.fixtures)/meeting-alice.peernote", "\(Self.fixtures)/meeting-bob.peernote"], in: dir)
        #expect(dry.status == 0 && !dry.out.contains("resolve:"), "\(dry.out)")
    }

    @Test("pnmerge show ends each conflict line with the resolving command, except for a notebook as it was at a change")
    func pnmergeShowNamesResolvingCommand() throws {
        let dir = try TempDir()
        try merged(dir)
        let show = try runPNMerge(["show", "m.peernote"], in: dir)
        #expect(show.status == 0 && show.out.components(separatedBy: "; resolve: peernote resolve m.peernote ").count - 1 == 4, "\(show.out)")
        // A change after the merge: the notebook just after it has the conflicts too.
        try ok(["add", "m.peernote", "--title", "After"], in: dir)
        let head = try #require(try Document.open(dir.file("m.peernote")).heads.first)
        let at = try runPNMerge(["show", "m.peernote", "--at", head.description], in: dir)
        #expect(at.status == 0 && at.out.contains("Conflicts (") && !at.out.contains("resolve:"), "\(at.out) \(at.err)")
    }

    @Test("a conflict on the notebook's title, made on copies diverged here, is listed under notebook and closed by peernote title, which says so")
    func notebookTitleConflict() throws {
        let dir = try TempDir()
        try ok(["new", "a.peernote", "--title", "Home"], in: dir)
        try FileManager.default.copyItem(atPath: dir.file("a.peernote"), toPath: dir.file("b.peernote"))
        try ok(["title", "a.peernote", "House"], in: dir)
        try ok(["title", "b.peernote", "Flat"], in: dir)
        let merge = try runPNMerge(["merge", "a.peernote", "b.peernote"], in: dir)
        #expect(merge.status == 0 && merge.out.contains("; resolve: peernote title a.peernote TITLE"), "\(merge.out)")
        let list = try ok(["conflicts", "a.peernote"], in: dir)
        #expect(list.hasPrefix("notebook\n  1. title, showing "), "\(list)")
        #expect(list.contains("   resolve: peernote title a.peernote TITLE\n"), "\(list)")
        let json = try #require(try json(try ok(["conflicts", "a.peernote", "--json"], in: dir)) as? [[String: Any]])
        #expect(json.count == 1 && json[0]["field"] is NSNull && json[0]["title"] is NSNull && json[0]["note"] is NSNull)
        let title = try Binary.run(["title", "a.peernote", "Home"], in: dir)
        #expect(title.status == 0)
        #expect(title.err == "peernote: a.peernote: the conflict on the notebook's title is closed: it is \"Home\" on every copy this merges into\n")
        #expect(try ok(["conflicts", "a.peernote"], in: dir).isEmpty)
    }

    @Test("pnmerge show and peernote export write a note with the same renderer: the same keys, U+2028 escaped in both")
    func oneNotebookRenderer() throws {
        let dir = try TempDir()
        try ok(["new", "s.peernote"], in: dir)
        try ok(["add", "s.peernote", "--title", "Line\u{2028}separator", "--body", "a\u{2029}b"], in: dir)
        let show = try runPNMerge(["show", "s.peernote", "--format", "json"], in: dir)
        let export = try ok(["export", "s.peernote", "--format", "json"], in: dir)
        for text in [show.out, export] {
            #expect(text.contains("\"Line\\u2028separator\"") && text.contains("\"a\\u2029b\""), "\(text)")
        }
        let shown = try #require(try json(show.out) as? [String: Any])
        #expect(shown["conflicts"] is [Any])
        #expect(show.out.replacingOccurrences(of: ",\n  \"conflicts\": []", with: "") == export)
    }

    @Test("pnmerge compact --json reports every file, a failed one with its error")
    func compactJSON() throws {
        let dir = try TempDir()
        try ok(["new", "c.peernote"], in: dir)
        try ok(["add", "c.peernote", "--title", "A"], in: dir)
        _ = try dir.write("bad.peernote", "not a notebook")
        let r = try runPNMerge(["compact", "c.peernote", "bad.peernote", "--json"], in: dir)
        #expect(r.status == 65, "\(r.err)")
        let array = try #require(try json(r.out) as? [[String: Any]])
        #expect(array.map { $0["file"] as? String } == ["c.peernote", "bad.peernote"])
        #expect(array[0]["written"] as? Bool == true && (array[0]["bytesAfter"] as? Int ?? 0) > 0 && array[0]["error"] is NSNull)
        #expect(array[1]["written"] as? Bool == false && (array[1]["error"] as? String)?.contains("bad.peernote") == true)
        let again = try runPNMerge(["compact", "c.peernote", "--json"], in: dir)
        let unchanged = try json(again.out) as? [[String: Any]]
        #expect(again.status == 0 && unchanged?.first?["written"] as? Bool == false)
    }
}
