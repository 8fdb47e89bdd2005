import Foundation
import PeerNote
import PeerNoteCLISupport
import ArgumentParser
import Testing
import TestSupport
@testable import PNMergeCommands

@Suite("validate, inspect, show, log, diff (in-process)")
struct CommandTests {
    @Test("Every subcommand names itself, so that ArgumentParser does not derive each name from its type's name at every start")
    func subcommandsNameThemselves() {
        let unnamed = PNMerge.configuration.subcommands.filter { $0.configuration.commandName == nil }.map { "\($0)" }
        #expect(unnamed.isEmpty, "subcommands without commandName: \(unnamed)")
        #expect(PNMerge.configuration.subcommands.count >= 12)
    }

    // MARK: validate

    @Test("validate: valid files exit 0; a damaged file gets 'FILE: offset N: …' on stderr and exit 65")
    func validate() throws {
        let dir = try TempDir()
        let s = try Diverged()
        try s.write(to: dir)
        let ok = pnmerge(["validate", dir.path("alice.peernote"), dir.path("bob.peernote")])
        #expect(ok.status == 0)
        #expect(ok.out == "\(dir.path("alice.peernote")): valid\n\(dir.path("bob.peernote")): valid\n")
        #expect(ok.err.isEmpty)

        var bytes = s.alice.save()
        bytes[bytes.count / 2] ^= 0x40
        let flipped = try dir.write(bytes, "flipped.peernote")
        let truncated = try dir.write(Array(s.alice.save().dropLast(7)), "truncated.peernote")
        let bad = pnmerge(["validate", dir.path("alice.peernote"), flipped, truncated])
        #expect(bad.status == ExitStatus.invalidInput.rawValue)
        let lines = bad.err.split(separator: "\n").map(String.init)
        #expect(lines.count == 2)
        #expect(lines[0].hasPrefix("\(flipped): offset "))
        #expect(lines[1].hasPrefix("\(truncated): offset "))
        #expect(lines[1].contains("truncated"))
        // The line is exactly the library's description of the load error.
        let expected = DocumentFileError.document(path: truncated, try #require(loadError(Array(s.alice.save().dropLast(7))))).description
        #expect(lines[1] == expected)
    }

    @Test("validate: missing only → 66; missing and damaged → 65")
    func validateExitRule() throws {
        let dir = try TempDir()
        try Diverged().write(to: dir)
        let missing = pnmerge(["validate", dir.path("alice.peernote"), dir.path("gone.peernote")])
        #expect(missing.status == ExitStatus.noInput.rawValue)
        #expect(missing.err == "\(dir.path("gone.peernote")): No such file or directory\n")
        let empty = try dir.write([], "empty.peernote")
        let both = pnmerge(["validate", dir.path("gone.peernote"), empty])
        #expect(both.status == ExitStatus.invalidInput.rawValue)
        #expect(both.err.contains("\(empty): offset 0: file is empty"))
    }

    @Test("validate --json: one object per file, error null when valid")
    func validateJSON() throws {
        let dir = try TempDir()
        let s = try Diverged()
        try s.write(to: dir)
        let truncated = try dir.write(Array(s.bob.save().prefix(20)), "short.peernote")
        let r = pnmerge(["validate", "--json", dir.path("bob.peernote"), truncated, dir.path("gone.peernote")])
        #expect(r.status == ExitStatus.invalidInput.rawValue)
        let array = try #require(try parseJSON(r.out) as? [[String: Any]])
        #expect(array.count == 3)
        #expect(array[0]["file"] as? String == dir.path("bob.peernote"))
        #expect(array[0]["valid"] as? Bool == true)
        #expect(array[0]["error"] is NSNull)
        #expect(array[1]["valid"] as? Bool == false)
        let error = try #require(array[1]["error"] as? [String: Any])
        #expect(error["offset"] is Int)
        #expect((error["message"] as? String)?.isEmpty == false)
        let gone = try #require(array[2]["error"] as? [String: Any])
        #expect(gone["offset"] is NSNull)
        #expect(gone["message"] as? String == "No such file or directory")
    }

    @Test("validate reads '-' from standard input, once")
    func validateStdin() throws {
        let s = try Diverged()
        let r = pnmerge(["validate", "-"], input: s.bob.save())
        #expect(r.status == 0)
        #expect(r.out == "<stdin>: valid\n")
        let twice = pnmerge(["validate", "-", "-"], input: s.bob.save())
        #expect(twice.status == ExitStatus.usage.rawValue)
    }

    // MARK: inspect

    @Test("inspect: identity, counts, replicas, heads, notes, conflicts and storage")
    func inspect() throws {
        let dir = try TempDir()
        let s = try Diverged()
        let merged = try s.merged()
        let bytes = merged.save()
        let path = try dir.write(bytes, "merged.peernote")
        let r = pnmerge(["inspect", "--json", path])
        #expect(r.status == 0)
        let o = try #require(try parseJSON(r.out) as? [String: Any])
        #expect(o["document"] as? String == Diverged.documentID.uuidString.lowercased())
        // The envelope's version (byte 9): 1 here, since the merge has conflicts (no state section).
        #expect(o["formatVersion"] as? Int == Int(bytes[9]) && bytes[9] == 1)
        #expect(o["fileSize"] as? Int == bytes.count)
        #expect(o["changes"] as? Int == merged.changeCount)
        #expect(o["operations"] as? Int == merged.operationCount)
        #expect(o["notes"] as? Int == 4)
        #expect(o["deletedNotes"] as? Int == 1)
        #expect(o["conflicts"] as? Int == 2)
        #expect(Set(o["authors"] as? [String] ?? []) == ["carol", "alice", "bob"])
        #expect((o["replicas"] as? [[String: Any]])?.count == 3)
        #expect(o["heads"] as? [String] == merged.heads.map(\.fullDescription))
        let storage = try #require(o["storage"] as? [String: Int])
        let report = try Document.storageReport(bytes)
        #expect(storage == ["history": report.historyBytes, "text": report.textBytes, "metadata": report.metadataBytes])

        let text = pnmerge(["inspect", path])
        #expect(text.status == 0)
        #expect(text.out.contains("document   0c4b36e2-6c55-4d9a-8f0e-2b9c3e7d5a11"))
        #expect(text.out.contains("notes      4 (1 deleted)"))
        #expect(text.out.contains("conflicts  2 open"))
        #expect(text.out.contains("changes    \(merged.changeCount) (\(merged.operationCount) operations)"))
    }

    @Test("inspect lists the first ten replicas and counts the rest by author when there are more than twelve; --json lists every one (not one line per peernote run)")
    func inspectManyReplicas() throws {
        let dir = try TempDir()
        for (count, shown) in [(12, 12), (13, 10)] {
            var doc = Document(title: "T", author: "ann")
            for k in 1 ..< count {
                doc = try Document.load(doc.save(.incremental))
                doc.author = k % 3 == 0 ? "bo" : "ann"
                doc.addNote(title: "n\(k)")
            }
            let path = try dir.write(doc.save(.incremental), "r\(count).peernote")
            let text = pnmerge(["inspect", path])
            #expect(text.status == 0, "\(text.err)")
            let lines = text.out.split(separator: "\n")
            #expect(lines.contains("replicas   \(count)"), "\(text.out)")
            #expect(lines.filter { $0.hasPrefix("  ") && !$0.hasPrefix("  …") }.count == shown, "\(text.out)")
            if count == 13 {
                // Replicas 11 and 12 (k = 10, 11: ann, ann) and 13 (k = 12: bo), after the ten listed.
                #expect(lines.contains("  … 3 more (ann 2, bo 1); --json lists every one"), "\(text.out)")
            } else {
                #expect(!text.out.contains("…"), "\(text.out)")
            }
            let json = try #require(try parseJSON(pnmerge(["inspect", "--json", path]).out) as? [String: Any])
            #expect((json["replicas"] as? [[String: Any]])?.count == count)
        }
    }

    // MARK: show

    @Test("show --format json: exactly the documented shape, notes in document order")
    func showJSON() throws {
        let s = try Diverged()
        let merged = try s.merged()
        let r = pnmerge(["show", "--format", "json", "-"], input: merged.save())
        #expect(r.status == 0)
        let o = try #require(try parseJSON(r.out) as? [String: Any])
        #expect(Set(o.keys) == ["id", "title", "notes", "conflicts"])
        #expect(o["title"] as? String == "Home")
        let notes = try #require(o["notes"] as? [[String: Any]])
        #expect(notes.map { $0["title"] as? String } == merged.notes.map(\.title))
        #expect(notes.map { $0["id"] as? String } == merged.notes.map(\.id.description))
        for n in notes { #expect(Set(n.keys) == ["id", "title", "body", "tags", "priority", "created"]) }
        let boat = try #require(notes.first { $0["title"] as? String == "Boat" })
        #expect(boat["body"] as? String == "wood")
        #expect(boat["tags"] as? [String] == ["dream"])
        #expect(boat["priority"] as? String == "low")
        #expect(boat["created"] as? String == "2024-03-01T10:05:00Z")
        #expect((o["conflicts"] as? [Any])?.count == 2)
    }

    @Test("show text and markdown")
    func showText() throws {
        let s = try Diverged()
        let bytes = try s.merged().save()
        let text = pnmerge(["show", "-"], input: bytes)
        #expect(text.status == 0)
        #expect(text.out.hasPrefix("Home\n====\n"))
        #expect(text.out.contains("\nPlan\n  priority high · created 2024-03-01 09:30\n  Monday: call Bob\n"))
        #expect(text.out.contains("\nBoat\n  priority low · tags dream · created 2024-03-01 10:05\n  wood\n"))
        #expect(text.out.contains("Conflicts (2):"))

        let md = pnmerge(["show", "--format", "markdown", "-"], input: bytes)
        #expect(md.status == 0)
        #expect(md.out.hasPrefix("# Home\n"))
        #expect(md.out.contains("\n## Plan\n\nPriority: high · Created: 2024-03-01 09:30\n\nMonday: call Bob\n"))
        #expect(md.out.contains("\n## Boat\n\nPriority: low · Tags: dream · Created: 2024-03-01 10:05\n\nwood\n"))
        #expect(md.out.contains("**Conflicts**"))
    }

    @Test("show of a notebook larger than the chunks it is written in: every note, in order, in each format")
    func showLargeNotebook() throws {
        let doc = Document(title: "Many")
        var bodies: [String] = []
        for i in 0 ..< 600 {
            let body = "Body of note \(i): " + String(repeating: "text \(i) ", count: 20)
            bodies.append(body)
            doc.addNote(title: "N\(i)", body: body, tags: ["t\(i % 4)"], created: Date(timeIntervalSince1970: 1_700_000_000))
        }
        let bytes = doc.save()
        let text = pnmerge(["show", "-"], input: bytes)
        #expect(text.status == 0)
        #expect(text.out.utf8.count > 2 << 16)
        let expected = "Many\n====\n" + bodies.enumerated().map { i, body in
            "\nN\(i)\n  priority normal · tags t\(i % 4) · created 2023-11-14 22:13\n  \(body)\n"
        }.joined()
        #expect(text.out == expected)

        let md = pnmerge(["show", "--format", "markdown", "-"], input: bytes)
        #expect(md.status == 0)
        #expect(md.out.utf8.count > 2 << 16)
        #expect(md.out.components(separatedBy: "\n## N").count == 601)
        #expect(md.out.hasSuffix("\n\n" + bodies[599] + "\n"))

        let json = pnmerge(["show", "--format", "json", "-"], input: bytes)
        #expect(json.status == 0)
        let o = try #require(try parseJSON(json.out) as? [String: Any])
        let notes = try #require(o["notes"] as? [[String: Any]])
        #expect(notes.map { $0["body"] as? String } == bodies)
        #expect(notes.map { $0["title"] as? String } == (0 ..< 600).map { "N\($0)" })
    }

    @Test("show --at shows the notebook as it was after a past change; an unknown change is a usage error")
    func showAt() throws {
        let s = try Diverged()
        let merged = try s.merged()
        let genesis = merged.genesis
        let r = pnmerge(["show", "--format", "json", "--at", genesis.description, "-"], input: merged.save())
        #expect(r.status == 0, "\(r.err)")
        let o = try #require(try parseJSON(r.out) as? [String: Any])
        #expect(o["title"] as? String == "Home")
        #expect((o["notes"] as? [Any])?.isEmpty == true)

        let addFood = try #require(s.base.history.first { $0.message == "Add note \"Food\"" })
        let r2 = pnmerge(["show", "--at", addFood.id.description, "-"], input: merged.save())
        #expect(r2.status == 0)
        #expect(r2.out.contains("\nFood\n"))
        #expect(!r2.out.contains("Plan"))

        let bad = pnmerge(["show", "--at", "99@ffff", "-"], input: merged.save())
        #expect(bad.status == ExitStatus.usage.rawValue)
        #expect(bad.err == "pnmerge: <stdin>: no change 99@ffff in this document\n")
        let bare = pnmerge(["show", "-", "--at", "a11ce001"], input: merged.save())
        #expect(bare.err == "pnmerge: <stdin>: no change a11ce001 in this document (a change is named SEQ@REPLICA, as log shows it: 3@a11ce001)\n", "\(bare.err)")
    }

    // MARK: log

    @Test("log: newest first, with id, author, time, message and summary")
    func log() throws {
        let s = try Diverged()
        let merged = try s.merged()
        let r = pnmerge(["log", "--json", "-"], input: merged.save())
        #expect(r.status == 0)
        let entries = try #require(try parseJSON(r.out) as? [[String: Any]])
        #expect(entries.count == merged.changeCount)
        let times = entries.compactMap { $0["time"] as? String }
        #expect(times == times.sorted(by: >))
        #expect(entries.first?["author"] as? String == "bob")
        #expect(entries.last?["id"] as? String == merged.genesis.fullDescription)
        #expect(entries.last?["message"] as? String == "Create notebook")
        #expect(entries.contains { $0["summary"] as? String == "added \"Boat\"" })

        let text = pnmerge(["log", "-"], input: merged.save())
        #expect(text.status == 0)
        #expect(text.out.hasPrefix("change "))
        #expect(text.out.contains("Author: alice\nDate:   2024-03-01 10:02:00 +0000\n"))
        #expect(text.out.contains("    Add note \"Boat\"\n    added \"Boat\"\n"))
        #expect(text.out.components(separatedBy: "\nchange ").count == merged.changeCount)
    }

    @Test("log and log --graph cap a long summary (an import): its first parts, then how many notes more and what was done to them; --json keeps it whole")
    func logLongSummary() throws {
        let doc = Document(title: "Many", author: "me", time: at(9, 0))
        doc.clock = { at(9, 1) }
        doc.transaction(message: "Import many.md") {
            for i in 0 ..< 500 { doc.addNote(title: "Note \(i)") }
        }
        // No message (the summary is --graph's headline), and notes added and deleted.
        let first = doc.notes.prefix(2).map(\.id)
        try doc.transaction { () throws(PeerNoteError) in
            for i in 500 ..< 800 { doc.addNote(title: "Note \(i)") }
            for id in first { try doc.deleteNote(id) }
        }
        let bytes = doc.save()

        /// The numbers of parts listed and left out, from a capped summary ending "and N more notes…".
        func counts(_ line: String, tail: String) throws -> (shown: Int, more: Int) {
            let parts = line.components(separatedBy: "; ")
            let last = try #require(parts.last)
            #expect(last.hasPrefix("and ") && last.hasSuffix(tail), "\(last)")
            let more = try #require(Int(last.dropFirst(4).prefix { $0.isNumber }))
            return (parts.count - 1, more)
        }

        let text = pnmerge(["log", "-"], input: bytes)
        #expect(text.status == 0)
        let lines = text.out.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.allSatisfy { $0.count <= 160 }, "\(lines.map(\.count).max() ?? 0)")
        let imported = try #require(lines.first { $0.hasPrefix("    added \"Note 0\"; added \"Note 1\"; ") })
        let i = try counts(imported, tail: " more notes added")
        #expect(i.shown + i.more == 500 && i.shown >= 2)
        let mixed = try #require(lines.first { $0.hasPrefix("    added \"Note 500\"; added \"Note 501\"; ") })
        let m = try counts(mixed, tail: " deleted")
        #expect(m.shown + m.more == 302)
        #expect(mixed.hasSuffix("; and \(m.more) more notes: \(m.more - 2) added, 2 deleted"), "\(mixed)")

        let graph = pnmerge(["log", "--graph", "-"], input: bytes)
        #expect(graph.status == 0)
        let graphLines = graph.out.split(separator: "\n").map(String.init)
        #expect(graphLines.allSatisfy { $0.count <= 180 }, "\(graphLines.map(\.count).max() ?? 0)")
        // The import's summary, on the line under its message, beside the graph's lane.
        let detail = try #require(graphLines.first { $0.contains(" added \"Note 0\"; added \"Note 1\"; ") })
        let g = try counts(String(try #require(detail.range(of: "added \"Note 0\"").map { detail[$0.lowerBound...] })), tail: " more notes added")
        #expect(g.shown + g.more == 500)
        #expect(graphLines.contains { $0.hasPrefix("* ") && $0.contains(": added \"Note 500\"; ") && $0.hasSuffix(" added, 2 deleted") })

        // The JSON summary is whole.
        let json = pnmerge(["log", "--json", "-"], input: bytes)
        let entries = try #require(try parseJSON(json.out) as? [[String: Any]])
        let summaries = entries.compactMap { $0["summary"] as? String }
        #expect(summaries.contains((0 ..< 500).map { "added \"Note \($0)\"" }.joined(separator: "; ")))
        #expect(summaries.contains(doc.history[2].summary) && doc.history[2].summary.hasSuffix("added \"Note 799\"; deleted \"Note 0\"; deleted \"Note 1\""))
    }

    @Test("log --graph draws the two branches and the change that joins them")
    func logGraph() throws {
        let s = try Diverged()
        let merged = try s.merged()
        merged.author = "alice"
        merged.clock = { at(11, 0) }
        merged.setTitle("Home (merged)")
        let r = pnmerge(["log", "--graph", "-"], input: merged.save())
        #expect(r.status == 0)
        let lines = r.out.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("* ") == true)
        #expect(lines.first?.contains("alice") == true)
        #expect(lines.contains("|\\"))
        #expect(lines.contains("|/"))
        #expect(lines.filter { $0.hasPrefix("* |") || $0.hasPrefix("| *") }.count == 7)
        let root = try #require(lines.last { $0.contains("*") })
        #expect(root.hasPrefix("* "))
        #expect(root.contains("Create notebook"))
        #expect(lines.last == "  titled notebook \"Home\"")
        #expect(lines.filter { $0.contains("*") }.count == merged.changeCount)

        let both = pnmerge(["log", "--graph", "--json", "-"], input: merged.save())
        #expect(both.status == ExitStatus.usage.rawValue)
    }

    // MARK: diff

    @Test("diff: what each copy lacks, in note terms, and the conflicts once merged")
    func diff() throws {
        let dir = try TempDir()
        let s = try Diverged()
        try s.write(to: dir)
        let a = dir.path("alice.peernote"), b = dir.path("bob.peernote")
        let r = pnmerge(["diff", a, b])
        #expect(r.status == 0)
        #expect(r.out.contains("\(a) lacks 4 changes from \(b) (bob 4):"))
        #expect(r.out.contains("\(b) lacks 3 changes from \(a) (alice 3):"))
        #expect(r.out.contains("  added    \"Boat\""))
        #expect(r.out.contains("  deleted  \"Old\""))
        // The conflicts are grouped and counted as the merge report groups them, each with the
        // command that resolves it in A once B is merged into it.
        let merged = try s.merged()
        let food = try #require(merged.notes.first { $0.title == "Groceries" }).id.short
        let old = try #require(merged.deletedNotes.first { $0.title == "Old" }).id.short
        #expect(r.out.contains("""
            Conflicts once merged (1):
              note "Groceries": title "Shopping" (alice, 10:02) vs "Groceries" (bob, 10:05), showing "Groceries"; resolve once merged: peernote resolve \(a) \(food) title --pick N
            Deleted on one side, edited on the other, once merged (1):
              note "Old": deleted by alice (10:02) while edited by bob (10:05); it stays deleted and the edits are kept (restoring the note brings them back); resolve once merged: peernote resolve \(a) \(old) deleted --pick N (N: 1 keeps it deleted, 2 restores it)
            """), "\(r.out)")
        let dryRun = pnmerge(["merge", "--dry-run", a, b])
        #expect(dryRun.out.contains("\nConflicts (1):\n") && dryRun.out.contains("\nDeleted on one side, edited on the other (1):\n"), "\(dryRun.out)")

        let j = pnmerge(["diff", "--json", a, b])
        let o = try #require(try parseJSON(j.out) as? [String: Any])
        #expect(o["identical"] as? Bool == false)
        let sideA = try #require(o["a"] as? [String: Any])
        #expect(sideA["missingChanges"] as? Int == 4)
        #expect((sideA["notes"] as? [[String: Any]])?.contains { $0["change"] as? String == "added" } == true)
        let sideB = try #require(o["b"] as? [String: Any])
        #expect(sideB["missingChanges"] as? Int == 3)

        let same = pnmerge(["diff", a, a])
        #expect(same.status == 0)
        #expect(same.out == "\(a) and \(a) hold the same changes.\n")

        let other = try dir.write(unrelatedDocument().save(), "work.peernote")
        let unrelated = pnmerge(["diff", a, other])
        #expect(unrelated.status == ExitStatus.unrelated.rawValue)
        #expect(unrelated.err.contains("0c4b36e2-6c55-4d9a-8f0e-2b9c3e7d5a11") && unrelated.err.contains("9a1e2f30-1111-4222-8333-944455556666"))
    }

    @Test("diff: each conflict's resolving command, in text and JSON, names A and closes the conflict once B is merged into A")
    func diffResolveCommands() throws {
        let dir = try TempDir()
        try Diverged().write(to: dir)
        let a = dir.path("alice.peernote"), b = dir.path("bob.peernote")
        let r = pnmerge(["diff", a, b])
        #expect(r.status == 0, "\(r.err)")
        let marker = "; resolve once merged: "
        let commands = r.out.split(separator: "\n").compactMap { line -> String? in
            line.range(of: marker).map { String(line[$0.upperBound...]).components(separatedBy: " (N: ")[0] }
        }
        #expect(commands.count == 2 && commands.allSatisfy { $0.hasPrefix("peernote resolve \(a) ") }, "\(r.out)")
        // The JSON carries the same commands, one per listed conflict.
        let o = try #require(try parseJSON(pnmerge(["diff", "--json", a, b]).out) as? [String: Any])
        let json = try #require(o["conflicts"] as? [[String: Any]]).compactMap { $0["resolve"] as? String }
        #expect(Set(json) == Set(commands), "\(json) \(commands)")
        // Not in A yet: the command is for once merged. After `merge A B`, each one runs (N = 1) and
        // leaves no conflict open.
        #expect(pnmerge(["merge", a, b]).status == 0)
        for command in commands {
            let words = command.split(separator: " ").dropFirst().map { $0 == "N" ? "1" : String($0) }
            let run = try Tool.peernote.run(words + ["--author", "dana"], environment: ["TZ": "UTC", "NO_COLOR": "1"])
            #expect(run.status == 0, "\(command): \(run.err)")
        }
        #expect(try Document.load(dir.bytes("alice.peernote")).conflicts.isEmpty)

        // A on standard input: the commands name B, which `merge B -` would write.
        try Diverged().write(to: dir)
        let piped = pnmerge(["diff", "-", b], input: try dir.bytes("alice.peernote"))
        #expect(piped.status == 0 && piped.out.contains(marker + "peernote resolve \(b) "), "\(piped.out)")
    }

    @Test("diff: the places both copies edited one passage, under Check after what each lacks, as merge --dry-run lists them, in either order")
    func diffCheck() throws {
        let dir = try TempDir()
        try OverlappingEdits().write(to: dir)
        let alice = dir.path("alice.peernote"), bob = dir.path("bob.peernote"), chen = dir.path("chen.peernote")
        for (a, b) in [(alice, bob), (bob, alice)] {
            let r = pnmerge(["diff", a, b])
            #expect(r.status == 0)
            #expect(r.out.contains(OverlappingEdits.check + "\n"), "\(r.out)")
            // After both "lacks" sections, before the conflicts.
            let lines = r.out.split(separator: "\n").map(String.init)
            let check = try #require(lines.firstIndex { $0.hasPrefix("Check (") })
            let lacks = lines.indices.filter { lines[$0].contains(" lacks ") }
            let conflicts = try #require(lines.firstIndex { $0.hasPrefix("Conflicts once merged (1):") }, "\(r.out)")
            #expect(lacks.count == 2 && lacks.allSatisfy { $0 < check } && check < conflicts, "\(r.out)")
            // The same section, word for word, as the merge of these two copies would print.
            let merged = pnmerge(["merge", "--dry-run", a, b])
            #expect(section("Check (", of: r.out) == section("Check (", of: merged.out), "\(r.out)\n\(merged.out)")

            let j = pnmerge(["diff", "--json", a, b])
            let o = try #require(try parseJSON(j.out) as? [String: Any])
            let overlaps = try #require(o["overlaps"] as? [[String: Any]])
            #expect(overlaps.map { $0["kind"] as? String } == ["sameText", "insideDeleted"])
            #expect(overlaps.map { $0["line"] as? Int } == [1, 5])
            #expect(overlaps.allSatisfy { $0["title"] as? String == "N" })
            let m = try #require(try parseJSON(pnmerge(["merge", "--dry-run", "--json", a, b]).out) as? [String: Any])
            let mergeOverlaps = try #require(m["overlaps"] as? [[String: Any]])
            #expect(overlaps.map { $0.mapValues { "\($0)" } } == mergeOverlaps.map { $0.mapValues { "\($0)" } })
        }
        // Edits to one body that do not meet: no Check section, and none in JSON.
        for (a, b) in [(alice, chen), (chen, alice)] {
            let r = pnmerge(["diff", a, b])
            #expect(r.status == 0 && r.out.contains("edited   \"N\": body") && !r.out.contains("Check"), "\(r.out)")
            let o = try #require(try parseJSON(pnmerge(["diff", "--json", a, b]).out) as? [String: Any])
            #expect((o["overlaps"] as? [Any])?.isEmpty == true)
        }
    }

    @Test("Every kind of conflict in words and JSON; moves in the merge report; dates shown when values fall on different days")
    func conflictKinds() throws {
        let dir = try TempDir()
        let s = try Diverged()
        let plan = try #require(s.base.notes.first { $0.title == "Plan" }).id
        let ideas = try #require(s.base.notes.first { $0.title == "Ideas" }).id
        let x = s.base.fork(author: "xavier"), y = s.base.fork(author: "yves")
        x.clock = { at(12, 0) }
        y.clock = { at(24 + 8, 30) }
        x.setTitle("Home X")
        y.setTitle("Home Y")
        try x.setPriority(ideas, .high)
        try y.setPriority(ideas, .low)
        try x.moveNote(plan, to: 0)
        try y.moveNote(plan, to: 3)
        let px = try dir.write(x.save(), "x.peernote"), py = try dir.write(y.save(), "y.peernote")
        let merged = x.fork()
        try merged.merge(y)
        let planIndex = try #require(merged.notes.firstIndex { $0.id == plan })

        let r = pnmerge(["merge", "--dry-run", px, py])
        #expect(r.status == 0)
        #expect(r.out.contains("notebook: title \"Home X\" (xavier, 2024-03-01 12:00) vs \"Home Y\" (yves, 2024-03-02 08:30), showing \"\(merged.title)\""), "\(r.out)")
        #expect(r.out.contains("note \"Ideas\": priority \"high\" (xavier, 2024-03-01 12:00) vs \"low\" (yves, 2024-03-02 08:30), showing \"\(merged.notes.first { $0.id == ideas }?.priority.rawValue ?? "?")\""))
        #expect(r.out.contains("note \"Plan\": moved concurrently by xavier (2024-03-01 12:00) and yves (2024-03-02 08:30), showing it at position \(planIndex + 1) of 4 (index \(planIndex) in peernote list)"))
        if planIndex != 0 { #expect(r.out.contains("moved    \"Plan\": position 1 → \(planIndex + 1)")) }

        let j = pnmerge(["show", "--format", "json", "-"], input: merged.save())
        let o = try #require(try parseJSON(j.out) as? [String: Any])
        let conflicts = try #require(o["conflicts"] as? [[String: Any]])
        #expect(conflicts.compactMap { $0["kind"] as? String }.sorted() == ["notebookTitle", "position", "priority"])
        let position = try #require(conflicts.first { $0["kind"] as? String == "position" })
        #expect(position["index"] as? Int == planIndex)
        #expect((position["moves"] as? [[String: Any]])?.compactMap { $0["author"] as? String } == ["xavier", "yves"])
        #expect(conflicts.first?["note"] is NSNull)
    }

    // MARK: the root command

    @Test("The root help lists every exit status of ExitStatus")
    func rootHelp() {
        let r = pnmerge(["--help"])
        #expect(r.status == 0)
        for status in ExitStatus.allCases {
            #expect(r.out.contains("  \(status.rawValue)".padding(toLength: 6, withPad: " ", startingAt: 0) + status.meaning))
        }
        let names = ["merge", "validate", "inspect", "show", "log", "diff", "sync", "compact", "convert", "git-setup", "git-driver", "textconv", "salvage"]
        #expect(PNMerge.configuration.subcommands.map { $0._commandName } == names)
        for name in names {
            #expect(r.out.contains("\n  \(name) "), "\(name) is listed")
        }
    }

    /// The subcommands named in `text`, a list such as "show, inspect, and one input of merge or
    /// diff" (words made of letters and '-', kept when they are a subcommand's name).
    static func subcommandsNamed(in text: Substring) -> Set<String> {
        let names = Set(PNMerge.configuration.subcommands.map { $0._commandName })
        return Set(text.split(whereSeparator: { !($0.isLetter || $0 == "-") }).map(String.init).filter(names.contains))
    }

    @Test("The overview and pnmerge(1) name exactly the subcommands whose arguments take '-', and each of them reads standard input")
    func standardInputCommands() throws {
        let takesDash = Set(PNMerge.configuration.subcommands.filter {
            PNMerge.helpMessage(for: $0, columns: 10_000).contains("'-' for standard input")
        }.map { $0._commandName })
        #expect(takesDash.isSuperset(of: ["show", "inspect", "validate", "log", "textconv", "salvage", "merge", "diff"]), "\(takesDash)")

        let overview = try #require(PNMerge.configuration.discussion.range(of: "A FILE of '-' reads standard input ("))
        let list = PNMerge.configuration.discussion[overview.upperBound...].prefix { $0 != ")" }
        #expect(Self.subcommandsNamed(in: list) == takesDash, "--help: \(list)")

        let page = try String(contentsOf: ManPageTests.page, encoding: .utf8)
        let start = try #require(page.range(of: "reads standard input; it is accepted by\n"))
        let end = try #require(page.range(of: "may be given only once.", range: start.upperBound ..< page.endIndex))
        #expect(Self.subcommandsNamed(in: page[start.upperBound ..< end.lowerBound]) == takesDash, "pnmerge(1)")

        // Each really reads '-': the same result as from the file.
        let s = try Diverged()
        let dir = try TempDir()
        try s.write(to: dir)
        let bob = dir.path("bob.peernote"), alice = dir.path("alice.peernote")
        let runs: [String: (dash: [String], file: [String])] = [
            "show": (["show", "-"], ["show", bob]),
            "inspect": (["inspect", "-"], ["inspect", bob]),
            "validate": (["validate", "-"], ["validate", bob]),
            "log": (["log", "-"], ["log", bob]),
            "textconv": (["textconv", "-"], ["textconv", bob]),
            "salvage": (["salvage", "-", "-o", "-"], ["salvage", bob, "-o", "-"]),
            "merge": (["merge", alice, "-", "--dry-run"], ["merge", alice, bob, "--dry-run"]),
            "diff": (["diff", alice, "-"], ["diff", alice, bob]),
        ]
        #expect(Set(runs.keys) == takesDash)
        let name = { (text: String) in text.replacingOccurrences(of: bob, with: "<stdin>") }
        for (command, run) in runs.sorted(by: { $0.key < $1.key }) {
            let fromStdin = pnmerge(run.dash, input: try dir.bytes("bob.peernote"))
            let fromFile = pnmerge(run.file)
            #expect(fromStdin.status == 0 && fromStdin.status == fromFile.status, "\(command): \(fromStdin.err)")
            // salvage writes the recovered document (binary) to standard output; the others text.
            let expected = command == "salvage" ? fromFile.outBytes : Array(name(fromFile.out).utf8)
            #expect(!fromStdin.outBytes.isEmpty && fromStdin.outBytes == expected, "\(command)")
            #expect(fromStdin.err == name(fromFile.err), "\(command)")
        }
    }

    @Test("A usage error is one line 'pnmerge: … (see 'pnmerge SUBCOMMAND --help')', then the usage synopsis; exit 64")
    func usageErrors() throws {
        let s = try Diverged()
        let dir = try TempDir()
        try s.write(to: dir)
        let file = dir.path("bob.peernote")
        let cases: [(args: [String], first: String, usage: String)] = [
            (["log", "--graph", "--json", file], "pnmerge: --graph and --json cannot be combined (see 'pnmerge log --help')", "Usage: pnmerge log "),
            (["sync"], "pnmerge: missing expected argument '<DIR> ...' (see 'pnmerge sync --help')", "Usage: pnmerge sync "),
            (["show"], "pnmerge: missing expected argument '<FILE>' (see 'pnmerge show --help')", "Usage: pnmerge show "),
            (["log", "--jsn", file], "pnmerge: unknown option '--jsn'. Did you mean '--json'? (see 'pnmerge log --help')", "Usage: pnmerge log "),
            (["lgo", file], "pnmerge: unknown command 'lgo'; did you mean 'log'? (see 'pnmerge --help')", "Commands: merge, validate, "),
            // The unknown option, with or without the argument ArgumentParser would name first as missing.
            (["validate", "-q"], "pnmerge: unknown option '-q' (see 'pnmerge validate --help')", "Usage: pnmerge validate "),
            (["validate", "-q", file], "pnmerge: unknown option '-q' (see 'pnmerge validate --help')", "Usage: pnmerge validate "),
            (["diff", "-z", file], "pnmerge: unknown option '-z' (see 'pnmerge diff --help')", "Usage: pnmerge diff "),
            // A missing argument beside known options is still that.
            (["merge", "--dry-run", file], "pnmerge: missing expected argument '<THEIRS> ...' (see 'pnmerge merge --help')", "Usage: pnmerge merge "),
        ]
        for c in cases {
            let r = pnmerge(c.args)
            #expect(r.status == ExitStatus.usage.rawValue, "\(c.args)")
            #expect(r.out.isEmpty, "\(c.args)")
            let lines = r.err.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            #expect(lines.first == c.first, "\(c.args): \(r.err)")
            #expect(lines.count == 3 && lines[1].hasPrefix(c.usage) && lines[2].isEmpty, "\(c.args): \(r.err)")
            #expect(!r.err.contains("Error:") && !r.err.contains("for more information"), "\(c.args): \(r.err)")
        }
        // The message starts in lower case when its first word is a capitalised word or the
        // article "A" (peernote's "A tag cannot be empty." was left capitalised), not an acronym or "I".
        for (message, first) in [("A tag cannot be empty.", "a tag cannot be empty"), ("Missing expected argument", "missing expected argument"),
                                 ("JSON is not allowed here.", "JSON is not allowed here"), ("I cannot", "I cannot"), ("ABC", "ABC"), ("A", "A")] {
            #expect(ParserOutcome.usageError(tool: "t", message: message, fullMessage: "") == "t: \(first) (see 't --help')\n", "\(message)")
        }
        // Help and the version still go to standard output, exit 0.
        let help = pnmerge(["log", "--help"])
        #expect(help.status == 0 && help.err.isEmpty && help.out.contains("USAGE: pnmerge log <FILE>"))
        let version = pnmerge(["--version"])
        #expect(version.status == 0 && version.out == "pnmerge \(PNMerge.version) (.peernote format: reads versions 1-\(FormatInfo.version), writes \(FormatInfo.writtenVersion))\n")
    }

    @Test("ArgumentParser's multi-line messages are one line: an unknown completion shell, a long list of allowed values; a line break the user typed stays escaped")
    func parserMessageLines() {
        let r = pnmerge(["--generate-completion-script", "tcsh"])
        #expect(r.status == 64)
        let first = r.err.split(separator: "\n").first.map(String.init) ?? ""
        #expect(first == "pnmerge: can't generate completion scripts for 'tcsh'. Please use --generate-completion-script=<shell> with one of: zsh bash fish (see 'pnmerge --help')", "\(r.err)")
        #expect(!r.err.contains("\\n"))
        #expect(ParserOutcome.parserLinesJoined("The value 'x' is invalid for '--k <k>'. Please provide one of the following:\n  - a\n  - b\n  - c")
            == "The value 'x' is invalid for '--k <k>'. Please provide one of the following: a, b, c")
        #expect(ParserOutcome.parserLinesJoined("Unknown option '-a\nb'") == "Unknown option '-a\nb'")
        // A value the user typed keeps its line breaks, whatever follows them.
        for typed in ["x:\n  - y", "x.\nPlease do", "x:\n    y"] {
            #expect(ParserOutcome.parserLinesJoined("The value '\(typed)' is invalid for '--format <f>'") == "The value '\(typed)' is invalid for '--format <f>'")
            #expect(ParserOutcome.parserLinesJoined("The value '\(typed)' is invalid for '--k <k>'. Please provide one of the following:\n  - a\n  - b")
                == "The value '\(typed)' is invalid for '--k <k>'. Please provide one of the following: a, b")
        }
        let shell = pnmerge(["show", "x.peernote", "--format", "x:\n    y"])
        #expect(shell.err.hasPrefix("pnmerge: the value 'x:\\n    y' is invalid"), "\(shell.err)")
        #expect(ParserOutcome.usageError(tool: "t", message: "Unknown option '-a\nb'", fullMessage: "") == "t: unknown option '-a\\nb' (see 't --help')\n")
    }

    @Test("An empty FILE or OUT, or one ending in '/', is a usage error (exit 64, one line, the name as typed) in every command that takes one, before anything is read or written; validate checks a name ending in '/' as one of its results")
    func fileNameSpelling() throws {
        let dir = try TempDir()
        let a = try dir.write(Diverged().alice.save(), "a.peernote")
        let empty = "the file name is empty: name a .peernote file"
        let folder = "a name ending in '/' names a folder; name a .peernote file"
        let out = "-o: the file name is empty: name the .peernote file to write"
        let cases: [([String], String)] = [
            (["merge", a, a, "-o", ""], out), (["merge", "", a], empty), (["merge", a, ""], empty),
            (["merge", a, a, "-o", dir.path("New") + "/"], "-o: " + dir.path("New") + "/: a name ending in '/' names a folder; name the .peernote file to write"),
            (["salvage", a, "-o", ""], out), (["salvage", "Notes/", "-o", "x.peernote"], "Notes/: " + folder),
            (["validate", a, ""], empty), (["show", ""], empty), (["log", ""], empty), (["inspect", "Notes/"], "Notes/: " + folder),
            (["textconv", ""], empty), (["diff", a, ""], empty), (["compact", ""], empty),
        ]
        for (args, message) in cases {
            let r = pnmerge(args)
            #expect(r.status == 64, "\(args): \(r.err)")
            #expect(r.err == "pnmerge: \(message)\n", "\(args)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path) == ["a.peernote"])
        // validate: a folder named with '/', or a file named so, is one of its results (66), in its JSON too.
        let v = pnmerge(["validate", "--json", a, dir.url.path + "/", a + "/"])
        #expect(v.status == 66, "\(v.err)")
        let results = try #require(try parseJSON(v.out) as? [[String: Any]])
        #expect(results.map { $0["valid"] as? Bool } == [true, false, false])
    }

    @Test("Shell completion scripts are generated", arguments: ["bash", "zsh", "fish"])
    func completions(shell: String) {
        let r = pnmerge(["--generate-completion-script", shell])
        #expect(r.status == 0)
        #expect(r.out.contains("pnmerge"))
        #expect(r.out.contains("validate"))
    }

    @Test("Colour only when the sink allows it")
    func colour() throws {
        let s = try Diverged()
        let plain = pnmerge(["log", "-"], input: s.bob.save())
        #expect(!plain.out.contains("\u{1B}["))
        let sink = CapturedOutput(input: s.bob.save(), color: true)
        #expect(PNMerge.execute(["log", "-"], output: sink) == 0)
        #expect(sink.standardOutput.contains("\u{1B}[33mchange "))
    }

    @Test("A damaged file that holds an intact base block (cut short, or junk in front): its error line ends with the salvage command and what it recovers (validate, merge); other bad files do not")
    func salvageHint() throws {
        let dir = try TempDir()
        let doc = try Document.load(Document(title: "Home", author: "ann").save())
        doc.addNote(title: "kept")
        let intact = try Document.load(doc.save(.incremental))
        intact.addNote(title: "lost")
        let damaged = try dir.write(Array(intact.save(.incremental).dropLast(6)), "my notes.peernote")
        let quoted = "; 'pnmerge salvage \(ShellQuote.word(damaged)) -o NEW.peernote' recovers its 2 intact changes"
        let v = pnmerge(["validate", damaged])
        #expect(v.status == ExitStatus.invalidInput.rawValue)
        #expect(v.err.hasSuffix(quoted + "\n"), "\(v.err)")
        #expect(v.err.split(separator: "\n").count == 1)
        let m = pnmerge(["merge", "--dry-run", try dir.write(doc.save(), "mine.peernote"), damaged])
        #expect(m.status == ExitStatus.invalidInput.rawValue)
        #expect(m.err.hasPrefix("pnmerge: \(damaged): offset "), "\(m.err)")
        #expect(m.err.hasSuffix(quoted + "\n"), "\(m.err)")
        // Following it recovers what it says.
        let out = dir.path("NEW.peernote")
        #expect(pnmerge(["salvage", damaged, "-o", out]).status == 0)
        #expect(try Document.load(try dir.bytes("NEW.peernote")).changeCount == 2)
        // Junk in front of a notebook: offset 0, wrong magic, and salvage recovers every change;
        // the hint says so, and pnmerge(1) says it comes for that too.
        let junk = try dir.write(Array("JUNKJUNK".utf8) + doc.save(.compact), "junk.peernote")
        let j = pnmerge(["validate", junk])
        #expect(j.status == ExitStatus.invalidInput.rawValue)
        #expect(j.err.hasPrefix("\(junk): offset 0: not a .peernote file (wrong magic bytes); "), "\(j.err)")
        #expect(j.err.hasSuffix("; 'pnmerge salvage \(ShellQuote.word(junk)) -o NEW.peernote' recovers its \(doc.changeCount) intact changes\n"), "\(j.err)")
        let page = try String(contentsOf: Binary.packageRoot.appendingPathComponent("man/pnmerge.1"), encoding: .utf8)
        #expect(page.contains("such as junk in front of a notebook, which fails at offset 0 as\nwrong magic"))
        #expect(!page.contains("whose start is intact"))
        // Not a notebook, or damaged in its first block: nothing to recover, no hint.
        var first = doc.save(.compact)
        first[first.count / 2] ^= 0x10
        for bytes in [Array("text".utf8), first] {
            let bad = try dir.write(bytes, "bad.peernote")
            let r = pnmerge(["validate", bad])
            #expect(r.status == ExitStatus.invalidInput.rawValue)
            #expect(!r.err.contains("salvage"), "\(r.err)")
        }
    }

    @Test("An untitled notebook is named '(untitled notebook)' in sync's summary, as show and textconv name it")
    func untitledInSync() throws {
        let dir = try TempDir()
        let base = Document(title: "", author: "ann")
        base.addNote(title: "one")
        let other = base.fork(author: "bob")
        other.addNote(title: "two")
        _ = try dir.write(base.save(), "notes.peernote")
        _ = try dir.write(other.save(), "notes (Dropbox's conflicted copy 2026-01-02).peernote")
        let r = pnmerge(["sync", dir.url.path])
        #expect(r.status == 0, "\(r.err)")
        #expect(r.out.contains("(untitled notebook) ("), "\(r.out)")
        #expect(!r.out.contains("\"\" ("), "\(r.out)")
        #expect(pnmerge(["show", dir.path("notes.peernote")]).out.contains("(untitled notebook)"))
    }
}

/// The error `Document.load` gives for `bytes`, if any.
private func loadError(_ bytes: [UInt8]) -> PeerNoteError? {
    do { _ = try Document.load(bytes); return nil } catch { return error }
}
