import Foundation
import Testing
@testable import PeerNote

/// Crafted base blocks whose stored ops the op log joins (files written by other writers need
/// not join ops that continue each other): loaded on two threads (`BlockReplayer.replayBase`)
/// they must give what one thread gives, the same state or the same error, with the same work,
/// since the work budget decides whether a hostile file is read at all.
@Suite("Loading a base block on two threads: crafted blocks")
struct ConcurrentLoadTests {
    static let replicas = [ReplicaID(high: 0x1000_0000_0000_0000, low: 1), ReplicaID(high: 0xF000_0000_0000_0000, low: 2)]

    struct Change { var replica: Int; var seq: UInt32; var length: Int; var deps: [Int] }

    static func file(_ changes: [Change], _ ops: [(OpBody, Int)], text: String) -> [UInt8] {
        var b = WireBlock()
        b.kind = .base
        b.documentID = UUID(uuid: (0xC0, 0xFF, 0xEE, 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, 9))
        b.genesis = ChangeID(replica: replicas[changes[0].replica], seq: 1)
        b.replicas = replicas
        for c in changes {
            b.appendChange(replica: c.replica, seq: c.seq, length: c.length, deps: c.deps, time: 1_700_000_000, author: "", message: "")
        }
        var lv = 0
        for (body, length) in ops {
            b.ops.append(Op(lv: lv, length: length, body: body))
            lv += length
        }
        b.text = Array(text.unicodeScalars)
        return BlockCodec.encode(payload: WireCodec.encodePayload(b))
    }

    static func id(_ agent: UInt32, _ counter: UInt32) -> LocalID { LocalID(agent: agent, counter: counter) }

    /// The integration work each way, with no budget: (one thread, two threads).
    static func work(_ bytes: [UInt8]) throws -> (Int, Int) {
        let block = try WireCodec.decodePayloads(BlockCodec.decode(bytes), fileSize: bytes.count)[0]
        var replayer = BlockReplayer(genesis: try #require(block.genesis))
        replayer.state.workBudget = .max
        try replayer.replay(block)
        guard case .applied(let state) = DocState.applyBase(block, workBudget: .max) else {
            Issue.record("applyBase did not apply the block")
            return (0, 0)
        }
        return (Int.max - replayer.state.workBudget, Int.max - state.workBudget)
    }

    @Test("Two deletes in two changes that the log joins, the second naming an element of another note: the same error")
    func joinedDeletesAcrossChanges() throws {
        let id = Self.id
        let bytes = Self.file([Change(replica: 0, seq: 1, length: 2, deps: []), Change(replica: 0, seq: 2, length: 4, deps: [0]),
                               Change(replica: 0, seq: 3, length: 1, deps: [1]), Change(replica: 0, seq: 4, length: 1, deps: [2])], [
            (.createNote(originLeft: .none, originRight: .none, created: 0), 1),
            (.createNote(originLeft: id(0, 0), originRight: .none, created: 0), 1),
            (.insertText(note: id(0, 0), originLeft: .none, originRight: .none, contentStart: 0), 2),
            (.insertText(note: id(0, 1), originLeft: .none, originRight: .none, contentStart: 2), 2),
            (.deleteText(note: id(0, 0), target: id(0, 3), reversed: false), 1),
            (.deleteText(note: id(0, 0), target: id(0, 4), reversed: false), 1),
        ], text: "pqrs")
        #expect(throws: PeerNoteError.self) { try Document.load(bytes, concurrentFrom: 0) }
        ConvergenceTests.expectSameLoad(bytes, "joined deletes across changes")
    }

    @Test("Two reversed deletes in one change that the log joins, naming elements of another note: the same error")
    func joinedReversedDeletes() throws {
        let id = Self.id
        let bytes = Self.file([Change(replica: 0, seq: 1, length: 2, deps: []), Change(replica: 0, seq: 2, length: 4, deps: [0]),
                               Change(replica: 0, seq: 3, length: 4, deps: [1])], [
            (.createNote(originLeft: .none, originRight: .none, created: 0), 1),
            (.createNote(originLeft: id(0, 0), originRight: .none, created: 0), 1),
            (.insertText(note: id(0, 1), originLeft: .none, originRight: .none, contentStart: 0), 4),
            (.deleteText(note: id(0, 0), target: id(0, 5), reversed: true), 2),
            (.deleteText(note: id(0, 0), target: id(0, 3), reversed: true), 2),
        ], text: "wxyz")
        #expect(throws: PeerNoteError.self) { try Document.load(bytes, concurrentFrom: 0) }
        ConvergenceTests.expectSameLoad(bytes, "joined reversed deletes")
    }

    @Test("Inserts at one place stored as pairs the log joins (typing on): the same list and the same integration work")
    func joinedInsertPairs() throws {
        let id = Self.id
        let k = 200
        var ops: [(OpBody, Int)] = [
            (.createNote(originLeft: .none, originRight: .none, created: 0), 1),
            (.insertText(note: id(0, 0), originLeft: .none, originRight: .none, contentStart: 0), 2),
            (.insertText(note: id(0, 0), originLeft: id(0, 1), originRight: id(0, 2), contentStart: 2), 1),
        ]
        var text = "xyS"
        for j in 0 ..< k {
            // Pair j: an insert between x and y, then one that continues it (its left origin is
            // the first's unit, the same right origin): one op in the log, two in the file.
            ops.append((.insertText(note: id(0, 0), originLeft: id(0, 1), originRight: id(0, 2), contentStart: text.unicodeScalars.count), 1))
            text += "a"
            ops.append((.insertText(note: id(0, 0), originLeft: id(0, UInt32(3 + 2 * j)), originRight: id(0, 2), contentStart: text.unicodeScalars.count), 1))
            text += "b"
        }
        let bytes = Self.file([Change(replica: 0, seq: 1, length: 3, deps: []), Change(replica: 1, seq: 1, length: 1, deps: [0]),
                               Change(replica: 0, seq: 2, length: 2 * k, deps: [1])], ops, text: text)
        let (one, two) = try Self.work(bytes)
        #expect(one == two, "integration work: \(one) on one thread, \(two) on two")
        #expect(one > 0)
        ConvergenceTests.expectSameLoad(bytes, "joined insert pairs")
    }

    @Test("The state's half gives up when told the log refused the file, and a refused file gives the log's error")
    func stopsWhenRefused() throws {
        let id = Self.id
        var ops: [(OpBody, Int)] = [(.createNote(originLeft: .none, originRight: .none, created: 0), 1)]
        for k in 0 ..< 300 { ops.append((.setNoteTitle(note: id(0, 0), "t\(k)", preds: k == 0 ? [] : [id(0, UInt32(k))]), 1)) }
        var changes = [Change(replica: 0, seq: 1, length: 1, deps: [])]
        for k in 1 ... 300 { changes.append(Change(replica: 0, seq: UInt32(k + 1), length: 1, deps: [k - 1])) }
        let good = Self.file(changes, ops, text: "")
        let block = try WireCodec.decodePayloads(BlockCodec.decode(good), fileSize: good.count)[0]
        var asked = 0
        guard case .inconsistent = DocState.applyBase(block, workBudget: .max, stop: { asked += 1; return asked > 2 }) else {
            Issue.record("applyBase went on after being told to stop")
            return
        }
        #expect(asked == 3, "asked every 64 ops until told to stop")
        guard case .applied = DocState.applyBase(block, workBudget: .max) else {
            Issue.record("applyBase did not apply the block")
            return
        }
        // The last change's sequence number skips one: the log refuses the file.
        changes[300].seq += 1
        let bad = Self.file(changes, ops, text: "")
        #expect(throws: PeerNoteError.self) { try Document.load(bad, concurrentFrom: 0) }
        ConvergenceTests.expectSameLoad(bad, "a sequence number skipped")
    }

    /// `bytes` with the compressed bytes of `field` (the state section or the columns) damaged:
    /// `damage` applied to them, the block's checksum made right again, so that only inflating
    /// or reading them finds it.
    static func damaging(_ bytes: [UInt8], _ field: BlockKey, _ damage: (inout [UInt8]) -> Void) throws -> [UInt8] {
        let raw = try #require(try BlockCodec.decode(bytes).first)
        let map = try WireCodec.payloadMap(raw)
        let item = try #require(map.first { $0.key.uint == field.rawValue }?.value)
        let compressed = try #require(item.bytesValue)
        var damaged = Array(compressed)
        damage(&damaged)
        #expect(damaged.count == compressed.count)
        var payload = raw.payload
        payload.replaceSubrange(item.end - compressed.count ..< item.end, with: damaged)
        return BlockCodec.encode(payload: payload, version: raw.version)
    }

    @Test("A damaged state section or damaged columns give the same error loaded on one thread or on two, the state section's first")
    func damagedSections() throws {
        let doc = Document(title: "T")
        let n = doc.addNote(title: "N", body: String(repeating: "a line of text, typed and edited\n", count: 40))
        try doc.setBody(n, String(repeating: "a line of text, typed\n", count: 40))
        let good = doc.save(.compact)
        ConvergenceTests.expectSameLoad(good, "undamaged")
        let truncate: (inout [UInt8]) -> Void = { $0[$0.count - 1] ^= 0xFF; $0[$0.count - 2] ^= 0xFF }
        let garble: (inout [UInt8]) -> Void = { $0[0] = 0xFF; $0[1] = 0xFF }
        for (field, damage, what) in [(BlockKey.state, garble, "state garbled"), (.state, truncate, "state's end"),
                                      (.columns, garble, "columns garbled"), (.columns, truncate, "columns' end")] {
            let bad = try Self.damaging(good, field, damage)
            #expect(throws: PeerNoteError.self, "\(what)") { try Document.load(bad, concurrentFrom: .max) }
            ConvergenceTests.expectSameLoad(bad, what)
        }
        // Both damaged: the state section's error, either way, as it is read first.
        let both = try Self.damaging(try Self.damaging(good, .state, garble), .columns, garble)
        ConvergenceTests.expectSameLoad(both, "both damaged")
        do {
            _ = try Document.load(both, concurrentFrom: 0)
            Issue.record("a file with both sections damaged loaded")
        } catch {
            #expect("\(error)".contains("state section"), "\(error)")
        }
    }

    /// A large base block's halves (`WireCodec.PayloadHalves`) read with the smallest threshold.
    static func halves(_ bytes: [UInt8]) throws -> WireCodec.PayloadHalves {
        let raw = try #require(try BlockCodec.decode(bytes).first)
        return try #require(WireCodec.PayloadHalves(try WireCodec.preparePayload(raw, fileSize: bytes.count, totals: WireCodec.Totals()), concurrentFrom: 0))
    }

    @Test("A compact save is read and replayed in one step on two threads: the block, log and state one step after the other gives")
    func replayedWithDecoding() throws {
        let doc = Document(title: "T")
        var ids: [NoteID] = []
        for k in 0 ..< 40 { ids.append(doc.addNote(title: "N\(k)", body: String(repeating: "line \(k), typed and edited\n", count: 8))) }
        try doc.deleteText(ids[3], range: 5 ..< 30)
        try doc.setBody(ids[9], "rewritten")
        try doc.deleteNote(ids[12])
        for writeStructures in [false, true] {
            let bytes = doc.save(.compact, writeStructures: writeStructures, concurrentFrom: .max)
            let halves = try Self.halves(bytes)
            var replayer = BlockReplayer(genesis: try #require(halves.header.genesis))
            replayer.state.workBudget = .max
            replayer.state.bodiesFromStructures = halves.storesStructures
            var totals = WireCodec.Totals()
            let (block, error) = try #require(try replayer.replayBase(halves, totals: &totals), "the halves agree: nothing to read again")
            #expect(error == nil)
            // As `decodePayload` reads it, and as `replay` replays it.
            var expectedTotals = WireCodec.Totals()
            let raw = try #require(try BlockCodec.decode(bytes).first)
            let expected = try WireCodec.decodePayload(raw, fileSize: bytes.count, totals: &expectedTotals, placeholders: false)
            #expect(totals == expectedTotals)
            #expect(block.changes == expected.changes)
            #expect(block.ops == expected.ops)
            #expect(block.placeholderCount == expected.placeholderCount)
            #expect(block.state == expected.state)
            #expect(block.deadText == expected.deadText)
            var one = BlockReplayer(genesis: try #require(expected.genesis))
            one.state.workBudget = .max
            one.state.bodiesFromStructures = halves.storesStructures
            try one.replay(expected)
            #expect(replayer.log.changes.count == one.log.changes.count)
            #expect(replayer.log.ops == one.log.ops)
            #expect(replayer.log.heads == one.log.heads)
            #expect(replayer.state.workBudget == one.state.workBudget, "the same integration work")
            #expect(replayer.state.noteStates.map { (n: NoteState) in n.id } == one.state.noteStates.map { (n: NoteState) in n.id })
            #expect(try Document.load(bytes, concurrentFrom: 0).notebook == doc.notebook)
            ConvergenceTests.expectSameLoad(bytes, "structures \(writeStructures)")
        }
    }

    @Test("Read and replayed in one step: the integration work spent is counted, as one step after the other counts it")
    func replayedWithDecodingCountsWork() throws {
        // Three copies type at the same place of one note: the merged list integrates their
        // inserts by scanning the concurrent ones.
        let origin = Document(title: "T")
        let n = origin.addNote(title: "N", body: "ab")
        for k in 0 ..< 30 { origin.addNote(title: "other \(k)", body: String(repeating: "text \(k) ", count: 20)) }
        let copies = (0 ..< 3).map { origin.fork(author: "c\($0)") }
        for (k, copy) in copies.enumerated() {
            for j in 0 ..< 40 { try copy.insertText(n, at: 1, "\(k).\(j) ") }
        }
        for copy in copies.dropFirst() { _ = try copies[0].merge(copy) }
        let bytes = copies[0].save(.compact)
        let one = try Document.load(bytes, concurrentFrom: .max), two = try Document.load(bytes, concurrentFrom: 0)
        let spent = try #require(one.persisted?.verified?.workSpent)
        #expect(spent > 0, "the merged inserts took integration work")
        #expect(two.persisted?.verified?.workSpent == spent)
        ConvergenceTests.expectSameLoad(bytes, "typed at one place by three copies")
    }

    /// `bytes` refused, read in one step, with an error that mentions `mention`, and the same
    /// error read one step after the other.
    static func expectRefused(_ bytes: [UInt8], mentioning mention: String, _ what: String) {
        do {
            _ = try Document.load(bytes, concurrentFrom: 0)
            Issue.record("\(what): loaded")
        } catch {
            #expect("\(error)".contains(mention), "\(what): \(error)")
        }
        ConvergenceTests.expectSameLoad(bytes, what)
    }

    @Test("Read and replayed in one step: a state section that disagrees leaves the log and state untouched, a refused history gives the log's error")
    func replayedWithDecodingRefused() throws {
        let doc = Document(title: "T")
        for k in 0 ..< 20 { doc.addNote(title: "N\(k)", body: String(repeating: "line \(k) of text\n", count: 10)) }
        let good = doc.save(.compact)
        let raw = try #require(try BlockCodec.decode(good).first)
        let block = try WireCodec.decodePayload(raw, fileSize: good.count)
        func file(_ change: (inout WireBlock) -> Void) -> [UInt8] {
            var b = block
            change(&b)
            return BlockCodec.encode(payload: WireCodec.encodePayload(b), version: raw.version)
        }
        // One more character in a body than the ops insert: the halves do not join.
        var longer = try #require(block.state)
        longer.setBody(2, longer.body(2) + "!")
        let disagreeing = file { $0.state = longer }
        var replayer = BlockReplayer(genesis: try #require(block.genesis))
        var totals = WireCodec.Totals()
        #expect(try replayer.replayBase(try Self.halves(disagreeing), totals: &totals) == nil)
        #expect(replayer.log.changes.count == 0 && replayer.state.noteStates.isEmpty && totals == WireCodec.Totals())
        #expect(throws: PeerNoteError.self) { try Document.load(disagreeing, concurrentFrom: 0) }
        ConvergenceTests.expectSameLoad(disagreeing, "a body longer")
        // A change whose sequence number skips one, the state section as it was: the log refuses
        // it on the other thread, and that is the error, as on one thread.
        let skipped = file { b in
            b.changes = WireChanges()
            b.depRows = []
            for i in block.changes.indices {
                let c = block.changes[i]
                b.appendChange(replica: c.replica, seq: c.seq + (i == block.changes.count - 1 ? 1 : 0), length: c.length, deps: block.deps(of: i),
                               time: c.time, author: block.strings[c.author], message: block.strings[c.message])
            }
        }
        Self.expectRefused(skipped, mentioning: "change at row", "a sequence number skipped")
        // The same base block with a block appended after it whose columns are damaged: that
        // block's error, as when every block is read before any is replayed.
        let loaded = try Document.load(good)
        try loaded.setBody(try #require(loaded.notebook.notes.first?.id), "edited")
        let appended = loaded.save(.incremental)
        let raws = try BlockCodec.decode(appended)
        try #require(raws.count == 2)
        let map = try WireCodec.payloadMap(raws[1])
        let columns = try #require(map.first { $0.key.uint == BlockKey.columns.rawValue }?.value)
        var payload = raws[1].payload
        payload[columns.end - 1] ^= 0xFF
        payload[columns.end - 2] ^= 0xFF
        let both = skipped + BlockCodec.encode(payload: payload, version: raws[1].version)
        Self.expectRefused(both, mentioning: "columns", "a sequence number skipped, then damaged columns")
        // Undamaged, the appended block loads after the base block read in one step.
        ConvergenceTests.expectSameLoad(appended, "an appended block")
        #expect(try Document.load(appended, concurrentFrom: 0).notebook == loaded.notebook)
    }

    @Test("Columns decoded beside the state section: a section whose text the ops do not insert gives the error one thread gives")
    func columnsBesideState() throws {
        let doc = Document(title: "T")
        var ids: [NoteID] = []
        for k in 0 ..< 30 {
            ids.append(doc.addNote(title: "N\(k)", body: String(repeating: "line \(k) of text, typed and edited\n", count: 12)))
        }
        try doc.deleteText(ids[4], range: 0 ..< 10)
        let good = doc.save(.compact)
        ConvergenceTests.expectSameLoad(good, "undamaged")
        #expect(try Document.load(good, concurrentFrom: 0).notebook == doc.notebook)
        let raw = try #require(try BlockCodec.decode(good).first)
        let block = try WireCodec.decodePayload(raw, fileSize: good.count)
        let state = try #require(block.state)
        func file(_ change: (inout WireBlock) -> Void) -> [UInt8] {
            var b = block
            change(&b)
            return BlockCodec.encode(payload: WireCodec.encodePayload(b), version: raw.version)
        }
        // The section's bodies hold one character more, or fewer, than the ops insert with the
        // text column; one more visible and one fewer deleted (the count agrees, the text not).
        var longer = state, shorter = state, moved = state
        longer.setBody(7, longer.body(7) + "!")
        shorter.setBody(7, String(shorter.body(7).dropLast()))
        moved.setBody(7, moved.body(7) + "x")
        let cases: [(String, [UInt8])] = [
            ("a body longer", file { $0.state = longer }),
            ("a body shorter", file { $0.state = shorter }),
            ("deleted text longer", file { $0.deadText.append("y") }),
            ("one moved from deleted to visible", file { $0.state = moved; $0.deadText.removeLast() }),
            ("no notes in the section", file { $0.state = $0.state.map { WireState(title: $0.title, notes: [], bodies: []) } }),
        ]
        for (what, bytes) in cases {
            #expect(throws: PeerNoteError.self, "\(what)") { try Document.load(bytes, concurrentFrom: .max) }
            ConvergenceTests.expectSameLoad(bytes, what)
        }
    }
}
