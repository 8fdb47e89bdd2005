import Foundation
@testable import PeerNote
import Testing
import TestSupport

/// `pnmerge sync` reports per copy written what `merge` reports: counted by default, listed with
/// --verbose, and in JSON with merge's key names.
@Suite("sync report")
struct SyncReportTests {
    /// A folder holding Alice's copy as the notebook and Bob's as a Syncthing conflict copy.
    static func folder() throws -> (TempDir, notes: String) {
        let s = try Diverged()
        let dir = try TempDir()
        let notes = try dir.write(s.alice.save(), "notes.peernote")
        _ = try dir.write(s.bob.save(), "notes.sync-conflict-20261126-101010-ABCDEF7.peernote")
        return (dir, notes)
    }

    @Test("Each copy written gets one line counting the notes it received, its new conflicts and the places to check")
    func compact() throws {
        let (dir, notes) = try Self.folder()
        let r = try Binary.require().run(["sync", dir.url.path])
        #expect(r.status == 0, "\(r.err)")
        let lines = r.out.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let wrote = try #require(lines.firstIndex { $0.hasPrefix("  wrote \(notes): +") }, "\(r.out)")
        // Bob's copy brought the note Boat, his body of Ideas and his title of Food (Shopping, to
        // Alice, is now Groceries: a title conflict), and edited Old, which Alice deleted.
        #expect(lines[wrote + 1] == "    notes 1 added, 2 edited; 2 new conflicts", "\(r.out)")
        #expect(!r.out.contains("Conflicts ("), "listed only with --verbose: \(r.out)")
    }

    @Test("--verbose lists the notes and conflicts of each copy written as merge lists them")
    func verbose() throws {
        let (dir, notes) = try Self.folder()
        let r = try Binary.require().run(["sync", "--verbose", dir.url.path])
        #expect(r.status == 0, "\(r.err)")
        #expect(r.out.contains("  wrote \(notes): +"), "\(r.out)")
        #expect(r.out.contains("\n    added    \"Boat\"\n"), "\(r.out)")
        #expect(r.out.contains("\n    edited   \"Ideas\": body\n"), "\(r.out)")
        #expect(r.out.contains("\n    Conflicts (1):\n"), "\(r.out)")
        #expect(r.out.contains("\n    Deleted on one side, edited on the other (1):\n"), "\(r.out)")
        #expect(!r.out.contains("notes 1 added"), "the count line gives way to the list: \(r.out)")
    }

    @Test("--verbose and --json: each conflict of a copy written names the command that resolves it there; a dry run names none")
    func resolveCommands() throws {
        let (dir, notes) = try Self.folder()
        let dry = try Binary.require().run(["sync", "--verbose", "--dry-run", dir.url.path])
        #expect(dry.status == 0 && dry.out.contains("Conflicts (1):") && !dry.out.contains("; resolve: "), "\(dry.out)")
        let dryJSON = try Binary.require().run(["sync", "--json", "--dry-run", dir.url.path])
        #expect(dryJSON.status == 0 && !dryJSON.out.contains("\"resolve\""), "\(dryJSON.out)")

        let r = try Binary.require().run(["sync", "--verbose", dir.url.path])
        #expect(r.status == 0, "\(r.err)")
        let commands = r.out.split(separator: "\n").compactMap { line -> String? in
            line.range(of: "; resolve: ").map { String(line[$0.upperBound...]).components(separatedBy: " (N: ")[0] }
        }
        #expect(commands.count == 2 && commands.allSatisfy { $0.hasPrefix("peernote resolve \(notes) ") }, "\(r.out)")
        // Each runs as printed (N = 1) and closes its conflict.
        for command in commands {
            let words = command.split(separator: " ").dropFirst().map { $0 == "N" ? "1" : String($0) }
            let run = try Tool.peernote.run(words + ["--author", "dana"], environment: ["TZ": "UTC", "NO_COLOR": "1"])
            #expect(run.status == 0, "\(command): \(run.err)")
        }
        #expect(try Document.load(dir.bytes("notes.peernote")).conflicts.isEmpty)

        let (again, againNotes) = try Self.folder()
        let j = try Binary.require().run(["sync", "--json", again.url.path])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(j.out.utf8)) as? [String: Any])
        let files = try #require((object["notebooks"] as? [[String: Any]])?.first?["files"] as? [[String: Any]])
        let written = try #require(files.first { $0["action"] as? String == "written" })
        let resolve = try #require(written["conflicts"] as? [[String: Any]]).compactMap { $0["resolve"] as? String }
        #expect(resolve.count == 2 && resolve.allSatisfy { $0.hasPrefix("peernote resolve \(againNotes) ") }, "\(resolve)")
    }

    @Test("--json gives each copy written with merge's key names, and the conflict copies removed")
    func json() throws {
        let (dir, notes) = try Self.folder()
        let r = try Binary.require().run(["sync", "--json", dir.url.path])
        #expect(r.status == 0, "\(r.err)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
        #expect(object["written"] as? Int == 1 && object["removed"] as? Int == 1 && object["dryRun"] as? Bool == false)
        let notebooks = try #require(object["notebooks"] as? [[String: Any]])
        let files = try #require(notebooks.first?["files"] as? [[String: Any]])
        let written = try #require(files.first { $0["action"] as? String == "written" })
        #expect(written["file"] as? String == notes)
        for key in ["changes", "authors", "bytesWritten", "notebookTitle", "notes", "conflicts", "overlaps"] {
            #expect(written[key] != nil, "\(key) missing: \(written.keys.sorted())")
        }
        let changes = try #require(written["notes"] as? [[String: Any]])
        #expect(changes.contains { $0["change"] as? String == "added" && $0["title"] as? String == "Boat" })
        let conflicts = try #require(written["conflicts"] as? [[String: Any]])
        #expect(conflicts.count == 2 && conflicts.allSatisfy { $0["new"] as? Bool == true })
        #expect(files.contains { $0["action"] as? String == "removed" && $0["tool"] as? String == "Syncthing conflict copy" })
    }
}
