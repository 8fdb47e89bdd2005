import Foundation
import Testing
@testable import PeerNote

/// Strings are compared, deduplicated and sorted by their exact Unicode scalars, never by
/// canonical equivalence (peernote(5), CONVENTIONS): "é" as U+00E9 (NFC) and "e" + U+0301
/// (NFD) are two strings, though Swift's `String ==` calls them equal.
@Suite("Strings compare by their exact scalars")
struct ExactStringTests {
    static let nfc = "caf\u{E9}"
    static let nfd = "cafe\u{301}"
    static let joseNFC = "Jos\u{E9}"
    static let joseNFD = "Jose\u{301}"

    /// The strings' UTF-8 bytes: what the comparisons below check (an `==` of `String`s would
    /// not see the difference they are about).
    static func bytes(_ strings: [String]) -> [[UInt8]] { strings.map { Array($0.utf8) } }

    @Test("The two spellings are canonically equivalent: String == cannot tell them apart")
    func premise() {
        #expect(Self.nfc == Self.nfd)
        #expect(Array(Self.nfc.utf8) != Array(Self.nfd.utf8))
        #expect(!Self.nfc.hasSameScalars(as: Self.nfd))
        #expect(Self.nfc.hasSameScalars(as: "caf\u{E9}"))
        #expect(ExactString(Self.nfc) != ExactString(Self.nfd))
        #expect(Set([ExactString(Self.nfc), ExactString(Self.nfd), ExactString(Self.nfc)]).count == 2)
        // Scalar order, which is UTF-8 byte order: "e" + U+0301 comes before "f"; `<` puts
        // its NFC form U+00E9 after "f".
        #expect(["f", "e\u{301}", "a"].sortedByScalars() == ["a", "e\u{301}", "f"].map { $0 })
        #expect(Self.bytes(["f", "e\u{301}"].sortedByScalars()) == Self.bytes(["e\u{301}", "f"]))
        #expect(Self.bytes([Self.nfc, Self.nfd, Self.nfc].uniquedByScalars()) == Self.bytes([Self.nfc, Self.nfd]))
    }

    @Test("Authors and messages keep their bytes through save, load, the string table and a merge")
    func authorsAndMessages() throws {
        let d = Document(title: "T", author: Self.joseNFC, replica: ReplicaID(high: 1, low: 1), time: Date(timeIntervalSince1970: 1_700_000_000))
        d.clock = { Date(timeIntervalSince1970: 1_700_000_060) }
        let n = d.transaction(message: Self.nfc) { d.addNote(title: "x") }
        d.author = Self.joseNFD
        try d.transaction(message: Self.nfd) { try d.setNoteTitle(n, "y") }
        try d.transaction(message: Self.nfd) { try d.setNoteTitle(n, "z") }
        let wantAuthors = Self.bytes([Self.joseNFC, Self.joseNFC, Self.joseNFD, Self.joseNFD])
        let wantMessages = Self.bytes(["Create notebook", Self.nfc, Self.nfd, Self.nfd])
        #expect(Self.bytes(d.history.map(\.author)) == wantAuthors)
        #expect(Self.bytes(d.history.map(\.message)) == wantMessages)
        #expect(Self.bytes(d.replicas.flatMap(\.authors)) == Self.bytes([Self.joseNFC, Self.joseNFD]))
        // The block's string table holds each spelling once: both of them.
        let compact = d.save()
        let block = try WireCodec.decodePayload(try BlockCodec.decode(compact)[0], fileSize: compact.count)
        #expect(Self.bytes(block.strings) == Self.bytes(["", Self.joseNFC, "Create notebook", Self.nfc, Self.joseNFD, Self.nfd]))
        let e = try Document.load(compact)
        #expect(Self.bytes(e.history.map(\.author)) == wantAuthors)
        #expect(Self.bytes(e.history.map(\.message)) == wantMessages)
        #expect(e.save() == compact)
        // An appended block by the other spelling, and a merge into a copy that knew only one.
        e.author = Self.joseNFC
        try e.transaction(message: Self.nfc) { try e.setNoteTitle(n, "w") }
        let appended = e.save(.incremental)
        #expect(try BlockCodec.decode(appended).count == 2)
        let f = try Document.load(appended)
        #expect(Self.bytes(f.history.map(\.author)) == wantAuthors + Self.bytes([Self.joseNFC]))
        #expect(Self.bytes(f.history.map(\.message)) == wantMessages + Self.bytes([Self.nfc]))
        let g = d.fork(author: "g")
        try g.merge(f)
        #expect(Self.bytes(g.history.map(\.author)) == wantAuthors + Self.bytes([Self.joseNFC]))
        #expect(Self.bytes(g.history.map(\.message)) == wantMessages + Self.bytes([Self.nfc]))
    }

    @Test("Tags spelled NFC and NFD are two tags through save, load, the state section and a merge")
    func twoTags() throws {
        let d = Document(title: "T", author: "a")
        let n = d.addNote(title: "x", body: "text", tags: [Self.nfc, "f", "e\u{301}"])
        try d.addTag(n, Self.nfd)
        // Sorted by scalars: "cafe\u{301}" before "caf\u{E9}" ("e" is below U+00E9), "e\u{301}" before "f".
        let want = Self.bytes([Self.nfd, Self.nfc, "e\u{301}", "f"])
        #expect(Self.bytes(d.notes[0].tags) == want)
        let compact = d.save()
        let block = try WireCodec.decodePayload(try BlockCodec.decode(compact)[0], fileSize: compact.count)
        #expect(Self.bytes(try #require(block.state).notes[0].tags) == want)
        #expect(Self.bytes(try Document.readNotebook(compact).notes[0].tags) == want)
        let loaded = try Document.load(compact)
        #expect(Self.bytes(loaded.notes[0].tags) == want)
        try loaded.setPriority(n, .high)
        #expect(Self.bytes(try Document.load(loaded.save(.incremental)).notes[0].tags) == want)
        // Removing one spelling leaves the other, here and after a merge.
        let other = d.fork(author: "b")
        try other.removeTag(n, Self.nfd)
        #expect(Self.bytes(other.notes[0].tags) == Self.bytes([Self.nfc, "e\u{301}", "f"]))
        try d.merge(other)
        #expect(Self.bytes(d.notes[0].tags) == Self.bytes([Self.nfc, "e\u{301}", "f"]))
        #expect(Self.bytes(try Document.load(d.save()).notes[0].tags) == Self.bytes([Self.nfc, "e\u{301}", "f"]))
    }

    @Test("A title respelled in other scalars is an edit, shows in a diff, and is found only as spelled (or as the title it had)")
    func titles() throws {
        let d = Document(title: Self.nfc, author: "a")
        let n = d.addNote(title: Self.nfc)
        let before = d.notebook, beforePlaces = d.notePlaces
        let changes = d.changeCount
        d.setTitle(Self.nfd)
        try d.setNoteTitle(n, Self.nfd)
        #expect(d.changeCount == changes + 2)
        #expect(Self.bytes([d.title, d.notes[0].title]) == Self.bytes([Self.nfd, Self.nfd]))
        // The values differ too (the synthesized == would compare the titles canonically).
        #expect(before.notes[0] != d.notes[0])
        #expect(Set([before.notes[0], d.notes[0]]).count == 2)
        #expect(before != d.notebook)
        let diff = NotebookDiff(from: before, placed: beforePlaces, to: d.notebook, placed: d.notePlaces)
        #expect(!diff.isEmpty)
        #expect(diff.changes.count == 1)
        if case .edited(_, _, let fields) = diff.changes.first { #expect(fields == [.title]) } else { Issue.record("no edit: \(diff.changes)") }
        #expect(try d.findNote(Self.nfd).id == n)
        // The old spelling finds the note only as a title it had before (no note has it now).
        #expect(try d.findNote(Self.nfc).id == n)
        let only = d.addNote(title: "t" + Self.nfd)
        #expect(throws: PeerNoteError.noSuchNote("t" + Self.nfc)) { try d.findNote("t" + Self.nfc) }
        #expect(try d.findNote("t" + Self.nfd).id == only)
    }

    @Test("Concurrent titles spelled NFC and NFD are a listed conflict")
    func conflicts() throws {
        let d = Document(title: "T", author: "a")
        let n = d.addNote(title: "x")
        let a = d.fork(author: "a"), b = d.fork(author: "b")
        try a.setNoteTitle(n, Self.nfc)
        try b.setNoteTitle(n, Self.nfd)
        try a.merge(b)
        #expect(a.conflicts.count == 1)
        guard case .noteTitle(_, let values, _)? = a.conflicts.first else { Issue.record("\(a.conflicts)"); return }
        #expect(Set(values.map { ExactString($0.value) }) == [ExactString(Self.nfc), ExactString(Self.nfd)])
        // A compact save of a document with a conflict has no state section, whichever spelling wins.
        #expect(try Self.stateOfOnlyBlock(a.save()) == nil)
    }

    static func stateOfOnlyBlock(_ bytes: [UInt8]) throws -> WireState? {
        try WireCodec.decodePayload(try BlockCodec.decode(bytes)[0], fileSize: bytes.count).state
    }

    @Test("Two copies holding one change id, spelled differently, are refused, by both shared-history checks")
    func sharedHistory() throws {
        let base = Document(title: "T", author: "a")
        let note = base.addNote(title: "N")
        let reused = ReplicaID(high: 7, low: 7)
        for (x, y) in [(Self.nfc, Self.nfd)] {
            // The same edit with the title spelled two ways; then the same edit by an author spelled two ways.
            // Copies of `base` that reuse one replica id, at one fixed time.
            func copy(author: String) -> Document {
                let d = Document(id: base.id, genesis: base.genesis, log: base.log, state: base.state, replica: reused, author: author)
                d.clock = { Date(timeIntervalSince1970: 1_700_000_000) }
                return d
            }
            let one = copy(author: "one"), two = copy(author: "one")
            try one.setNoteTitle(note, x)
            try two.setNoteTitle(note, y)
            #expect(!one.log.sharesHistory(with: two.log))
            var a = one.log, b = two.log
            let sameByFingerprints = a.sharesHistoryByFingerprints(with: &b)
            #expect(!sameByFingerprints)
            #expect(throws: PeerNoteError.unrelated(.conflictingChange(ChangeID(replica: reused, seq: 1)))) { try one.merge(two) }

            let three = copy(author: Self.joseNFC), four = copy(author: Self.joseNFD)
            try three.setNoteTitle(note, x)
            try four.setNoteTitle(note, x)
            #expect(!three.log.sharesHistory(with: four.log))
            var c = three.log, e = four.log
            let sameAuthorsByFingerprints = c.sharesHistoryByFingerprints(with: &e)
            #expect(!sameAuthorsByFingerprints)
        }
    }

    @Test("A state section whose tag or title is spelled otherwise than the history is refused")
    func stateSectionCheck() throws {
        let d = Document(title: Self.nfc, author: "a")
        _ = d.addNote(title: Self.nfc, body: "text", tags: [Self.nfc])
        let bytes = d.save()
        let raw = try BlockCodec.decode(bytes)[0]
        let block = try WireCodec.decodePayload(raw, fileSize: bytes.count)
        let state = try #require(block.state)
        func refused(_ s: WireState, _ fragment: String) -> Bool {
            var b = block
            b.state = s
            let file = BlockCodec.encode(payload: WireCodec.encodePayload(b), version: Format.version(of: b))
            do { _ = try Document.load(file); return false } catch {
                guard case .invalidDocument(_, let m) = error else { return false }
                return m.contains(fragment)
            }
        }
        #expect(!refused(state, "differs"))
        var tag = state
        tag.notes[0].tags = [Self.nfd]
        #expect(refused(tag, "note 0 differs"))
        var title = state
        title.notes[0].title = Self.nfd
        #expect(refused(title, "note 0 differs"))
        var notebookTitle = state
        notebookTitle.title = Self.nfd
        #expect(refused(notebookTitle, "notebook title differs"))
    }
}
