import Foundation
import PeerNote
import PeerNoteCLISupport
import Testing
import TestSupport
@testable import PNMergeCommands

@Suite("git-driver, textconv and compact (in-process)")
struct GitCommandTests {
    // MARK: git-driver

    @Test("git-driver merges THEIRS into OURS by appending, with BASE empty or missing, and exits 0")
    func driverMerges() throws {
        let dir = try TempDir()
        let s = try Diverged()
        try s.write(to: dir)
        let empty = try dir.write([], "base-empty")
        for base in [dir.path("base.peernote"), empty, dir.path("no-such-base")] {
            let ours = try dir.write(s.alice.save(), "ours")
            let before = try dir.bytes("ours")
            let r = pnmerge(["git-driver", base, ours, dir.path("bob.peernote"), "notes.peernote"])
            #expect(r.status == 0, "\(r.err)")
            #expect(r.out.isEmpty)
            #expect(r.err.hasPrefix("pnmerge: notes.peernote: merged; 2 conflicts kept in the notebook (see: pnmerge show notes.peernote):\n"), "\(r.err)")
            let after = try dir.bytes("ours")
            #expect(Array(after.prefix(before.count)) == before, "appended, not rewritten")
            #expect(try Document.load(after).notebook == s.merged().notebook)
        }
        // No lock file or temporary file is left beside OURS.
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: dir.url.path).filter { $0.hasPrefix(".") }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }

    /// THEIRS is held as its history unless its file is the larger: either way OURS gains one
    /// block, and reads as the two copies merged.
    @Test("git-driver with THEIRS larger or smaller than OURS: OURS appended, the merged notebook")
    func driverTheirsLargerOrSmaller() throws {
        let dir = try TempDir()
        let copies = try SmallAndLarge()
        for (ours, theirs) in [(copies.small, copies.large), (copies.large, copies.small)] {
            let expected = ours.fork()
            try expected.merge(theirs)
            let oursPath = try dir.write(ours.save(), "ours"), theirsPath = try dir.write(theirs.save(), "theirs")
            let before = try dir.bytes("ours")
            let r = pnmerge(["git-driver", "", oursPath, theirsPath, "n.peernote"])
            #expect(r.status == 0, "\(r.err)")
            let after = try dir.bytes("ours")
            #expect(Array(after.prefix(before.count)) == before, "appended, not rewritten")
            #expect(try Document.load(after).save(.compact) == expected.save(.compact))
        }
    }

    @Test("git-driver leaves OURS byte-identical when it already has every change")
    func driverUpToDate() throws {
        let dir = try TempDir()
        let s = try Diverged()
        let ours = try dir.write(try s.merged().save(.compact), "ours")
        let before = try dir.bytes("ours")
        let theirs = try dir.write(s.bob.save(), "theirs")
        let r = pnmerge(["git-driver", "", ours, theirs, "n.peernote"])
        #expect(r.status == 0, "\(r.err)")
        #expect(r.err.isEmpty, "nothing new, nothing said: \(r.err)")
        #expect(try dir.bytes("ours") == before)
    }

    @Test("git-driver: unrelated or damaged sides exit 1 (a git conflict), OURS untouched, stderr names PATH")
    func driverRefuses() throws {
        let dir = try TempDir()
        let s = try Diverged()
        try s.write(to: dir)
        var flipped = s.bob.save()
        flipped[flipped.count - 8] ^= 0x04
        let cases: [(theirs: [UInt8], oursBytes: [UInt8], expect: String)] = [
            (unrelatedDocument().save(), s.alice.save(), "cannot merge notes.peernote (theirs) into notes.peernote (ours): they are different documents"),
            (flipped, s.alice.save(), "notes.peernote (theirs): offset "),
            (s.bob.save(), Array("not a notebook".utf8), "notes.peernote (ours): offset 0: "),
            (s.bob.save(), [], "notes.peernote (ours): offset 0: file is empty"),
        ]
        for c in cases {
            let ours = try dir.write(c.oursBytes, "ours")
            let theirs = try dir.write(c.theirs, "theirs")
            let r = pnmerge(["git-driver", dir.path("base.peernote"), ours, theirs, "notes.peernote"])
            #expect(r.status == ExitStatus.conflict.rawValue, "\(r.err)")
            #expect(r.err.hasPrefix("pnmerge: "), "\(r.err)")
            #expect(r.err.contains(c.expect), "\(r.err)")
            #expect(r.err.hasSuffix("left our version of notes.peernote as it was, for git to mark as a conflict\n"))
            #expect(r.err.split(separator: "\n").count == 1)
            #expect(try dir.bytes("ours") == c.oursBytes)
        }
        // Without PATH, each side is named by its own file.
        let ours = try dir.write(s.alice.save(), "ours")
        let theirs = try dir.write(unrelatedDocument().save(), "theirs")
        let r = pnmerge(["git-driver", "", ours, theirs])
        #expect(r.status == 1)
        #expect(r.err.contains("\(ours) (ours)") && r.err.contains("\(theirs) (theirs)"), "\(r.err)")
        let missing = dir.path("nope.peernote")
        let gone = pnmerge(["git-driver", "", ours, missing])
        #expect(gone.status == 1)
        #expect(gone.err.hasPrefix("pnmerge: \(missing) (theirs): "), "\(gone.err)")
        #expect(try dir.bytes("ours") == s.alice.save())
    }

    // MARK: textconv

    @Test("textconv: title, a header per note (title, short id, priority, tags), indented body, conflicts last")
    func textconvLayout() throws {
        let dir = try TempDir()
        let merged = try Diverged().merged()
        let file = try dir.write(merged.save(.compact), "m.peernote")
        let r = pnmerge(["textconv", file])
        #expect(r.status == 0)
        let boat = try #require(merged.notes.first { $0.title == "Boat" })
        let lines = r.out.components(separatedBy: "\n")
        #expect(lines.first == "# Home")
        #expect(lines.contains("## Boat  [\(boat.id.short)] priority: low tags: dream"))
        #expect(r.out.contains("## Boat  [\(boat.id.short)] priority: low tags: dream\n    wood\n"))
        #expect(r.out.contains("## Plan  ["))
        #expect(r.out.contains("    Monday: call Bob\n"))
        let conflictsAt = try #require(lines.firstIndex(of: "Conflicts (2):"))
        #expect(lines[conflictsAt + 1].hasPrefix("  note "))
        #expect(!lines[..<conflictsAt].contains { $0.hasPrefix("  note ") })
        #expect(!lines.contains { $0.hasPrefix("## Old") }, "a deleted note has no header (it is named only in its conflict)")
    }

    @Test("textconv is stable: the same notebook gives the same text whatever the file layout, time zone or run")
    func textconvStable() throws {
        let dir = try TempDir()
        let s = try Diverged()
        let ab = try s.merged()
        let ba = s.bob.fork()
        try ba.merge(s.alice)
        // An appended file (base + block) and two compact ones reached in different merge orders.
        let appendedDoc = try Document.load(s.alice.save())
        try appendedDoc.merge(s.bob)
        let files = [
            try dir.write(ab.save(.compact), "ab.peernote"),
            try dir.write(ba.save(.compact), "ba.peernote"),
            try dir.write(appendedDoc.save(.incremental), "appended.peernote"),
        ]
        #expect(try dir.bytes("ab.peernote") != dir.bytes("appended.peernote"))
        let texts = files.map { pnmerge(["textconv", $0]).out }
        #expect(Set(texts).count == 1)
        let tokyo = CapturedOutput(timeZone: .offset(seconds: 9 * 3600))
        #expect(PNMerge.execute(["textconv", files[0]], output: tokyo) == 0)
        #expect(tokyo.standardOutput == texts[0])
        #expect(pnmerge(["textconv", files[0]]).out == texts[0])
    }

    @Test("textconv: an empty file prints nothing; a damaged one prints a line saying so and exits 0 (so git log -p goes on)")
    func textconvInputs() throws {
        let dir = try TempDir()
        let empty = try dir.write([], "empty.peernote")
        let r = pnmerge(["textconv", empty])
        #expect(r.status == 0 && r.out.isEmpty && r.err.isEmpty)
        let bad = try dir.write(Array("not cbor".utf8), "bad.peernote")
        let d = pnmerge(["textconv", bad])
        #expect(d.status == 0)
        #expect(d.out.hasPrefix("(not a valid .peernote document: offset 0: "), "\(d.out)")
        #expect(d.err.hasPrefix("pnmerge: \(bad): offset 0: "))
        let missing = pnmerge(["textconv", dir.path("gone.peernote")])
        #expect(missing.status == ExitStatus.noInput.rawValue)
    }

    // MARK: compact

    @Test("compact rewrites an appended file as one canonical block, reports sizes, and leaves a compact file alone")
    func compact() throws {
        let dir = try TempDir()
        let s = try Diverged()
        let file = try dir.write(s.alice.save(), "a.peernote")
        let editing = try Document.load(try dir.bytes("a.peernote"))
        editing.addNote(title: "More", body: "one more")
        try editing.write(to: file)
        try editing.merge(s.bob)
        try editing.write(to: file)
        let before = try dir.bytes("a.peernote")
        #expect(try Document.storageReport(before).blockCount == 3)

        let r = pnmerge(["compact", file])
        #expect(r.status == 0, "\(r.err)")
        let after = try dir.bytes("a.peernote")
        #expect(r.out == "\(file): \(before.count) bytes (3 blocks) → \(after.count) bytes (1 block)\n")
        #expect(try Document.storageReport(after).blockCount == 1)
        #expect(after == (try Document.load(before)).save(.compact), "canonical form")
        #expect(try Document.load(after).notebook == Document.load(before).notebook)
        #expect(try Document.load(after).changeCount == Document.load(before).changeCount, "no history lost")

        let again = pnmerge(["compact", file])
        #expect(again.status == 0)
        #expect(again.out == "\(file): already compact (\(after.count) bytes)\n")
        #expect(try dir.bytes("a.peernote") == after)
    }

    /// Diverged copies, and alice's with bob's changes merged in, saved with an appended block (not compact).
    static func appendedMerge() throws -> (Diverged, [UInt8]) {
        let s = try Diverged()
        let doc = try Document.load(s.alice.save())
        try doc.merge(s.bob)
        return (s, doc.save(.incremental))
    }

    @Test("compact of several files reads their folder once for leftovers, and still removes a stale temporary file beside the one that has it")
    func compactSeveralCleansUp() throws {
        let dir = try TempDir()
        let (_, appended) = try Self.appendedMerge()
        let files = try (1 ... 3).map { try dir.write(appended, "n\($0).peernote") }
        let stale = try dir.write([1, 2, 3], ".n2.peernote.tmp-Ab12Cd")
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-3_600)], ofItemAtPath: stale)
        let r = pnmerge(["compact"] + files)
        #expect(r.status == 0, "\(r.err)")
        #expect(!FileManager.default.fileExists(atPath: stale), "the lock of n2.peernote cleaned up beside it")
        for f in files { #expect(try Document.storageReport(try FileStore.read(f)).blockCount == 1) }
    }

    @Test("compact: a damaged file is reported and left alone while the others are compacted; stdin is refused")
    func compactErrors() throws {
        let dir = try TempDir()
        let (s, appended) = try Self.appendedMerge()
        let good = try dir.write(appended, "good.peernote")
        let bad = try dir.write(Array(s.bob.save().dropLast(3)), "bad.peernote")
        let badBytes = try dir.bytes("bad.peernote")
        let r = pnmerge(["compact", bad, good])
        #expect(r.status == ExitStatus.invalidInput.rawValue)
        #expect(r.err.hasPrefix("pnmerge: \(bad): offset "))
        #expect(r.out.hasPrefix("\(good): "))
        #expect(try dir.bytes("bad.peernote") == badBytes)
        #expect(try Document.storageReport(dir.bytes("good.peernote")).blockCount == 1)
        #expect(pnmerge(["compact", "-"]).status == ExitStatus.usage.rawValue)
    }
}
