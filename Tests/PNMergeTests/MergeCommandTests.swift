import Foundation
@testable import PeerNote
import PeerNoteCLISupport
import Testing
import TestSupport
@testable import PNMergeCommands

@Suite("merge (in-process)")
struct MergeCommandTests {
    @Test("The arguments parse into the merge command")
    func parsing() throws {
        let parsed = try PNMerge.parseAsRoot(["merge", "a.peernote", "b.peernote", "c.peernote", "-o", "out.peernote", "--dry-run", "--json"])
        let merge = try #require(parsed as? PNMerge.Merge)
        #expect(merge.mine == "a.peernote")
        #expect(merge.theirs == ["b.peernote", "c.peernote"])
        #expect(merge.output == "out.peernote")
        #expect(merge.dryRun)
        #expect(merge.format.json)
        #expect(throws: (any Error).self) { try PNMerge.parseAsRoot(["merge", "a.peernote"]) }
    }

    @Test("A missing THEIRS is a usage error (64)")
    func usage() {
        let r = pnmerge(["merge", "only.peernote"])
        #expect(r.status == ExitStatus.usage.rawValue)
        #expect(r.err.contains("<THEIRS>"), "\(r.err)")
    }

    @Test("-o naming MINE by another path (a hard link, a symbolic link) is the merge in place, one block appended, written to the name asked for",
          arguments: ["hard", "symbolic"])
    func outputIsMine(link: String) throws {
        let dir = try TempDir()
        let s = try Diverged()
        try s.write(to: dir)
        let original = try dir.bytes("alice.peernote")
        let other = dir.path("other-name.peernote")
        if link == "hard" {
            try FileManager.default.linkItem(atPath: dir.path("alice.peernote"), toPath: other)
        } else {
            try FileManager.default.createSymbolicLink(atPath: other, withDestinationPath: dir.path("alice.peernote"))
        }
        let r = pnmerge(["merge", dir.path("alice.peernote"), dir.path("bob.peernote"), "-o", other])
        #expect(r.status == 0, "\(r.err)")
        // Through a symbolic link, MINE's file; a hard link's name gets the result (the name asked
        // for), and MINE's other name keeps its bytes, as an atomic write leaves any hard link.
        let after = try dir.bytes(link == "hard" ? "other-name.peernote" : "alice.peernote")
        if link == "hard" { #expect(try dir.bytes("alice.peernote") == original) }
        var st = stat()
        #expect(lstat(other, &st) == 0 && (st.st_mode & S_IFMT == S_IFLNK) == (link == "symbolic"))
        #expect(Array(after.prefix(original.count)) == original)
        #expect(try Document.blockCount(after) == 2)
        #expect(try Document.load(after).notebook == (try s.merged()).notebook)
    }

    /// Each THEIRS is held as its history once verified, but for the first when its file is
    /// larger than MINE's (the result is then built from it): the result and the report's counts
    /// are the same whichever copy is larger and however many THEIRS there are.
    @Test("A THEIRS larger or smaller than MINE, one or two of them: the same result and counts, -o and in place")
    func theirsLargerOrSmaller() throws {
        let dir = try TempDir()
        let made = try SmallAndLarge()
        let copies = ["small": made.small, "large": made.large, "third": made.third]
        for (name, doc) in copies { _ = try dir.write(doc.save(), "\(name).peernote") }
        #expect(try dir.bytes("large.peernote").count > dir.bytes("small.peernote").count)
        for (mine, theirs) in [("small", ["large"]), ("large", ["small"]), ("small", ["large", "third"]),
                               ("third", ["small", "large"]), ("large", ["third", "small"])] {
            let expected = try #require(copies[mine]).fork()
            var counts: [Int] = []
            for other in theirs { counts.append(try expected.merge(try #require(copies[other])).changeCount) }
            let args = ["merge", dir.path("\(mine).peernote")] + theirs.map { dir.path("\($0).peernote") }
            let out = dir.path("out.peernote")
            try? FileManager.default.removeItem(atPath: out)
            let r = pnmerge(args + ["-o", out, "--json"])
            #expect(r.status == 0, "\(mine) <- \(theirs): \(r.err)")
            #expect(try dir.bytes("out.peernote") == expected.save(.compact), "\(mine) <- \(theirs)")
            let inputs = try #require((try parseJSON(r.out) as? [String: Any])?["inputs"] as? [[String: Any]])
            #expect(inputs.map { $0["changes"] as? Int } == counts.map { $0 }, "\(mine) <- \(theirs): \(r.out)")
            // In place: MINE gains one block, and reads as the same notebook.
            _ = try dir.write(try #require(copies[mine]).save(), "inplace.peernote")
            let p = pnmerge(["merge", dir.path("inplace.peernote")] + theirs.map { dir.path("\($0).peernote") })
            #expect(p.status == 0, "\(p.err)")
            let after = try Document.load(try dir.bytes("inplace.peernote"))
            #expect(after.notebook == expected.notebook && after.save(.compact) == expected.save(.compact), "\(mine) <- \(theirs) in place")
        }
    }

    @Test("A note the other copy restored is reported restored, not added (text and JSON); NotebookDiff of documents says so too")
    func restoredNote() throws {
        let dir = try TempDir()
        let base = Document(title: "T", author: "carol")
        let old = base.addNote(title: "Old", body: "x")
        base.addNote(title: "Keep", body: "y")
        try base.deleteNote(old)
        let mine = base.fork(author: "alice"), theirs = base.fork(author: "bob")
        try theirs.restoreNote(old)
        theirs.addNote(title: "New", body: "z")
        #expect(NotebookDiff(from: mine, to: theirs).changes.map { change -> String in
            switch change {
            case .added(let n): "added \(n.title)"
            case .restored(let n): "restored \(n.title)"
            default: "other"
            }
        }.sorted() == ["added New", "restored Old"])
        let a = try dir.write(mine.save(), "mine.peernote"), b = try dir.write(theirs.save(), "theirs.peernote")
        let r = pnmerge(["merge", a, b, "--dry-run"])
        #expect(r.status == 0, "\(r.err)")
        #expect(r.out.contains("restored \"Old\"") && r.out.contains("added    \"New\"") && !r.out.contains("added    \"Old\""), "\(r.out)")
        let json = pnmerge(["merge", a, b, "--dry-run", "--json"])
        #expect(json.out.contains("\"change\": \"restored\"") || json.out.contains("\"change\":\"restored\""), "\(json.out)")
    }

    @Test("Merging reports changes per file and author, note changes, conflicts and delete-vs-edit, and writes an appended block")
    func mergeInPlace() throws {
        let dir = try TempDir()
        let s = try Diverged()
        try s.write(to: dir)
        let original = try dir.bytes("alice.peernote")
        let expected = try s.merged()

        let r = pnmerge(["merge", dir.path("alice.peernote"), dir.path("bob.peernote")])
        #expect(r.status == 0, "\(r.err)")
        #expect(r.err.isEmpty)
        #expect(r.out.contains("\(dir.path("bob.peernote")): 4 changes (bob 4)"), "\(r.out)")
        #expect(r.out.contains("added    \"Boat\""))
        #expect(r.out.contains("edited   \"Ideas\": body"))
        #expect(!r.out.contains("\"Plan\""), "alice's own edit is not news to alice")
        let showing = try #require(expected.notes.first { $0.title == "Shopping" || $0.title == "Groceries" }?.title)
        #expect(r.out.contains("note \"\(showing)\": title \"Shopping\" (alice, 10:02) vs \"Groceries\" (bob, 10:05), showing \"\(showing)\""), "\(r.out)")
        #expect(r.out.contains("note \"Old\": deleted by alice (10:02) while edited by bob (10:05)"))
        #expect(r.out.contains("Wrote \(dir.path("alice.peernote"))"))

        // In place: the old bytes stay, one block is appended, and the result is the merged notebook.
        let after = try dir.bytes("alice.peernote")
        #expect(after.count > original.count)
        #expect(Array(after.prefix(original.count)) == original)
        let loaded = try Document.load(after)
        #expect(loaded.notebook == expected.notebook)
        #expect(try Document.storageReport(after).blockCount == 2)

        // Again: nothing new, nothing written.
        let again = pnmerge(["merge", dir.path("alice.peernote"), dir.path("bob.peernote")])
        #expect(again.status == 0)
        #expect(again.out.hasPrefix("Already up to date"))
        #expect(try dir.bytes("alice.peernote") == after)
    }

    @Test("--dry-run reports but writes nothing")
    func dryRun() throws {
        let dir = try TempDir()
        try Diverged().write(to: dir)
        let before = try dir.bytes("bob.peernote")
        let r = pnmerge(["merge", "--dry-run", dir.path("bob.peernote"), dir.path("alice.peernote")])
        #expect(r.status == 0)
        #expect(r.out.contains("alice.peernote: 3 changes (alice 3)"), "\(r.out)")
        #expect(r.out.contains("edited   \"Plan\": body"))
        #expect(r.out.contains("deleted  \"Old\""))
        #expect(r.out.contains("Dry run: nothing written"))
        #expect(try dir.bytes("bob.peernote") == before)
        #expect(!FileManager.default.fileExists(atPath: dir.path(".bob.peernote.lock")))
    }

    @Test("-o writes a compact file and leaves MINE alone; -o - writes the document to stdout and the report to stderr")
    func output() throws {
        let dir = try TempDir()
        let s = try Diverged()
        try s.write(to: dir)
        let mine = try dir.bytes("alice.peernote")
        let r = pnmerge(["merge", dir.path("alice.peernote"), dir.path("bob.peernote"), "-o", dir.path("out.peernote")])
        #expect(r.status == 0, "\(r.err)")
        #expect(try dir.bytes("alice.peernote") == mine)
        let out = try dir.bytes("out.peernote")
        #expect(out == (try s.merged()).save(.compact))

        let piped = pnmerge(["merge", dir.path("alice.peernote"), dir.path("bob.peernote"), "-o", "-"])
        #expect(piped.status == 0)
        #expect(piped.outBytes == out)
        // MINE is left alone: the report does not say it was merged into.
        #expect(piped.err.contains("Merged \(dir.path("alice.peernote")) with:"))
        #expect(!piped.err.contains("Merged into"))

        // Up to date but with an explicit OUT: OUT still receives the document.
        let upToDate = pnmerge(["merge", dir.path("out.peernote"), dir.path("bob.peernote"), "-o", dir.path("copy.peernote")])
        #expect(upToDate.status == 0)
        #expect(upToDate.out.hasPrefix("Already up to date"))
        #expect(try dir.bytes("copy.peernote") == out)
    }

    @Test("-o over an existing copy with changes of its own is refused (73), naming them and the merge that keeps them; nothing written, dry run too")
    func outputWithChangesOfItsOwn() throws {
        let dir = try TempDir()
        let s = try Diverged()
        try s.write(to: dir)
        let usb = s.base.fork(author: "ursula")
        usb.addNote(title: "Only on the USB stick")
        let out = try dir.write(usb.save(), "usb.peernote")
        let before = try dir.bytes("usb.peernote")
        let (mine, theirs) = (dir.path("alice.peernote"), dir.path("bob.peernote"))
        let expected = "pnmerge: \(out): already exists and holds 1 change the result lacks (ursula 1); "
            + "merge it too (pnmerge merge \(mine) \(theirs) \(out) -o \(out)) or choose another output\n"
        for dryRun in [false, true] {
            let r = pnmerge(["merge", mine, theirs, "-o", out] + (dryRun ? ["--dry-run"] : []))
            #expect(r.status == ExitStatus.cannotCreate.rawValue, "\(r.err)")
            #expect(r.err == expected)
            #expect(r.out.isEmpty)
            #expect(try dir.bytes("usb.peernote") == before)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path("")).filter { $0.contains(".tmp-") }.isEmpty)

        // The merge the message gives keeps everything.
        let again = pnmerge(["merge", mine, theirs, out, "-o", out])
        #expect(again.status == 0, "\(again.err)")
        let written = try Document.load(try dir.bytes("usb.peernote"))
        let all = try s.merged()
        try all.merge(usb)
        #expect(written.notebook == all.notebook)
    }

    @Test("-o over a file the result holds all of (an earlier run's result, an older copy) replaces it")
    func outputTheResultHolds() throws {
        let dir = try TempDir()
        let s = try Diverged()
        try s.write(to: dir)
        let (mine, theirs) = (dir.path("alice.peernote"), dir.path("bob.peernote"))
        let expected = (try s.merged()).save(.compact)
        // An older copy (the common base), then the same merge's result: both are replaced.
        let out = try dir.write(s.base.save(), "out.peernote")
        for _ in 0 ..< 2 {
            let r = pnmerge(["merge", mine, theirs, "-o", out])
            #expect(r.status == 0, "\(r.err)")
            #expect(try dir.bytes("out.peernote") == expected)
        }
    }

    @Test("-o over a file that is not this notebook (text, another notebook) is refused (73); nothing written")
    func outputNotThisNotebook() throws {
        let dir = try TempDir()
        try Diverged().write(to: dir)
        let (mine, theirs) = (dir.path("alice.peernote"), dir.path("bob.peernote"))
        let text = try dir.write(Array("important\n".utf8), "notes.txt")
        let other = try dir.write(Document(title: "Other", author: "dan").save(), "other.peernote")
        for (path, name) in [(text, "notes.txt"), (other, "other.peernote")] {
            let before = try dir.bytes(name)
            for dryRun in [false, true] {
                let r = pnmerge(["merge", mine, theirs, "-o", path] + (dryRun ? ["--dry-run"] : []))
                #expect(r.status == ExitStatus.cannotCreate.rawValue, "\(r.err)")
                #expect(r.err.hasPrefix("pnmerge: \(path): already exists and is not a copy of this notebook"), "\(r.err)")
                #expect(r.err.hasSuffix("; not replaced (choose another output, or remove \(path) first if it is not needed)\n"), "\(r.err)")
                #expect(try dir.bytes(name) == before)
            }
        }
    }

    @Test("-o over a copy this version cannot read (a newer format) is refused (73) as unreadable, not as another notebook; nothing written")
    func outputNewerFormat() throws {
        let dir = try TempDir()
        let s = try Diverged()
        try s.write(to: dir)
        let (mine, theirs) = (dir.path("alice.peernote"), dir.path("bob.peernote"))
        var newer = s.base.save(.compact)
        #expect(newer[8] == 0x83 && newer[9] == 0x02)
        newer[9] = 0x04
        let out = try dir.write(newer, "out.peernote")
        for dryRun in [false, true] {
            let r = pnmerge(["merge", mine, theirs, "-o", out] + (dryRun ? ["--dry-run"] : []))
            #expect(r.status == ExitStatus.cannotCreate.rawValue, "\(r.err)")
            #expect(r.err == "pnmerge: \(out): already exists and holds a notebook of format version 4, newer than this library reads (\(FormatInfo.version)); not replaced (choose another output)\n", "\(r.err)")
            #expect(try dir.bytes("out.peernote") == newer)
        }
    }

    @Test("Several THEIRS: each file is credited with the changes it brought first")
    func several() throws {
        let dir = try TempDir()
        let s = try Diverged()
        try s.write(to: dir)
        let r = pnmerge(["merge", "--dry-run", dir.path("base.peernote"), dir.path("alice.peernote"), dir.path("bob.peernote"), dir.path("alice.peernote")])
        #expect(r.status == 0)
        let lines = r.out.split(separator: "\n").map(String.init)
        #expect(lines.contains("  \(dir.path("alice.peernote")): 3 changes (alice 3)"))
        #expect(lines.contains("  \(dir.path("bob.peernote")): 4 changes (bob 4)"))
        #expect(lines.contains("  \(dir.path("alice.peernote")): nothing new"))
    }

    @Test("--json gives the report as one JSON object")
    func json() throws {
        let dir = try TempDir()
        try Diverged().write(to: dir)
        let r = pnmerge(["merge", "--json", dir.path("alice.peernote"), dir.path("bob.peernote")])
        #expect(r.status == 0)
        let object = try #require(try parseJSON(r.out) as? [String: Any])
        #expect(object["document"] as? String == Diverged.documentID.uuidString.lowercased())
        #expect(object["upToDate"] as? Bool == false)
        #expect(object["written"] as? Bool == true)
        #expect(object["changes"] as? Int == 4)
        let inputs = try #require(object["inputs"] as? [[String: Any]])
        #expect(inputs.count == 1)
        let authors = try #require(inputs.first?["authors"] as? [[String: Any]])
        #expect(authors.first?["author"] as? String == "bob")
        #expect(authors.first?["changes"] as? Int == 4)
        let notes = try #require(object["notes"] as? [[String: Any]])
        #expect(notes.contains { $0["change"] as? String == "added" && $0["title"] as? String == "Boat" })
        #expect(notes.contains { $0["change"] as? String == "edited" && ($0["fields"] as? [String]) == ["body"] && $0["title"] as? String == "Ideas" })
        let conflicts = try #require(object["conflicts"] as? [[String: Any]])
        let kinds = Set(conflicts.compactMap { $0["kind"] as? String })
        #expect(kinds == ["noteTitle", "deletedWhileEdited"])
        let title = try #require(conflicts.first { $0["kind"] as? String == "noteTitle" })
        let values = try #require(title["values"] as? [[String: Any]])
        #expect(values.map { $0["value"] as? String } == ["Shopping", "Groceries"])
        #expect(values.map { $0["author"] as? String } == ["alice", "bob"])
        #expect(values.first?["time"] as? String == "2024-03-01T10:02:00Z")

        let again = pnmerge(["merge", "--json", dir.path("alice.peernote"), dir.path("bob.peernote")])
        let second = try #require(try parseJSON(again.out) as? [String: Any])
        #expect(second["upToDate"] as? Bool == true)
        #expect(second["written"] as? Bool == false)
        #expect(second["bytesWritten"] is NSNull)
    }

    @Test("A title that the merge leaves on two live notes is reported, once, in text and JSON (else peernote would refuse it later without a word from the merge)")
    func sharedTitlesReported() throws {
        let dir = try TempDir()
        let base = Document(title: "T", author: "alice")
        base.addNote(title: "Plan")
        base.addNote(title: "Twice")
        base.addNote(title: "Twice")
        let bob = base.fork(author: "bob")
        let mineShopping = base.addNote(title: "Shopping")
        let theirsShopping = bob.addNote(title: "Shopping")
        bob.addNote(title: "Twice")
        bob.addNote(title: "")
        base.addNote(title: "")
        let mine = try dir.write(base.save(.compact), "mine.peernote")
        let theirs = try dir.write(bob.save(.compact), "theirs.peernote")
        let r = pnmerge(["merge", "--dry-run", mine, theirs])
        #expect(r.status == 0)
        // "Twice" was shared already in MINE, and empty titles name nothing: only "Shopping".
        let merged = try Document.load(base.save(.compact))
        try merged.merge(bob)
        let order = merged.notes.filter { $0.title == "Shopping" }.map(\.id)
        #expect(Set(order) == [mineShopping, theirsShopping])
        #expect(r.out.contains("""
            Same title (1): the title alone names none of these notes; name them by id, or retitle one
              "Shopping": notes \(order.map(\.short).joined(separator: ", "))
            """), "\(r.out)")
        let json = pnmerge(["merge", "--dry-run", "--json", mine, theirs])
        let object = try #require(try parseJSON(json.out) as? [String: Any])
        let shared = try #require(object["sharedTitles"] as? [[String: Any]])
        #expect(shared.count == 1 && shared.first?["title"] as? String == "Shopping")
        #expect(shared.first?["notes"] as? [String] == order.map(\.description))
        // Merged once, the copies agree: merging again reports nothing new.
        let written = pnmerge(["merge", mine, theirs])
        #expect(written.status == 0 && written.out.contains("Same title (1)"))
        let again = pnmerge(["merge", "--json", mine, theirs])
        let second = try #require(try parseJSON(again.out) as? [String: Any])
        #expect((second["sharedTitles"] as? [Any])?.isEmpty == true)
    }

    @Test("Places where both sides edited one passage of a body are listed to check, in text and JSON")
    func overlapsReported() throws {
        let dir = try TempDir()
        let base = Document(title: "T", author: "alice")
        let note = base.addNote(title: "N", body: "I saw teh cat.\n\nKeep this.\n\nDrop this paragraph.\n\nEnd.")
        let bob = base.fork(author: "bob"), chen = base.fork(author: "chen")
        try base.setBody(note, "I saw the cat.\n\nKeep this.\n\nEnd.")
        try bob.setBody(note, "I saw the cat.\n\nKeep this.\n\nDrop this paragraph, bob added a clause.\n\nEnd.")
        // Chen's edit is next to the deleted paragraph, not in it.
        try chen.setBody(note, "I saw teh cat.\n\nKeep this.\n\nDrop this paragraph.\n\nThe end.")
        let mine = try dir.write(base.save(.compact), "mine.peernote")
        let theirs = try dir.write(bob.save(.compact), "theirs.peernote")
        let r = pnmerge(["merge", "--dry-run", mine, theirs])
        #expect(r.status == 0)
        #expect(r.out.contains("""
            Check (2): both sides edited these places; every edit is kept
              note "N", line 1: both sides edited the same place: what each typed is kept, side by side
              note "N", line 5: text added on one side lies in or at the edge of text the other deleted: it is kept, without that text
            """), "\(r.out)")
        let json = pnmerge(["merge", "--dry-run", "--json", mine, theirs])
        let object = try #require(try parseJSON(json.out) as? [String: Any])
        let overlaps = try #require(object["overlaps"] as? [[String: Any]])
        #expect(overlaps.map { $0["kind"] as? String } == ["sameText", "insideDeleted"])
        #expect(overlaps.map { $0["line"] as? Int } == [1, 5])
        #expect(overlaps.first?["note"] as? String == note.description && overlaps.first?["title"] as? String == "N")
        // Edits apart, or side by side, are not listed.
        let next = try dir.write(chen.save(.compact), "next.peernote")
        let quiet = pnmerge(["merge", "--dry-run", mine, next])
        #expect(quiet.status == 0 && quiet.out.contains("edited   \"N\": body") && !quiet.out.contains("Check"), "\(quiet.out)")
        // A merge that writes finds the last copy's places while it saves: the same places with
        // -o, in place, and after another copy merged first (whose places are found before).
        let places = """
            Check (2): both sides edited these places; every edit is kept
              note "N", line 1: both sides edited the same place: what each typed is kept, side by side
              note "N", line 5: text added on one side lies in or at the edge of text the other deleted: it is kept, without that text
            """
        let out = pnmerge(["merge", mine, theirs, "-o", dir.path("out.peernote")])
        #expect(out.status == 0 && out.out.contains(places), "\(out.out)")
        let copy = try dir.write(base.save(.compact), "copy.peernote")
        let inPlace = pnmerge(["merge", copy, theirs])
        #expect(inPlace.status == 0 && inPlace.out.contains(places), "\(inPlace.out)")
        #expect(try Document.load(dir.bytes("copy.peernote")).notebook == Document.load(dir.bytes("out.peernote")).notebook)
        // Two copies: each one's places are found on the notebook its merge made, so the order
        // of the copies matters; writing or not, the report is the same.
        func checkLines(_ text: String) -> [String] { text.split(separator: "\n").map(String.init).filter { $0.contains("note \"N\", line") } }
        for order in [[next, theirs], [theirs, next]] {
            let written = pnmerge(["merge", mine] + order + ["-o", dir.path("both.peernote")])
            let dry = pnmerge(["merge", "--dry-run", mine] + order)
            #expect(written.status == 0 && dry.status == 0)
            #expect(checkLines(written.out).count >= 2 && checkLines(written.out) == checkLines(dry.out), "\(written.out)\n\(dry.out)")
        }
    }

    @Test("Check names text added at the start or end of a passage the other copy deleted, merged either way and by git-driver")
    func overlapsAtDeletedEdges() throws {
        let dir = try TempDir()
        let base = Document(title: "T", author: "alice")
        let paragraphs = base.addNote(title: "P", body: "Para one.\n\nPara two is here.\n\nPara three.")
        let sentence = base.addNote(title: "S", body: "keep. delete this sentence.")
        let lines = base.addNote(title: "L", body: "one\ntwo\nthree\n\nStart.\n\nGone.\n\nStays.")
        let bob = base.fork(author: "bob")
        try base.setBody(paragraphs, "Para one.\n\nSee: Para two is here.\n\nPara three.")
        try base.setBody(sentence, "keep. delete this sentence. Added!")
        try bob.setBody(paragraphs, "Para one.\n\nPara three.")
        try bob.setBody(sentence, "keep.")
        // Not listed: a line appended to next to a deleted line, a paragraph begun after a deleted one.
        try base.setBody(lines, "one, more\ntwo\nthree\n\nStart.\n\nGone.\n\nSo: Stays.")
        try bob.setBody(lines, "one\nthree\n\nStart.\n\nStays.")
        let a = try dir.write(base.save(.compact), "a.peernote"), b = try dir.write(bob.save(.compact), "b.peernote")
        let places = """
            Check (2): both sides edited these places; every edit is kept
              note "P", line 3: text added on one side lies in or at the edge of text the other deleted: it is kept, without that text
              note "S", line 1: text added on one side lies in or at the edge of text the other deleted: it is kept, without that text
            """
        for (mine, theirs) in [(a, b), (b, a)] {
            let r = pnmerge(["merge", "--dry-run", mine, theirs])
            #expect(r.status == 0 && r.out.contains(places + "\n") && !r.out.contains("note \"L\""), "\(r.out)")
        }
        let ours = try dir.write(base.save(.compact), "ours.peernote")
        let g = pnmerge(["git-driver", "", ours, b, "notes.peernote"])
        #expect(g.status == 0 && g.err.contains("both sides edited 2 places in note bodies") && !g.err.contains("note \"L\""), "\(g.err)")
        #expect(g.err.contains("  note \"P\", line 3: text added on one side lies in or at the edge of text the other deleted"), "\(g.err)")
        let merged = try Document.load(dir.bytes("ours.peernote"))
        #expect(merged.notes.map(\.body) == ["Para one.\n\nSee: Para three.", "keep. Added!", "one, more\nthree\n\nStart.\n\nSo: Stays."])
    }

    /// With -o (and --dry-run) the merge is built from the copy with the longer history, so a
    /// stale MINE takes in nothing; in place it is built on MINE. Either way the same notebook,
    /// the same report (bar the file it names) and, compacted, the same bytes.
    @Test("A stale MINE merged with -o or --dry-run reports and writes what a merge in place does")
    func staleMineWithOutput() throws {
        let dir = try TempDir()
        let base = Document(title: "T", author: "alice")
        let note = base.addNote(title: "N", body: "I saw teh cat.\n\nDrop this paragraph.\n\nEnd.")
        let stale = base.fork(author: "sam"), fresh = base.fork(author: "fay")
        try stale.setNoteTitle(note, "Stale")
        try stale.setBody(note, "I saw the cat.\n\nDrop this paragraph, with a clause.\n\nEnd.")
        try fresh.setNoteTitle(note, "Fresh")
        try fresh.setBody(note, "I saw thee cat.\n\nEnd.")
        for k in 0 ..< 40 { fresh.addNote(title: "more \(k)", body: String(repeating: "x", count: k)) }
        let mine = try dir.write(stale.save(), "stale.peernote"), theirs = try dir.write(fresh.save(), "fresh.peernote")
        let (mineBytes, theirsBytes) = (try dir.bytes("stale.peernote"), try dir.bytes("fresh.peernote"))
        let out = pnmerge(["merge", mine, theirs, "-o", dir.path("out.peernote")])
        let dry = pnmerge(["merge", "--dry-run", mine, theirs])
        #expect(try dir.bytes("stale.peernote") == mineBytes && dir.bytes("fresh.peernote") == theirsBytes)
        let inPlace = pnmerge(["merge", mine, theirs])
        #expect(out.status == 0 && dry.status == 0 && inPlace.status == 0, "\(out.err)\(dry.err)\(inPlace.err)")
        // The first line names the action and the last ones what was written and how to undo it
        // (a dry run writes nothing); the rest is the same, but for the file each conflict's
        // resolving command names (none for a dry run).
        func body(_ text: String) -> [String] {
            Array(text.split(separator: "\n").map { String($0.components(separatedBy: "; resolve: ")[0]) }.dropFirst().filter {
                !$0.hasPrefix("Wrote ") && !$0.hasPrefix("To undo what it brought in: ") && !$0.hasPrefix("Dry run: ")
            })
        }
        #expect(out.out.contains("; resolve: peernote resolve \(dir.path("out.peernote")) ") && inPlace.out.contains("; resolve: peernote resolve \(mine) ")
                && !dry.out.contains("; resolve: "), "\(out.out)\n\(inPlace.out)\n\(dry.out)")
        // The undo names the same changes, in the file each wrote.
        func undo(_ text: String) -> String? { text.split(separator: "\n").last.map(String.init) }
        #expect(undo(out.out)?.hasPrefix("To undo what it brought in: peernote revert \(dir.path("out.peernote")) ") == true, "\(out.out)")
        #expect(undo(inPlace.out)?.hasPrefix("To undo what it brought in: peernote revert \(mine) ") == true, "\(inPlace.out)")
        #expect(undo(out.out)?.split(separator: " ").last == undo(inPlace.out)?.split(separator: " ").last)
        #expect(!dry.out.contains("To undo"), "a dry run wrote nothing to undo")
        #expect(body(out.out) == body(inPlace.out), "\(out.out)\n\(inPlace.out)")
        #expect(body(dry.out) == body(inPlace.out), "\(dry.out)\n\(inPlace.out)")
        #expect(out.out.contains("fresh.peernote: 42 changes (fay 42)") && out.out.contains("Conflicts (1)") && out.out.contains("Check (2)"), "\(out.out)")
        let merged = try Document.load(dir.bytes("stale.peernote"))
        #expect(try dir.bytes("out.peernote") == merged.save(.compact))
    }

    @Test("Unrelated copies are refused with exit 2, both ids named, nothing written")
    func unrelated() throws {
        let dir = try TempDir()
        try Diverged().write(to: dir)
        let other = try dir.write(unrelatedDocument().save(), "work.peernote")
        let before = try dir.bytes("alice.peernote")
        let r = pnmerge(["merge", dir.path("alice.peernote"), other])
        #expect(r.status == ExitStatus.unrelated.rawValue)
        #expect(r.out.isEmpty)
        let lines = r.err.split(separator: "\n")
        #expect(lines.count == 1)
        #expect(r.err.contains(dir.path("alice.peernote")) && r.err.contains(other))
        #expect(r.err.contains("0c4b36e2-6c55-4d9a-8f0e-2b9c3e7d5a11") && r.err.contains("9a1e2f30-1111-4222-8333-944455556666"))
        #expect(try dir.bytes("alice.peernote") == before)

        // Same id, different origin: still unrelated.
        let twin = Document(title: "Home", author: "eve", id: Diverged.documentID, time: at(7, 0))
        let twinPath = try dir.write(twin.save(), "twin.peernote")
        let t = pnmerge(["merge", dir.path("alice.peernote"), twinPath])
        #expect(t.status == ExitStatus.unrelated.rawValue)
        #expect(t.err.contains("different first changes"))
        #expect(try dir.bytes("alice.peernote") == before)
    }

    @Test("Several THEIRS where a later one is unrelated or tampered: refused with exit 2 naming it, MINE untouched, no lock taken for an unrelated one")
    func laterTheirsUnrelated() throws {
        let dir = try TempDir()
        let s = try Diverged()
        try s.write(to: dir)
        let mine = dir.path("alice.peernote")
        let before = try dir.bytes("alice.peernote")
        let other = try dir.write(unrelatedDocument().save(), "work.peernote")
        // Refused on identity before the lock: the lock file is not even created.
        let lockPath = FileLock.lockFile(for: mine)
        try? FileManager.default.removeItem(atPath: lockPath)
        let r = pnmerge(["merge", mine, dir.path("bob.peernote"), other])
        #expect(r.status == ExitStatus.unrelated.rawValue)
        #expect(r.err.contains("cannot merge \(other) into \(mine)") && r.err.contains("nothing was written"))
        #expect(try dir.bytes("alice.peernote") == before)
        #expect(!FileManager.default.fileExists(atPath: lockPath))

        // The same document and first change, but another change under a replica id the
        // copies share (as a tampered or wrongly copied session would make): refused by the
        // merge's comparison of the changes both hold, after bob's were merged in memory only.
        let forged = Document(title: "Home", author: "carol", id: Diverged.documentID,
                              replica: ReplicaID(high: 0xCA40_1000_0000_0000, low: 1), time: at(9, 0))
        forged.clock = { at(9, 30) }
        forged.addNote(title: "Not the base's second change")
        let forgedPath = try dir.write(forged.save(), "forged.peernote")
        let t = pnmerge(["merge", mine, dir.path("bob.peernote"), forgedPath])
        #expect(t.status == ExitStatus.unrelated.rawValue, "\(t.err)")
        #expect(t.err.contains("cannot merge \(forgedPath) into \(mine)") && t.err.contains("with different content"))
        #expect(try dir.bytes("alice.peernote") == before)
    }

    @Test("Bad inputs: missing (66), a directory (66), not a .peernote (65), stdin written back (64); nothing written")
    func badInputs() throws {
        let dir = try TempDir()
        try Diverged().write(to: dir)
        let before = try dir.bytes("alice.peernote")

        let missing = pnmerge(["merge", dir.path("alice.peernote"), dir.path("nope.peernote")])
        #expect(missing.status == ExitStatus.noInput.rawValue)
        #expect(missing.err == "pnmerge: \(dir.path("nope.peernote")): No such file or directory\n")

        let directory = pnmerge(["merge", dir.path("alice.peernote"), dir.url.path])
        #expect(directory.status == ExitStatus.noInput.rawValue)
        #expect(directory.err.contains("is a directory"))

        let text = try dir.write(Array("hello, world\n".utf8), "notes.txt")
        let notPeernote = pnmerge(["merge", dir.path("alice.peernote"), text])
        #expect(notPeernote.status == ExitStatus.invalidInput.rawValue)
        #expect(notPeernote.err.contains("\(text): offset 0: not a .peernote file"))

        let stdin = pnmerge(["merge", "-", dir.path("bob.peernote")], input: try dir.bytes("alice.peernote"))
        #expect(stdin.status == ExitStatus.usage.rawValue)

        #expect(try dir.bytes("alice.peernote") == before)
    }

    @Test("Inputs are all read, then verified in order: the first bad one, THEIRS before MINE, is the one named")
    func badInputsInOrder() throws {
        let dir = try TempDir()
        try Diverged().write(to: dir)
        let damaged = try dir.write(Array(try dir.bytes("bob.peernote").dropLast(2)), "damaged.peernote")
        let garbage = try dir.write(Array("not a notebook".utf8), "garbage.peernote")
        let before = try dir.bytes("alice.peernote")

        let a = pnmerge(["merge", dir.path("nope.peernote"), damaged])
        #expect(a.status == ExitStatus.invalidInput.rawValue, "\(a.err)")
        #expect(a.err.hasPrefix("pnmerge: \(damaged): offset "), "\(a.err)")
        let b = pnmerge(["merge", dir.path("alice.peernote"), garbage, damaged])
        #expect(b.status == ExitStatus.invalidInput.rawValue)
        #expect(b.err.hasPrefix("pnmerge: \(garbage): offset 0: "), "\(b.err)")
        let c = pnmerge(["merge", dir.path("alice.peernote"), dir.path("bob.peernote"), dir.path("gone.peernote"), garbage])
        #expect(c.status == ExitStatus.noInput.rawValue)
        #expect(c.err == "pnmerge: \(dir.path("gone.peernote")): No such file or directory\n")
        let d = pnmerge(["merge", garbage, dir.path("bob.peernote")])
        #expect(d.status == ExitStatus.invalidInput.rawValue)
        #expect(d.err.hasPrefix("pnmerge: \(garbage): offset 0: "), "\(d.err)")
        #expect(try dir.bytes("alice.peernote") == before)
    }

    @Test("Merging into a symbolic link updates the file it points to and keeps the link")
    func symlink() throws {
        let dir = try TempDir()
        let s = try Diverged()
        try s.write(to: dir)
        let link = dir.path("link.peernote")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "alice.peernote")
        let r = pnmerge(["merge", link, dir.path("bob.peernote")])
        #expect(r.status == 0, "\(r.err)")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == "alice.peernote")
        #expect(try Document.load(dir.bytes("alice.peernote")).notebook == s.merged().notebook)
    }

    @Test("MINE from stdin with -o -")
    func fromStandardInput() throws {
        let dir = try TempDir()
        let s = try Diverged()
        try s.write(to: dir)
        let r = pnmerge(["merge", "-", dir.path("bob.peernote"), "-o", "-"], input: try dir.bytes("alice.peernote"))
        #expect(r.status == 0, "\(r.err)")
        #expect(try Document.load(r.outBytes).notebook == s.merged().notebook)
        #expect(r.err.contains("Merged <stdin> with:"))
    }

    @Test("Copies holding different values of one field a newer version wrote: merge and sync refuse them with 65, and every exit table says what 65 then means")
    func newerFieldConflict() throws {
        let dir = try TempDir()
        let a = Document(title: "Trip", author: "ann")
        a.addNote(title: "one")
        let b = try Document.load(a.save())
        a.unknownFields = [[0x14, 0x61, 0x61]]   // field 20: "a"
        b.unknownFields = [[0x14, 0x61, 0x62]]   // field 20: "b"
        let mine = try dir.write(a.save(), "a.peernote"), theirs = try dir.write(b.save(), "b.peernote")
        let before = try dir.bytes("a.peernote")
        let r = pnmerge(["merge", mine, theirs])
        #expect(r.status == ExitStatus.invalidInput.rawValue, "\(r.err)")
        #expect(r.err.contains("field 20, written by a newer version of PeerNote, with different values"), "\(r.err)")
        #expect(try dir.bytes("a.peernote") == before)
        // sync leaves such a copy alone, with the same status.
        let folder = try TempDir()
        _ = try folder.write(a.save(), "trip.peernote")
        _ = try folder.write(b.save(), "trip.sync-conflict-20260101-000000-ABCDEFG.peernote")
        #expect(pnmerge(["sync", folder.url.path]).status == ExitStatus.invalidInput.rawValue)

        // What the tables say of 65 names it: ExitStatus (so --help), pnmerge(1), merge and sync --help, README, peernote(5).
        #expect(ExitStatus.invalidInput.meaning.contains("only a newer version can handle"))
        #expect(pnmerge(["--help"]).out.contains("65  " + ExitStatus.invalidInput.meaning))
        let root = Binary.packageRoot
        let page = try String(contentsOf: root.appendingPathComponent("man/pnmerge.1"), encoding: .utf8)
        let exit = try #require(page.range(of: "\n.SH EXIT STATUS\n"))
        let entry = try #require(page.range(of: ".B 65\n", range: exit.upperBound ..< page.endIndex))
        let next = try #require(page.range(of: "\n.TP\n", range: entry.upperBound ..< page.endIndex))
        let sixtyFive = page[entry.upperBound ..< next.lowerBound]
        #expect(sixtyFive.contains("copies that hold different values of one field a newer version of PeerNote\nwrote"), "\(sixtyFive)")
        for command in ["merge", "sync"] {
            let help = pnmerge([command, "--help"]).out.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            #expect(help.contains("different values of one field a newer version"), "\(command) --help")
        }
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        #expect(readme.contains("| 65 | invalid or damaged document, or one only a newer version can handle: "))
        let format = try String(contentsOf: root.appendingPathComponent("man/peernote.5"), encoding: .utf8)
        #expect(format.contains("then names the field and exits 65"))
    }
}
