import Foundation
import Testing
@testable import PeerNote

/// A small notebook with every kind of edit in its history.
func sampleDocument(replica: ReplicaID = ReplicaID(high: 1, low: 2)) throws -> Document {
    let d = Document(title: "Meeting", author: "alice", id: UUID(uuidString: "6F1B0F5E-3C2A-4E47-9A53-1D4C3B2A1908")!, replica: replica, time: Date(timeIntervalSince1970: 1_700_000_000))
    d.clock = { Date(timeIntervalSince1970: 1_700_000_060) }
    let a = d.addNote(title: "Agenda", body: "1. Budget\n2. Hiring", tags: ["work"], priority: .high)
    let b = d.addNote(title: "Notes", body: "Teh budget is fine.")
    try d.insertText(a, at: 0, "Today:\n")
    try d.deleteText(b, range: 0 ..< 3)
    try d.insertText(b, at: 0, "The")
    try d.addTag(b, "draft")
    try d.removeTag(a, "work")
    try d.moveNote(b, to: 0)
    try d.setNoteTitle(a, "Agenda (final)")
    let c = d.addNote(title: "Scratch", body: "zzz ✓ 日本")
    try d.deleteNote(c)
    d.setTitle("Weekly meeting")
    return d
}

@Suite("Persistence")
struct PersistenceTests {
    @Test("Save then load gives the same notebook and history, and the same bytes again")
    func roundTrip() throws {
        let d = try sampleDocument()
        let bytes = d.save()
        #expect(Array(bytes.prefix(8)) == [0xD9, 0xD9, 0xF7, 0xDA, 0x70, 0x6E, 0x6F, 0x74])
        let e = try Document.load(bytes)
        #expect(e.notebook == d.notebook)
        #expect(e.deletedNotes == d.deletedNotes)
        #expect(e.history == d.history)
        #expect(e.id == d.id)
        #expect(e.genesis == d.genesis)
        #expect(e.save() == bytes)
    }

    @Test("Same set of changes, merged in different orders, saves to identical bytes")
    func determinism() throws {
        let base = try sampleDocument()
        let x = base.fork(author: "x"), y = base.fork(author: "y"), z = base.fork(author: "z")
        let n = x.notes[0].id
        try x.insertText(n, at: 0, "X")
        try y.insertText(n, at: 0, "Y")
        try z.setNoteTitle(n, "Z")
        let m1 = x.fork(); try m1.merge(y); try m1.merge(z)
        let m2 = z.fork(); try m2.merge(y); try m2.merge(x)
        #expect(m1.save() == m2.save())
        let loaded = try Document.load(m1.save())
        #expect(loaded.save() == m1.save())
    }

    @Test("An incremental save appends a block; the result loads to the same state")
    func incremental() throws {
        let d = try sampleDocument()
        let compact = d.save()
        let e = try Document.load(compact)
        e.author = "bob"
        try e.insertText(e.notes[0].id, at: 0, "more ")
        let appended = e.save(.incremental)
        #expect(Array(appended.prefix(compact.count)) == compact)
        #expect(appended.count > compact.count)
        let f = try Document.load(appended)
        #expect(f.notebook == e.notebook)
        #expect(f.history == e.history)
        // A second append on top, then compaction.
        try f.setNoteTitle(f.notes[0].id, "again")
        let twice = f.save(.incremental)
        let g = try Document.load(twice)
        #expect(g.notebook == f.notebook)
        #expect(g.save(.compact).count < twice.count)
    }

    @Test("An incremental save inside a transaction that goes on editing: the next incremental save holds every edit and loads")
    func incrementalSaveInsideTransaction() throws {
        for trailing in [true, false] {
            for buffers in [true, false] {
                let d = Document(title: "t", author: "a", replica: ReplicaID(high: 1, low: 1), time: Date(timeIntervalSince1970: 1_700_000_000))
                d.core.buffersKeystrokes = buffers
                d.clock = { Date(timeIntervalSince1970: 1_700_000_000) }
                let n = d.addNote(title: "n")
                _ = d.save(.compact)
                try d.transaction {
                    try d.insertText(n, at: 0, "a")
                    _ = d.save(.incremental)          // the transaction's change is still open
                    try d.insertText(n, at: 1, "b")   // and takes more units
                }
                if trailing { try d.insertText(n, at: 2, "c") }
                let saved = d.save(.incremental)
                let loaded = try Document.load(saved)
                #expect(loaded.note(n)?.body == (trailing ? "abc" : "ab"), "trailing edit \(trailing), bursts \(buffers)")
                #expect(loaded.changeCount == d.changeCount)
                // Once saved whole, the next incremental save appends to it again.
                try d.insertText(n, at: d.note(n)?.body.unicodeScalars.count ?? 0, "!")
                let appended = d.save(.incremental)
                #expect(appended.starts(with: saved) && appended.count > saved.count)
                #expect(try Document.load(appended).note(n)?.body == d.note(n)?.body)
            }
        }
    }

    @Test("Unknown op kinds and unknown block fields survive load, merge and save")
    func forwardCompatibility() throws {
        let d = try sampleDocument()
        // Simulate a newer writer: an op kind 99 with a CBOR payload, and an unknown block field 42.
        d.transaction(message: "future") {
            d.log.beginChangeIfNeededForTest(agent: d.agent, clock: d.clock, author: d.author)
            d.log.append(.unknown(kind: 99, payload: [0xA1, 0x01, 0x02]), length: 1)
        }
        d.unknownFields = [[0x18, 42, 0x63, 0x61, 0x62, 0x63]]   // 42: "abc"
        let bytes = d.save()
        let e = try Document.load(bytes)
        #expect(e.unknownFields == d.unknownFields)
        #expect(e.log.ops.contains { $0.body == .unknown(kind: 99, payload: [0xA1, 0x01, 0x02]) })
        let f = e.fork(); try f.insertText(f.notes[0].id, at: 0, "x")
        try e.merge(f)
        let again = try Document.load(e.save())
        #expect(again.log.ops.contains { $0.body == .unknown(kind: 99, payload: [0xA1, 0x01, 0x02]) })
        #expect(again.unknownFields == d.unknownFields)
        #expect(again.history.contains { $0.summary.contains("newer format") })
    }

    @Test("Unknown block fields: a repeated key is refused; copies with different values for one key do not merge; a field the other copy brings makes the merge not up to date, and the save compact, never a map with one key twice")
    func unknownFieldKeys() throws {
        let d = try sampleDocument()
        let a = d.fork(), b = d.fork()
        a.unknownFields = [[0x14, 0x61, 0x61]]   // 20: "a"
        b.unknownFields = [[0x14, 0x61, 0x62]]   // 20: "b"
        #expect(throws: PeerNoteError.fieldConflict(key: 20)) { try a.merge(b) }
        #expect(a.unknownFields == [[0x14, 0x61, 0x61]], "nothing changed")

        // Repeated in one payload map: refused, naming the field.
        var (_, block) = try StateSectionTests.onlyBlock(try Document.load(a.save()).save())
        block.unknownFields = [[0x14, 0x61, 0x61], [0x14, 0x61, 0x62]]
        let twice = BlockCodec.encode(payload: WireCodec.encodePayload(block), version: Format.version(of: block))
        #expect {
            try Document.load(twice)
        } throws: { error in
            guard case .invalidDocument(_, let message) = error as? PeerNoteError else { return false }
            return message == "block field 20 appears twice"
        }

        // A field only the other copy has: kept, reported, and saved (an append block cannot carry it).
        let c = try Document.load(d.save())
        let e = d.fork()
        e.unknownFields = [[0x15, 0x61, 0x63]]   // 21: "c"
        let summary = try c.merge(e)
        #expect(summary.changeCount == 0 && summary.fieldsAdded == 1 && !summary.isUpToDate)
        let saved = try Document.load(c.save(.incremental))
        #expect(saved.unknownFields == [[0x15, 0x61, 0x63]])
        #expect(try c.merge(e).isUpToDate, "a second merge brings nothing")

        // Within one file, an appended block's value for a key replaces the base block's.
        let f = try sampleDocument()
        f.unknownFields = [[0x14, 0x61, 0x61]]   // 20: "a"
        let baseBytes = f.save()
        try f.insertText(f.notes[0].id, at: 0, "x")
        let appended = f.save(.incremental)
        let raws = try BlockCodec.decode(appended)
        try #require(raws.count == 2)
        var tail = try WireCodec.decodePayload(raws[1], fileSize: appended.count)
        tail.unknownFields = [[0x14, 0x61, 0x62]]   // 20: "b"
        let file = baseBytes + BlockCodec.encode(payload: WireCodec.encodePayload(tail), version: raws[1].version)
        let later = try Document.load(file)
        #expect(later.unknownFields == [[0x14, 0x61, 0x62]])
        #expect(try Document.load(later.save()).unknownFields == [[0x14, 0x61, 0x62]], "written back once, valid")
    }

    @Test("Every truncation is rejected with an error, never a crash")
    func truncations() throws {
        let bytes = try sampleDocument().save()
        for n in 0 ..< bytes.count {
            #expect(throws: PeerNoteError.self) { try Document.load(Array(bytes.prefix(n))) }
        }
    }

    @Test("A file cut inside or right after a block's magic bytes says it is truncated: the first block with the file's length, at its end (\"only 1 byte\", singular); a later one at the block's start")
    func truncatedAtTheMagicBytes() throws {
        let doc = try sampleDocument()
        let base = try Document.load(doc.save())
        base.addNote(title: "more")
        let appended = base.save(.incremental)
        let firstBlock = try BlockCodec.decode(appended)[0].end
        let cases: [(Int, String)] = [(1, "file is truncated (only 1 byte)"), (2, "file is truncated (only 2 bytes)"),
                                      (7, "file is truncated (only 7 bytes)"), (8, "file is truncated (only 8 bytes)"),
                                      (firstBlock + 3, "file is truncated inside a block header"),
                                      (firstBlock + 8, "file is truncated inside a block header")]
        for (n, message) in cases {
            do {
                _ = try BlockCodec.decode(Array(appended.prefix(n)))
                Issue.record("\(n) bytes were read")
            } catch {
                #expect(error.message == message && error.offset == (n < firstBlock ? n : firstBlock), "\(n): \(error.offset): \(error.message)")
            }
        }
    }

    @Test("Every single-bit flip is rejected")
    func bitFlips() throws {
        let bytes = try sampleDocument().save()
        for i in 0 ..< bytes.count {
            for bit in 0 ..< 8 {
                var damaged = bytes
                damaged[i] ^= UInt8(1 << bit)
                #expect(throws: PeerNoteError.self, "flip of bit \(bit) at byte \(i) was accepted") { try Document.load(damaged) }
            }
        }
    }

    @Test("A newer format version is refused with a clear message")
    func newerVersion() throws {
        var bytes = try sampleDocument().save()
        // [version, ...] follows the 8 magic bytes and the array head (version 2: it has text, so a
        // state section).
        #expect(bytes[8] == 0x83 && bytes[9] == 0x02)
        bytes[9] = 0x04
        #expect(throws: PeerNoteError.unsupportedVersion(4)) { try Document.load(bytes) }
    }
}

extension PersistenceTests {
    /// An append block without changes adds nothing: loading must not apply a zero-length piece
    /// of the log's last op again under a new id (after a note's creation that would make a
    /// second note, after a title a conflicting one).
    @Test("An append block with no changes loads as the file before it", arguments: ["note", "title"])
    func emptyAppendBlockAddsNothing(lastEdit: String) throws {
        let doc = Document(title: "Empty block", author: "a")
        let note = doc.addNote(title: "one", body: "")
        if lastEdit == "title" { try doc.setNoteTitle(note, "renamed") }
        let before = doc.save(.compact)
        var block = WireBlock()
        block.kind = .append
        block.previousCRC = CRC32.checksum(before)
        block.firstRow = doc.log.changes.count
        let file = before + BlockCodec.encode(payload: WireCodec.encodePayload(block), version: 1)
        let loaded = try Document.load(file)
        #expect(loaded.notebook == doc.notebook)
        #expect(loaded.notebook.notes.count == 1 && loaded.conflicts.isEmpty)
    }
}
