import Foundation
import Testing
@_spi(Diagnostics) @testable import PeerNote

/// Format version 3 (peernote(5), "State section" and column 49): a compact save that writes it
/// (`save(_:writeStructures:)`; not yet the default) stores each note body's structure and leaves
/// out the origins of the inserts that follow from it; a reader builds the bodies from the
/// structures instead of replaying the text ops. Here: what such a
/// file holds, that it reads back as the document written (the same log, origins included, as
/// the version 2 file of the same document), that files of version 2 still read, and that a
/// structure that does not match the history is refused.
@Suite("Format version 3: bodies stored by their structure")
struct FormatVersion3Tests {
    /// A random edit that makes no conflict (a state section is written only without one):
    /// text typed, pasted or deleted in a note's body, or a note added.
    static func textEdit(_ doc: Document, _ rng: inout SeededRandom) throws {
        let notes = doc.notes
        let words = ["milk", "eggs", " ", "plan", "x", "日本", "✓", "\n", "a longer line of text"]
        guard let n = notes.randomElement(using: &rng), Int.random(in: 0 ..< 12, using: &rng) > 0 else {
            doc.addNote(title: "n", body: words.randomElement(using: &rng) ?? "", at: Int.random(in: 0 ... notes.count, using: &rng))
            return
        }
        let count = n.body.unicodeScalars.count
        if count > 0 && Int.random(in: 0 ..< 3, using: &rng) == 0 {
            let lo = Int.random(in: 0 ..< count, using: &rng)
            try doc.deleteText(n.id, range: lo ..< min(count, lo + Int.random(in: 1 ... 6, using: &rng)))
        } else {
            try doc.insertText(n.id, at: Int.random(in: 0 ... count, using: &rng), words.randomElement(using: &rng) ?? "x")
        }
    }

    /// A document edited on three copies with merges between, so that some inserts were made
    /// concurrently at one place; without conflicts.
    static func document(seed: UInt64) throws -> Document {
        var rng = SeededRandom(state: seed)
        let doc = Document(title: "Shared", author: "a")
        for _ in 0 ..< 60 { try textEdit(doc, &rng) }
        let copies = (0 ..< 2).map { doc.fork(author: "c\($0)") }
        for round in 0 ..< 4 {
            for copy in copies + [doc] { for _ in 0 ..< 20 { try textEdit(copy, &rng) } }
            try doc.merge(copies[round % 2])
            try copies[(round + 1) % 2].merge(doc)
        }
        for copy in copies { try doc.merge(copy) }
        return doc
    }

    /// A note "ab" into which two copies insert at one place, concurrently: one of the two
    /// inserts cannot have the origins the structure gives.
    static func concurrentAtOnePlace() throws -> Document {
        let doc = Document(title: "T", author: "a", replica: ReplicaID(high: 1, low: 1))
        let n = doc.addNote(title: "n", body: "ab")
        let other = doc.fork(author: "b")
        try doc.insertText(n, at: 1, "X")
        try other.insertText(n, at: 1, "Y")
        try doc.merge(other)
        return doc
    }

    /// The insert ops of a file's only block whose origins are stored, and all its insert ops.
    static func storedOrigins(_ bytes: [UInt8]) throws -> (stored: Int, inserts: Int) {
        let (_, block) = try StateSectionTests.onlyBlock(bytes)
        var stored = 0, inserts = 0
        for op in block.ops {
            guard case .insertText(_, let l, _, _) = op.body else { continue }
            inserts += 1
            if !l.isUnstated { stored += 1 }
        }
        return (stored, inserts)
    }

    /// The log's ops (origins included) and text, and the notebook, of `a` and `b` agree.
    static func expectSame(_ a: Document, _ b: Document, _ comment: Comment? = nil) {
        #expect(a.log.ops == b.log.ops, comment)
        #expect(a.log.text == b.log.text, comment)
        #expect(a.notebook == b.notebook, comment)
        #expect(a.deletedNotes == b.deletedNotes, comment)
        for (x, y) in zip(a.state.noteStates, b.state.noteStates) {
            var p: [(LocalID, Bool)] = [], q: [(LocalID, Bool)] = []
            x.body.forEachElement { id, _, deleted in p.append((id, deleted)) }
            y.body.forEachElement { id, _, deleted in q.append((id, deleted)) }
            #expect(p.map(\.0) == q.map(\.0) && p.map(\.1) == q.map(\.1), comment)
        }
    }

    @Test("A compact save is version 3, each note with its structure; it reads back as the document, the log and its origins the same as from version 2", arguments: [1, 2, 3, 4, 5])
    func roundTrip(seed: UInt64) throws {
        let doc = try Self.document(seed: seed)
        let v3 = doc.save(.compact, writeStructures: true)
        let v2 = doc.save(.compact, writeStructures: false)
        let (raw3, block3) = try StateSectionTests.onlyBlock(v3)
        let (raw2, block2) = try StateSectionTests.onlyBlock(v2)
        #expect(raw3.version == 3 && raw2.version == 2)
        let state3 = try #require(block3.state), state2 = try #require(block2.state)
        #expect(state3.notes.allSatisfy { $0.structure != nil } && state2.notes.allSatisfy { $0.structure == nil })
        let fromV3 = try Document.load(v3), fromV2 = try Document.load(v2)
        Self.expectSame(fromV3, fromV2, "seed \(seed)")
        #expect(fromV3.notebook == doc.notebook)
        #expect(try Document.readNotebook(v3) == doc.notebook)
        // Canonical: the document read saves to the same bytes, and the version 2 file converts to them.
        #expect(fromV3.save(.compact, writeStructures: true) == v3)
        #expect(fromV2.save(.compact, writeStructures: true) == v3)
        // The document read edits and merges on as the original does.
        #expect(fromV3.relation(to: doc) == .shared)
        let (stored, inserts) = try Self.storedOrigins(v3)
        #expect(inserts > 0 && stored < inserts, "most inserts leave their origins out (\(stored) of \(inserts) stored)")
    }

    @Test("Copies typing and merging make inserts whose origins the structure does not give; they are stored, and read back")
    func exceptionsInRandomHistories() throws {
        var stored = 0
        for seed in 1 ... 5 as ClosedRange<UInt64> {
            let doc = try Self.document(seed: seed)
            stored += try Self.storedOrigins(doc.save(.compact, writeStructures: true)).stored
        }
        #expect(stored > 0, "concurrent inserts at one place among five histories")
    }

    @Test("The storage report of a version 3 file counts its structures as history (its inserts leave origins out)")
    func storageReport() throws {
        let doc = try Self.document(seed: 9)
        let v3 = doc.save(.compact, writeStructures: true), v2 = doc.save(.compact, writeStructures: false)
        let r3 = try Document.storageReport(v3), r2 = try Document.storageReport(v2)
        #expect(r3.formatVersion == 3 && r2.formatVersion == 2)
        #expect(r3.fileSize == v3.count && r3.textBytes == r2.textBytes)
        #expect(r3.historyBytes > 0 && r3.historyBytes + r3.textBytes <= r3.fileSize + 64)
    }

    @Test("Loading on two threads (a large base block) gives what one thread gives")
    func concurrentLoad() throws {
        let doc = try Self.document(seed: 7)
        let bytes = doc.save(.compact, writeStructures: true)
        Self.expectSame(try Document.load(bytes, concurrentFrom: 1), try Document.load(bytes, concurrentFrom: .max))
    }

    @Test("An insert made concurrently at one place stores its origins (column 49), and reads back with them")
    func exceptionStored() throws {
        let doc = try Self.concurrentAtOnePlace()
        let bytes = doc.save(.compact, writeStructures: true)
        let (stored, inserts) = try Self.storedOrigins(bytes)
        #expect(stored == 1, "the insert whose origins the structure does not give")
        #expect(inserts == 3)
        let loaded = try Document.load(bytes)
        Self.expectSame(loaded, try Document.load(doc.save(.compact, writeStructures: false)))
        #expect(loaded.notes[0].body == doc.notes[0].body)
        #expect(loaded.save(.compact, writeStructures: true) == bytes)
    }

    @Test("Where an insert stores its origins, the bodies replayed with them must come out as the structures state")
    func exceptionOrderChecked() throws {
        let doc = try Self.concurrentAtOnePlace()
        let (_, block) = try StateSectionTests.onlyBlock(doc.save(.compact, writeStructures: true))
        let runs = try #require(block.state?.notes[0].structure)
        // "a", then the two concurrent inserts, then "b": the two swapped, and their characters.
        try #require(runs.count == 4 && runs.allSatisfy { $0.length == 1 && !$0.deleted })
        var b = block
        b.state?.notes[0].structure = [runs[0], runs[2], runs[1], runs[3]]
        let body = Array(doc.notes[0].body.unicodeScalars)
        b.state?.setBody(0, String(String.UnicodeScalarView([body[0], body[2], body[1], body[3]])))
        Self.expectRefused(Self.file(b), "is not the order its history gives")
    }

    @Test("Random histories of several copies: every compact save reads back as its version 2 file does", arguments: 0 ..< 12)
    func randomized(seed: UInt64) throws {
        // (Inserts made concurrently at one place, which store their origins, are among them:
        // `roundTrip` counts them.)
        var rng = SeededRandom(state: 100 + seed)
        let first = Document(title: "R", author: "a")
        let copies = [first] + (1 ..< 3).map { first.fork(author: "c\($0)") }
        for step in 0 ..< 30 {
            let c = copies[Int.random(in: 0 ..< copies.count, using: &rng)]
            for _ in 0 ..< Int.random(in: 1 ... 6, using: &rng) { try Self.textEdit(c, &rng) }
            if step % 3 == 2 {
                let a = Int.random(in: 0 ..< copies.count, using: &rng), b = Int.random(in: 0 ..< copies.count, using: &rng)
                if a != b { try copies[a].merge(copies[b]) }
            }
            if step % 10 == 9 {
                for d in copies {
                    let v3 = d.save(.compact, writeStructures: true), v2 = d.save(.compact, writeStructures: false)
                    #expect(try StateSectionTests.onlyBlock(v3).raw.version == 3)
                    let fromV3 = try Document.load(v3)
                    Self.expectSame(fromV3, try Document.load(v2), "seed \(seed), step \(step)")
                    #expect(fromV3.save(.compact, writeStructures: true) == v3)
                }
            }
        }
    }

    // MARK: Refused

    /// `block` (a version 3 block) as a file of its own.
    static func file(_ block: WireBlock) -> [UInt8] {
        BlockCodec.encode(payload: WireCodec.encodePayload(block), version: Format.version(of: block))
    }

    static func expectRefused(_ bytes: [UInt8], _ fragment: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(sourceLocation: sourceLocation) {
            _ = try Document.load(bytes)
        } throws: { error in
            guard let e = error as? PeerNoteError, case .invalidDocument(_, let m) = e else { return false }
            if !m.contains(fragment) { Issue.record("refused with \"\(m)\", expected \"\(fragment)\"", sourceLocation: sourceLocation) }
            return true
        }
    }

    /// A note "hello world" typed, then "lo w" deleted, and a second note; its version 3 block.
    static func simpleBlock() throws -> WireBlock {
        let doc = Document(title: "T", author: "a", replica: ReplicaID(high: 2, low: 2))
        let n = doc.addNote(title: "one", body: "")
        try doc.insertText(n, at: 0, "hello")
        try doc.insertText(n, at: 5, " world")
        try doc.deleteText(n, range: 3 ..< 7)
        let m = doc.addNote(title: "two", body: "")
        try doc.insertText(m, at: 0, "xyz")
        let (_, block) = try StateSectionTests.onlyBlock(doc.save(.compact, writeStructures: true))
        return block
    }

    @Test("A structure that does not match the history is refused, saying so")
    func damaged() throws {
        let block = try Self.simpleBlock()
        let state = try #require(block.state)
        let k = try #require(state.notes.firstIndex { $0.title == "one" })
        let runs = try #require(state.notes[k].structure)
        #expect(runs.contains { $0.deleted } && runs.count >= 3)
        #expect(try Document.load(Self.file(block)).notes.map(\.body).sorted() == ["helorld", "xyz"])
        func with(_ change: (inout [WireStructureRun]) -> Void, dead: [Unicode.Scalar]? = nil, body: String? = nil) -> [UInt8] {
            var b = block
            var r = runs
            change(&r)
            b.state?.notes[k].structure = StructureCodec.joined(r)
            if let dead { b.deadText = dead }
            if let body { b.state?.setBody(k, body) }
            return Self.file(b)
        }
        // A deleted run shown as visible (its characters then in the body, not the deleted text).
        let deletedAt = try #require(runs.firstIndex { $0.deleted })
        Self.expectRefused(with({ $0[deletedAt].deleted = false }, dead: [], body: "hello world"), "shows a deleted element as visible")
        // A visible run shown as deleted.
        Self.expectRefused(with({ $0[0].deleted = true }, dead: Array("hel".unicodeScalars) + block.deadText, body: "orld"),
                           "deleted that no delete targets")
        // An element missing, one listed twice, the other note's elements: the characters no
        // longer add up to the ops' (the structures' own checks: StructureLoadTests).
        Self.expectRefused(with({ $0[$0.count - 1].length -= 1 }, body: "helorl"), "the state section")
        Self.expectRefused(with({ $0.append(WireStructureRun(replica: $0[0].replica, counter: $0[0].counter, length: 1, deleted: false)) }, body: "helorldh"),
                           "the state section")
        let other = try #require(state.notes[1 - k].structure)
        Self.expectRefused(with({ $0 += other }, body: "helorldxyz"), "the state section")
        // As many elements as the ops insert, one of them listed in place of another.
        Self.expectRefused(with({ $0[$0.count - 1].counter -= 1 }), "does not match the history")
        // The characters of one insert listed apart, an earlier element between them: " world"
        // is one insert; "world" moved before " ".
        var apart = runs
        let last = apart.removeLast()   // "orld", then " w" deleted before it
        #expect(last.length == 4 && !last.deleted)
        apart.insert(last, at: 0)
        Self.expectRefused(with({ $0 = apart }, body: "orldhel"), "lists the characters of one insert apart")
    }

    @Test("Column 49 or a structure in a version 2 block, and a version 3 block without column 49, are refused")
    func versionMismatch() throws {
        let block = try Self.simpleBlock()
        // The same block labelled version 2: its entries have nine items.
        Self.expectRefused(BlockCodec.encode(payload: WireCodec.encodePayload(block), version: 2), "is not an array of 8 fields")
        // A version 2 block with column 49: every origin stored, the column added by hand.
        let v2 = try Document.load(Self.file(block)).save(.compact, writeStructures: false)
        let (raw, _) = try StateSectionTests.onlyBlock(v2)
        let payload = try Self.addingColumn49(raw.payload)
        Self.expectRefused(BlockCodec.encode(payload: payload, version: 2), "unknown column 49")
    }

    /// A payload with a column 49 of one `false` added to its columns.
    static func addingColumn49(_ payload: [UInt8]) throws -> [UInt8] {
        let item = try CBORDecoder.decodeItem(payload)
        let map = try #require(item.map)
        let compressed = try #require(item.mapValue(forKey: BlockKey.columns.rawValue)?.bytesValue)
        let size = try #require(item.mapValue(forKey: BlockKey.columnsSize.rawValue)?.uint)
        var columns = try ColumnSet.decode(try Deflate.decompress(compressed, maxOutput: Int(size)), base: 0).mapValues { Array($0.bytes) }
        var flag = BoolColumnEncoder()
        flag.append(false)
        columns[ColumnID.opOriginsStored.rawValue] = flag.finish()
        let raw = ColumnSet.encode(columns)
        var e = CBOREncoder()
        e.mapHeader(map.count)
        for pair in map {
            e.raw(Array(payload[pair.key.offset ..< pair.key.end]))
            switch pair.key.uint {
            case BlockKey.columns.rawValue: e.bytes(Deflate.compress(raw))
            case BlockKey.columnsSize.rawValue: e.unsigned(UInt64(raw.count))
            default: e.raw(Array(payload[pair.value.offset ..< pair.value.end]))
            }
        }
        return e.bytes
    }

    @Test("A damaged file of version 3 is salvaged: its base block's origins come from its structures")
    func salvage() throws {
        let doc = try Self.document(seed: 11)
        let base = doc.save(.compact, writeStructures: true)
        doc.addNote(title: "later", body: "text")
        let grown = doc.save(.incremental)
        #expect(grown.count > base.count)
        var damaged = grown
        damaged[damaged.count - 3] ^= 0xFF   // the appended block's checksum
        let result = try Document.salvage(damaged)
        Self.expectSame(result.document, try Document.load(base))
    }
}
