import Foundation
import PeerNote
import Testing
import TestSupport

/// `merge` lists the conflicts MINE did not have and counts on one line those it had; `diff`
/// counts those either copy has.
@Suite("conflicts from before a merge (in-process)")
struct ConflictAgeTests {
    /// alice's and bob's copies of one notebook (Plan, Shop, Old), written to `dir`:
    /// - alice already has a title conflict on Plan (merged from carol), bob a priority conflict
    ///   on Shop (merged from dave): one each, from before;
    /// - alice retitles Shop and deletes Old; bob retitles Shop and edits Old: two conflicts
    ///   that merging them makes.
    /// Also writes `eve.peernote`, which retitled Plan too (merged in, Plan's conflict grows).
    static func copies() throws -> TempDir {
        let base = Document(title: "Home", author: "base", time: at(9, 0))
        base.clock = { at(9, 0) }
        let plan = base.addNote(title: "Plan"), shop = base.addNote(title: "Shop"), old = base.addNote(title: "Old", body: "stale")
        func copy(_ author: String, _ minute: Int) -> Document {
            let d = base.fork(author: author)
            d.clock = { at(10, minute) }
            return d
        }
        let alice = copy("alice", 1), bob = copy("bob", 2), carol = copy("carol", 3), dave = copy("dave", 4), eve = copy("eve", 5)
        try alice.setNoteTitle(plan, "Plan A")
        try carol.setNoteTitle(plan, "Plan C")
        try alice.merge(carol)
        try bob.setPriority(shop, .high)
        try dave.setPriority(shop, .low)
        try bob.merge(dave)
        try alice.setNoteTitle(shop, "Shop A")
        try alice.deleteNote(old)
        try bob.setNoteTitle(shop, "Shop B")
        try bob.setBody(old, "still stale")
        try eve.setNoteTitle(plan, "Plan E")
        let dir = try TempDir()
        _ = try dir.write(alice.save(), "alice.peernote")
        _ = try dir.write(bob.save(), "bob.peernote")
        _ = try dir.write(eve.save(), "eve.peernote")
        return dir
    }

    /// The conflict lines of a text report (indented, naming a note).
    static func conflictLines(_ text: String) -> [String] {
        text.split(separator: "\n").map(String.init).filter { $0.hasPrefix("  note ") }
    }

    @Test("Merged either way, the conflict MINE had is counted and every other one listed (the merge made it, or THEIRS had it), in text and JSON",
          arguments: [("alice", "bob", "noteTitle Plan"), ("bob", "alice", "priority Shop")])
    func mergeListsNewCountsOld(mine: String, theirs: String, minesOwn: String) throws {
        let dir = try Self.copies()
        let mineFile = dir.path(mine + ".peernote"), theirsFile = dir.path(theirs + ".peernote")

        let dry = pnmerge(["merge", "--dry-run", mineFile, theirsFile])
        #expect(dry.status == 0, "\(dry.err)")
        #expect(dry.out.contains("Conflicts (2):\n  note \""), "\(dry.out)")
        #expect(dry.out.contains("Deleted on one side, edited on the other (1):\n  note \"Old\": deleted by alice"), "\(dry.out)")
        #expect(dry.out.contains("\n1 conflict from before this merge would still be open.\n"), "\(dry.out)")
        let lines = Self.conflictLines(dry.out)
        #expect(lines.count == 3, "\(dry.out)")
        // MINE's own is counted, not listed; THEIRS's own is listed (MINE never had it).
        let plan = lines.contains { $0.contains("\"Plan C\"") }, priority = lines.contains { $0.contains("priority \"") }
        #expect(mine == "alice" ? (!plan && priority) : (plan && !priority), "\(dry.out)")

        let json = try #require(try parseJSON(pnmerge(["merge", "--dry-run", "--json", mineFile, theirsFile]).out) as? [String: Any])
        let conflicts = try #require(json["conflicts"] as? [[String: Any]])
        let flags = Dictionary(conflicts.map { ("\($0["kind"] as? String ?? "?") \($0["title"] as? String ?? "")", $0["new"] as? Bool) },
                               uniquingKeysWith: { a, _ in a })
        #expect(conflicts.count == 4, "\(conflicts)")
        #expect(flags.filter { $0.value == false }.keys.map { String($0.prefix(minesOwn.count)) } == [minesOwn], "\(flags)")
        #expect(flags.filter { $0.value == true }.count == 3, "\(flags)")

        let merged = pnmerge(["merge", mineFile, theirsFile])
        #expect(merged.status == 0, "\(merged.err)")
        #expect(merged.out.contains("\n1 conflict from before this merge is still open (see: pnmerge show \(mineFile)).\n"), "\(merged.out)")
        #expect(Self.conflictLines(merged.out).count == 3, "\(merged.out)")
        // Merged again: nothing new, and every conflict is from before.
        let again = pnmerge(["merge", mineFile, theirsFile])
        #expect(again.out.hasPrefix("Already up to date"), "\(again.out)")
        #expect(again.out.contains("\n4 conflicts from before this merge are still open (see: pnmerge show \(mineFile)).\n"), "\(again.out)")
        #expect(Self.conflictLines(again.out).isEmpty, "\(again.out)")
        // Written to a device: counted, but nothing to show (no "see: pnmerge show /dev/null").
        let device = pnmerge(["merge", mineFile, mineFile, "-o", "/dev/null"])
        #expect(device.status == 0, "\(device.err)")
        #expect(device.out.contains("\n4 conflicts from before this merge are still open.\n"), "\(device.out)")
    }

    @Test("A note deleted on a copy that MINE merges in after a THEIRS took in MINE's edit is listed to MINE, not counted as from before")
    func conflictOnlyTheirsHadIsListed() throws {
        let base = Document(title: "Home", author: "X", time: at(9, 0))
        base.clock = { at(9, 0) }
        let plan = base.addNote(title: "Plan", body: "text")
        let ann = base.fork(author: "Ann"), bob = base.fork(author: "Bob")
        ann.clock = { at(10, 1) }
        bob.clock = { at(10, 2) }
        try ann.deleteNote(plan)
        try bob.setBody(plan, "text, edited by Bob")
        // The tablet took in both: it has the conflict; Bob's own copy never did.
        let tablet = ann.fork()
        try tablet.merge(bob)
        try #require(tablet.conflicts.count == 1 && bob.conflicts.isEmpty)
        let dir = try TempDir()
        let bobFile = try dir.write(bob.save(), "bob.peernote"), tabletFile = try dir.write(tablet.save(), "tablet.peernote")

        let r = pnmerge(["merge", "--dry-run", bobFile, tabletFile])
        #expect(r.status == 0, "\(r.err)")
        #expect(r.out.contains("Deleted on one side, edited on the other (1):\n  note \"Plan\": deleted by Ann (10:01) while edited by Bob (10:02)"), "\(r.out)")
        #expect(!r.out.contains("from before this merge"), "\(r.out)")
        let json = try #require(try parseJSON(pnmerge(["merge", "--dry-run", "--json", bobFile, tabletFile]).out) as? [String: Any])
        let conflicts = try #require(json["conflicts"] as? [[String: Any]])
        #expect(conflicts.count == 1 && conflicts.first?["new"] as? Bool == true, "\(conflicts)")

        // The other way round, the tablet had it: counted, not listed.
        let back = pnmerge(["merge", "--dry-run", tabletFile, bobFile])
        #expect(back.status == 0, "\(back.err)")
        #expect(back.out.contains("1 conflict from before this merge"), "\(back.out)")
        #expect(Self.conflictLines(back.out).isEmpty, "\(back.out)")
    }

    @Test("A conflict a merge adds a value to is listed (neither copy had it so), with every value")
    func grownConflictIsNew() throws {
        let dir = try Self.copies()
        let r = pnmerge(["merge", "--dry-run", dir.path("alice.peernote"), dir.path("eve.peernote")])
        #expect(r.status == 0, "\(r.err)")
        let lines = Self.conflictLines(r.out)
        #expect(lines.count == 1 && lines.first?.contains("\"Plan A\"") == true && lines.first?.contains("\"Plan C\"") == true
                && lines.first?.contains("\"Plan E\"") == true, "\(r.out)")
        #expect(!r.out.contains("from before this merge"), "\(r.out)")
    }

    @Test("diff lists the conflicts merging would make and counts those one copy already has, in text and JSON")
    func diffListsNewCountsOld() throws {
        let dir = try Self.copies()
        let r = pnmerge(["diff", dir.path("alice.peernote"), dir.path("bob.peernote")])
        #expect(r.status == 0, "\(r.err)")
        #expect(r.out.contains("Conflicts once merged (1):\n  note \"Shop "), "\(r.out)")
        #expect(r.out.contains("Deleted on one side, edited on the other, once merged (1):\n"), "\(r.out)")
        #expect(r.out.hasSuffix("\n2 conflicts that one copy already has would still be open once merged.\n"), "\(r.out)")
        #expect(Self.conflictLines(r.out).count == 2, "\(r.out)")
        let json = try #require(try parseJSON(pnmerge(["diff", "--json", dir.path("alice.peernote"), dir.path("bob.peernote")]).out) as? [String: Any])
        let conflicts = try #require(json["conflicts"] as? [[String: Any]])
        #expect(conflicts.compactMap { $0["new"] as? Bool }.sorted { !$0 && $1 } == [false, false, true, true], "\(conflicts)")
    }
}
