import Foundation
import Testing
import Crypto
@testable import PeerNote

@Suite("Library guards")
struct LibraryGuardTests {
    @Test("A change that refers to an op outside its history is rejected on load")
    func referenceOutsideHistory() throws {
        let doc = Document(title: "T", author: "g", replica: ReplicaID(high: 0x50, low: 0))
        let x = doc.fork(author: "x")
        let note = x.addNote(title: "X's note")
        // Replica 0x10 retitles X's note in a change that depends only on the genesis change.
        let agent = x.log.agent(for: ReplicaID(high: 0x10, low: 0))
        _ = x.log.beginChange(agent: agent, deps: [0], time: 0, author: "y", message: "")
        let local = try #require(x.localID(note))
        x.log.append(.setNoteTitle(note: local, "Y's title", preds: []), length: 1)
        #expect {
            try Document.load(x.save())
        } throws: { error in
            (error as? PeerNoteError)?.description.contains("refers to op") == true
        }
    }

    @Test("A query that is a unique id prefix of one note and the exact title of another is ambiguous")
    func ambiguousNoteQuery() throws {
        let doc = Document(title: "T")
        let first = doc.addNote(title: "first")
        let prefix = String(first.description.prefix(4))
        doc.addNote(title: prefix)
        #expect(throws: PeerNoteError.self) { try doc.findNote(prefix) }
        #expect(try doc.findNote(first.description).id == first)
    }

    @Test("A title of 1 to 3 hex digits names its note, whatever ids start with it (\"B\" names the note titled B, not notes whose ids start with b)")
    func shortHexTitles() throws {
        let doc = Document(title: "T")
        let ids = (0 ..< 20).map { doc.addNote(title: "Note \($0)") }
        // Titles that begin other notes' ids, in both cases (an id prefix matches either).
        #expect(NoteID.shortestPrefix == 4)
        let titles = (1 ... 3).flatMap { k -> [String] in
            let digits = String(ids[k].description.prefix(k))
            return [digits, digits.uppercased()]
        }
        for title in Set(titles).sorted() {
            #expect(ids.contains { $0.description.hasPrefix(title.lowercased()) })
            let titled = doc.addNote(title: title)
            #expect(try doc.findNote(title).id == titled)
            try doc.deleteNote(titled)
        }
    }

    @Test("Notes are found by whole id, id prefix in either case, or exact title; only hex digits are tried as an id")
    func findNoteByIdOrTitle() throws {
        let doc = Document(title: "T")
        let ids = (0 ..< 40).map { doc.addNote(title: "Note \($0)") }
        for id in ids {
            #expect(try doc.findNote(id.description).id == id)
            #expect(try doc.findNote(id.description.uppercased()).id == id)
            // The shortest prefix no other note shares.
            let others = ids.filter { $0 != id }.map(\.description)
            let length = try #require((NoteID.shortestPrefix ... 16).first { k in !others.contains { $0.hasPrefix(id.description.prefix(k)) } })
            #expect(try doc.findNote(String(id.description.prefix(length))).id == id)
            #expect(try doc.findNote(String(id.description.prefix(length)).uppercased()).id == id)
            // Fewer than 4 digits are never an id prefix, however few notes share them.
            for k in 1 ... 3 {
                #expect(throws: PeerNoteError.self) { try doc.findNote(String(id.description.prefix(k))) }
            }
        }
        #expect(try doc.findNote("Note 7").id == ids[7])
        // Not an id: too long, or not hex; a title that only looks like one is still a title.
        #expect(throws: PeerNoteError.self) { try doc.findNote(ids[0].description + "0") }
        #expect(throws: PeerNoteError.self) { try doc.findNote("g" + ids[0].description.dropFirst()) }
        let hexTitle = doc.addNote(title: "beef")
        if !ids.contains(where: { $0.description.hasPrefix("beef") }) { #expect(try doc.findNote("beef").id == hexTitle) }
    }

    @Test("A note id is the first 8 bytes of SHA-256 over the replica's 16 bytes and the counter's 4, in hex")
    func noteIDHashIsTheSpecsDefinition() {
        var rng = SeededRandom(state: 0x1D5)
        for k in 0 ..< 200 {
            let replica = k == 0 ? ReplicaID(high: 0, low: 0) : k == 1 ? ReplicaID(high: .max, low: .max) : ReplicaID(high: rng.next(), low: rng.next())
            let counter: UInt32 = k < 2 ? (k == 0 ? 0 : .max) : UInt32.random(in: 0 ... .max, using: &rng)
            var input = replica.bytes
            for shift in stride(from: 24, through: 0, by: -8) { input.append(UInt8(truncatingIfNeeded: counter >> UInt32(shift))) }
            let expected = SHA256.hash(data: input).prefix(8).map { String(format: "%02x", $0) }.joined()
            #expect(NoteIDHash.hex(replica: replica, counter: counter) == expected)
        }
    }

    @Test("create refuses to replace anything, even a dangling symbolic link")
    func createRefuses() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pn-guard-\(UUID())").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/a.peernote"
        try FileStore.create([1, 2, 3], at: path)
        #expect(throws: FileError.self) { try FileStore.create([4], at: path) }
        #expect(try FileStore.read(path) == [1, 2, 3])
        try FileManager.default.createSymbolicLink(atPath: dir + "/dangling.peernote", withDestinationPath: dir + "/nowhere")
        #expect(throws: FileError.self) { try FileStore.create([4], at: dir + "/dangling.peernote") }
        #expect(!FileManager.default.fileExists(atPath: dir + "/nowhere"))
    }

    @Test("Writing through a symbolic link replaces the target and keeps the link")
    func writeThroughSymlink() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pn-guard-\(UUID())").path
        try FileManager.default.createDirectory(atPath: dir + "/real", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileStore.create([1], at: dir + "/real/doc.peernote")
        try FileManager.default.createSymbolicLink(atPath: dir + "/link.peernote", withDestinationPath: "real/doc.peernote")
        try FileStore.writeAtomically([9, 9], to: dir + "/link.peernote")
        #expect(try FileStore.read(dir + "/real/doc.peernote") == [9, 9])
        let attrs = try FileManager.default.attributesOfItem(atPath: dir + "/link.peernote")
        #expect(attrs[.type] as? FileAttributeType == .typeSymbolicLink)
    }

    @Test("Lock files live outside the document's folder, one per real file")
    func lockLocation() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pn-guard-\(UUID())").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileStore.create([1], at: dir + "/doc.peernote")
        try FileManager.default.createSymbolicLink(atPath: dir + "/alias.peernote", withDestinationPath: dir + "/doc.peernote")
        let lock = FileLock.lockFile(for: dir + "/doc.peernote")
        #expect(!lock.hasPrefix(dir))
        #expect(lock == FileLock.lockFile(for: dir + "/alias.peernote"))
        do {
            let held = try FileLock(for: dir + "/doc.peernote")
            _ = held
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).sorted() == ["alias.peernote", "doc.peernote"])
        // A file not made yet has one lock however it is spelled (two merges to one new OUT,
        // named `new.peernote` and `./new.peernote`, must not take two locks).
        try FileManager.default.createDirectory(atPath: dir + "/sub", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: dir + "/linked", withDestinationPath: dir + "/sub")
        try FileManager.default.createSymbolicLink(atPath: dir + "/to-new.peernote", withDestinationPath: "sub/new.peernote")
        let new = FileLock.lockFile(for: dir + "/sub/new.peernote")
        for spelling in [dir + "/sub/./new.peernote", dir + "/sub/../sub/new.peernote", dir + "/linked/new.peernote", dir + "/to-new.peernote"] {
            #expect(FileLock.lockFile(for: spelling) == new, "\(spelling)")
        }
        #expect(FileLock.lockFile(for: dir + "/sub/other.peernote") != new)
    }

    /// Two copies of one notebook made by two sessions that (wrongly) share the replica id
    /// `reused`, each of which made a different first change.
    static func copiesWithChangedChange() throws -> (one: Document, two: Document, reused: ReplicaID) {
        let base = Document(title: "T", author: "a")
        let note = base.addNote(title: "N", body: "x")
        let reused = ReplicaID(high: 7, low: 7)
        let one = Document(id: base.id, genesis: base.genesis, log: base.log, state: base.state, replica: reused, author: "one")
        let two = Document(id: base.id, genesis: base.genesis, log: base.log, state: base.state, replica: reused, author: "two")
        try one.insertText(note, at: 0, "1")
        try two.insertText(note, at: 0, "2")
        return (one, two, reused)
    }

    @Test("Two copies holding one change id with different content are refused, naming the change")
    func conflictingChangeRefused() throws {
        let (one, two, reused) = try Self.copiesWithChangedChange()
        let before = one.save()
        #expect(one.relation(to: two) == .conflictingChange(ChangeID(replica: reused, seq: 1)))
        #expect(throws: PeerNoteError.unrelated(.conflictingChange(ChangeID(replica: reused, seq: 1)))) { try one.merge(two) }
        #expect(one.save() == before)
    }

    /// The shared-history check compares a change inside a typing run by its length and ops
    /// only (the rest follows from the run): a last keystroke that differs in its character,
    /// author, message or time is still told apart, and named (no later change gives it away).
    @Test("A typing run that differs in one keystroke's character, author, message or time is refused, naming it")
    func conflictingKeystrokeRefused() throws {
        let base = Document(title: "T", author: "a")
        let note = base.addNote(title: "N", body: "")
        let reused = ReplicaID(high: 9, low: 9)
        for difference in ["none", "character", "author", "message", "time"] {
            let one = Document(id: base.id, genesis: base.genesis, log: base.log, state: base.state, replica: reused, author: "w")
            let two = Document(id: base.id, genesis: base.genesis, log: base.log, state: base.state, replica: reused, author: "w")
            for d in [one, two] { d.clock = { Date(timeIntervalSince1970: 5_000) } }
            for k in 0 ..< 20 {
                for d in [one, two] {
                    let odd = d === two && k == 19
                    if odd && difference == "author" { d.author = "v" }
                    if odd && difference == "time" { d.clock = { Date(timeIntervalSince1970: 5_001) } }
                    let text = odd && difference == "character" ? "Y" : "x"
                    try d.transaction(message: odd && difference == "message" ? "m" : "") { try d.insertText(note, at: k, text) }
                    if odd { d.author = "w"; d.clock = { Date(timeIntervalSince1970: 5_000) } }
                }
            }
            let expected: HistoryRelation = difference == "none" ? .shared : .conflictingChange(ChangeID(replica: reused, seq: 20))
            #expect(one.relation(to: two) == expected, "\(difference)")
            #expect(two.relation(to: one) == expected, "\(difference)")
        }
    }
}
