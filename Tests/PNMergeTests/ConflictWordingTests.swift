import Foundation
import PeerNote
import Testing

/// What `merge` and `show` say of conflicts whose values agree in what a reader sees.
@Suite("conflict report wording (in-process)")
struct ConflictWordingTests {
    /// Plan, Other, Third, copied to Ann and Bob, each at `minute` past ten.
    static func copies(_ names: [String]) -> [Document] {
        let base = Document(title: "Home", author: "X", time: at(9, 0))
        base.clock = { at(9, 0) }
        for title in ["Plan", "Other", "Third"] { base.addNote(title: title) }
        return names.enumerated().map { i, name in
            let d = base.fork(author: name)
            d.clock = { at(10, i + 1) }
            return d
        }
    }

    @Test("Two copies moving a note to the same index are not a conflict: merge lists none, show lists none")
    func sameIndexMovesAgree() throws {
        let docs = Self.copies(["Ann", "Bob"])
        for d in docs { try d.moveNote(try d.findNote("Plan").id, to: 2) }
        let dir = try TempDir()
        let a = try dir.write(docs[0].save(), "a.peernote"), b = try dir.write(docs[1].save(), "b.peernote")
        let r = pnmerge(["merge", a, b])
        #expect(r.status == 0, "\(r.err)")
        #expect(!r.out.contains("Conflicts") && !r.out.contains("conflict"), "\(r.out)")
        let show = pnmerge(["show", a])
        #expect(show.status == 0, "\(show.err)")
        #expect(show.out.contains("Other") && !show.out.contains("Conflicts"), "\(show.out)")
        let json = try #require(try parseJSON(pnmerge(["show", "--format", "json", a]).out) as? [String: Any])
        #expect((json["notes"] as? [[String: Any]])?.compactMap { $0["title"] as? String } == ["Other", "Third", "Plan"], "\(json)")
        #expect((json["conflicts"] as? [Any])?.isEmpty == true, "\(json)")

        // Moved to different indexes, it is one, as before.
        let other = Self.copies(["Ann", "Bob"])
        try other[0].moveNote(try other[0].findNote("Plan").id, to: 2)
        try other[1].moveNote(try other[1].findNote("Plan").id, to: 1)
        let c = try dir.write(other[0].save(), "c.peernote"), d = try dir.write(other[1].save(), "d.peernote")
        let moved = pnmerge(["merge", "--dry-run", c, d])
        #expect(moved.out.contains("Conflicts (1):\n  note \"Plan\": moved concurrently by Ann (10:01) and Bob (10:02)"), "\(moved.out)")
    }
}
