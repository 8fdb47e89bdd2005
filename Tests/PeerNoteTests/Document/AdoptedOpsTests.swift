import Foundation
import Testing
@testable import PeerNote

/// A load's log takes a base block's ops array as its own when its appends give those same ops
/// (`OpLog.beginAdoptingOps`), and otherwise ends with the ops its appends give, as if it had
/// never tried.
@Suite("A load's log takes the base block's ops as its own")
struct AdoptedOpsTests {
    /// The first block of `bytes`, decoded, and a replayer that replayed it.
    static func replayed(_ bytes: [UInt8]) throws -> (block: WireBlock, replayer: BlockReplayer) {
        let block = try WireCodec.decodePayloads(BlockCodec.decode(bytes), fileSize: bytes.count)[0]
        var replayer = BlockReplayer(genesis: try #require(block.genesis))
        replayer.state.workBudget = .max
        // A block storing its bodies' structures leaves its inserts' origins to them.
        replayer.state.bodiesFromStructures = block.state?.storesStructures ?? false
        try replayer.replay(block)
        return (block, replayer)
    }

    /// Whether the store's adopted ops are `b`'s array itself.
    static func sharesStorage(_ a: OpStore, _ b: [Op]) -> Bool {
        a.withParts { x, _ in b.withUnsafeBufferPointer { y in !x.isEmpty && x.baseAddress == y.baseAddress } }
    }

    @Test("A compact save: the log holds the block's ops array itself, and the document loads as it was saved")
    func compactSaveAdopted() throws {
        let doc = Document(title: "T")
        var ids: [NoteID] = []
        for k in 0 ..< 30 { ids.append(doc.addNote(title: "N\(k)", body: String(repeating: "typed \(k) ", count: 6))) }
        try doc.deleteText(ids[2], range: 3 ..< 20)
        try doc.insertText(ids[4], at: 5, "inserted")
        try doc.setBody(ids[6], "rewritten")
        try doc.setNoteTitle(ids[7], "retitled")
        try doc.addTag(ids[8], "tag")
        try doc.deleteNote(ids[9])
        for writeStructures in [false, true] {
            let bytes = doc.save(.compact, writeStructures: writeStructures, concurrentFrom: .max)
            let (block, replayer) = try Self.replayed(bytes)
            #expect(replayer.log.ops.array == block.ops)
            #expect(Self.sharesStorage(replayer.log.ops, block.ops), "structures \(writeStructures): one array, not a copy")
            #expect(try Document.load(bytes).notebook == doc.notebook)
        }
    }

    @Test("Ops the log joins, stored split, after one it matches: the log ends with them joined, in an array of its own")
    func splitOpsJoined() throws {
        let id = ConcurrentLoadTests.id
        // One change: a note, then its text stored as two inserts that continue each other
        // (the log joins them: typing on), then a title.
        let bytes = ConcurrentLoadTests.file([ConcurrentLoadTests.Change(replica: 0, seq: 1, length: 6, deps: [])], [
            (.createNote(originLeft: .none, originRight: .none, created: 0), 1),
            (.insertText(note: id(0, 0), originLeft: .none, originRight: .none, contentStart: 0), 2),
            (.insertText(note: id(0, 0), originLeft: id(0, 2), originRight: .none, contentStart: 2), 2),
            (.setNoteTitle(note: id(0, 0), "t", preds: []), 1),
        ], text: "abcd")
        let (block, replayer) = try Self.replayed(bytes)
        #expect(block.ops.count == 4)
        #expect(replayer.log.ops.array == [
            Op(lv: 0, length: 1, body: .createNote(originLeft: .none, originRight: .none, created: 0)),
            Op(lv: 1, length: 4, body: .insertText(note: id(0, 0), originLeft: .none, originRight: .none, contentStart: 0)),
            Op(lv: 5, length: 1, body: .setNoteTitle(note: id(0, 0), "t", preds: [])),
        ])
        #expect(!Self.sharesStorage(replayer.log.ops, block.ops))
        let doc = try Document.load(bytes)
        #expect(doc.notebook.notes.map(\.body) == ["abcd"])
        // The log appends after them as after any other.
        try doc.insertText(NoteID(replica: ConcurrentLoadTests.replicas[0], counter: 0), at: 4, "e")
        #expect(try Document.load(doc.save()).notebook.notes.map(\.body) == ["abcde"])
    }

    @Test("A replay stopped by an error after some ops: the error, and the ops it appended whole, not half adopted")
    func errorWhileAdopting() throws {
        let id = ConcurrentLoadTests.id
        // The second change skips a sequence number: the replay stops there, after the first
        // change's two ops.
        let bytes = ConcurrentLoadTests.file([ConcurrentLoadTests.Change(replica: 0, seq: 1, length: 3, deps: []),
                                              ConcurrentLoadTests.Change(replica: 0, seq: 3, length: 1, deps: [0])], [
            (.createNote(originLeft: .none, originRight: .none, created: 0), 1),
            (.insertText(note: id(0, 0), originLeft: .none, originRight: .none, contentStart: 0), 2),
            (.setNoteTitle(note: id(0, 0), "t", preds: []), 1),
        ], text: "ab")
        let block = try WireCodec.decodePayloads(BlockCodec.decode(bytes), fileSize: bytes.count)[0]
        var replayer = BlockReplayer(genesis: try #require(block.genesis))
        replayer.state.workBudget = .max
        #expect(throws: PeerNoteError.self) { try replayer.replay(block) }
        #expect(replayer.log.ops.array == Array(block.ops.prefix(2)))
        #expect(throws: PeerNoteError.self) { try Document.load(bytes) }
    }
}

extension AdoptedOpsTests {
    @Test("A last op that differs only in its body is found at the end: the log keeps its own")
    func lastOpDiffers() throws {
        let id = ConcurrentLoadTests.id
        typealias C = ConcurrentLoadTests.Change
        // The last op a two-op insert the log joins: the second part is compared at the end.
        let joined = ConcurrentLoadTests.file([C(replica: 0, seq: 1, length: 5, deps: [])], [
            (.createNote(originLeft: .none, originRight: .none, created: 0), 1),
            (.insertText(note: id(0, 0), originLeft: .none, originRight: .none, contentStart: 0), 2),
            (.insertText(note: id(0, 0), originLeft: id(0, 2), originRight: .none, contentStart: 2), 2),
        ], text: "abcd")
        let (b1, r1) = try Self.replayed(joined)
        #expect(r1.log.ops.map(\.length) == [1, 4] && !Self.sharesStorage(r1.log.ops, b1.ops))
        // The last op a one-unit delete stored as reversed, which the log stores as not.
        let reversed = ConcurrentLoadTests.file([C(replica: 0, seq: 1, length: 3, deps: []), C(replica: 0, seq: 2, length: 1, deps: [0])], [
            (.createNote(originLeft: .none, originRight: .none, created: 0), 1),
            (.insertText(note: id(0, 0), originLeft: .none, originRight: .none, contentStart: 0), 2),
            (.deleteText(note: id(0, 0), target: id(0, 1), reversed: true), 1),
        ], text: "ab")
        let (b2, r2) = try Self.replayed(reversed)
        #expect(r2.log.ops.count == b2.ops.count && !Self.sharesStorage(r2.log.ops, b2.ops))
        #expect(r2.log.ops.last?.body == .deleteText(note: id(0, 0), target: id(0, 1), reversed: false))
    }

    @Test("Loaded on two threads or one, with and without structures: the same ops, and the same saves after an edit")
    func twoThreadsAndEdits() throws {
        let doc = Document(title: "T")
        var ids: [NoteID] = []
        for k in 0 ..< 60 { ids.append(doc.addNote(title: "N\(k)", body: String(repeating: "line \(k) typed ", count: 10))) }
        try doc.deleteText(ids[5], range: 2 ..< 40)
        try doc.setNoteTitle(ids[6], "retitled")
        for writeStructures in [false, true] {
            let bytes = doc.save(.compact, writeStructures: writeStructures, concurrentFrom: .max)
            let one = try Document.load(bytes, concurrentFrom: .max), two = try Document.load(bytes, concurrentFrom: 0)
            #expect(one.log.ops == two.log.ops, "structures \(writeStructures)")
            #expect(one.log.ops == doc.log.ops, "structures \(writeStructures): the ops the writer held")
            // Typing on a note after the load, then a save, read again (its agents may be
            // numbered otherwise: compared through compact saves, which name replicas).
            for loaded in [one, two] {
                try loaded.insertText(ids[7], at: 3, "typed after loading")
                let again = try Document.load(loaded.save())
                #expect(again.notebook == loaded.notebook && again.save(.compact) == loaded.save(.compact), "structures \(writeStructures)")
            }
        }
    }
}
