import Foundation
import Testing
@testable import PeerNote

/// `Document.salvage`: every intact change of a damaged file is recovered, nothing untrustworthy
/// is, and the result says exactly what was lost.
@Suite("Salvage")
struct SalvageTests {
    /// `meeting-appended.peernote` (a base block and two append blocks) and its blocks.
    func appended() throws -> (bytes: [UInt8], blocks: [RawBlock], changes: [Int]) {
        let bytes = try FixtureCatalog.bytes("meeting-appended.peernote")
        let blocks = try BlockCodec.decode(bytes)
        try #require(blocks.count == 3)
        let changes = try blocks.map { try WireCodec.decodePayload($0, fileSize: bytes.count).changes.count }
        return (bytes, blocks, changes)
    }

    @Test("A truncated incremental file (cut inside its last block) gives back the base and the first append exactly")
    func truncatedIncremental() throws {
        let (bytes, blocks, changes) = try appended()
        let cut = blocks[2].offset + (blocks[2].end - blocks[2].offset) / 2
        let result = try Document.salvage(Array(bytes[..<cut]))
        let prefix = Array(bytes[..<blocks[2].offset])
        let expected = try Document.load(prefix)
        #expect(!result.isIntact)
        #expect(result.bytes == prefix, "the intact prefix is written byte for byte")
        #expect(result.document.notebook == expected.notebook)
        #expect(result.document.changeCount == changes[0] + changes[1])
        #expect(result.document.heads == expected.heads)
        #expect(try Document.load(result.bytes).notebook == expected.notebook)
        #expect(result.regions.map(\.kind) == [.baseBlock, .appendBlock, .damaged])
        #expect(result.regions[2].range == blocks[2].offset ..< cut)
        #expect(result.regions[2].problem?.contains("cut short") == true, "\(result.regions[2].problem ?? "")")
        #expect(result.regions.prefix(2).allSatisfy { $0.keptChanges == $0.changeCount && $0.problem == nil })
        #expect(result.droppedChanges.isEmpty)
        #expect(result.unreadableChanges == 0 && !result.unreadableChangesExact, "the file ends inside the damage: the loss cannot be counted")
        #expect(result.damagedBytes == cut - blocks[2].offset)
    }

    @Test("A corrupt middle block: the base is recovered, the block is lost whole, and the changes that depend on it are dropped and listed")
    func corruptMiddleBlock() throws {
        let (bytes, blocks, changes) = try appended()
        var damaged = bytes
        damaged[blocks[1].payloadOffset + 20] ^= 0x01   // checksum fails; the payload may still partly decode
        let result = try Document.salvage(damaged)
        let base = Array(bytes[..<blocks[1].offset])
        #expect(result.bytes == base)
        #expect(result.document.notebook == (try Document.load(base)).notebook)
        #expect(result.document.changeCount == changes[0])
        #expect(result.regions.map(\.kind) == [.baseBlock, .damaged, .appendBlock])
        #expect(result.regions[1].range == blocks[1].offset ..< blocks[1].end)
        #expect(result.regions[1].problem?.contains("checksum mismatch") == true)
        #expect(result.regions[2].keptChanges == 0 && result.regions[2].changeCount == changes[2])
        #expect(result.unreadableChanges == changes[1] && result.unreadableChangesExact, "the next block's row numbers tell how many were lost")
        #expect(result.droppedChanges.count == changes[2])
        #expect(result.droppedChanges.allSatisfy { $0.author == "Chen Wei" && $0.id.replica == FixtureFactory.Replica.chen })
        #expect(result.droppedChanges.first?.reason.contains("damaged bytes") == true, "\(result.droppedChanges.first?.reason ?? "")")
    }

    @Test("A block whose payload is declared longer than the file is cut short when it is the last, and damaged where a block follows it")
    func declaredLengthBeyondTheFile() throws {
        // A base block and two appended ones, each payload over 255 bytes (a length head of
        // three bytes or more), the file under 65,535 bytes.
        let doc = Document(title: "Long", author: "alice")
        // Letters from a linear congruential generator: text that deflate cannot shrink much.
        func text(_ seed: UInt64) -> String {
            var x = seed
            return String((0 ..< 1500).map { _ in
                x = x &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                return Character(UnicodeScalar(UInt8(97 + (x >> 33) % 26)))
            })
        }
        doc.addNote(title: "one", body: text(1))
        var bytes = doc.save(.compact)
        for seed: UInt64 in [2, 3] {
            let d = try Document.load(bytes)
            d.author = "alice"
            d.addNote(title: "note \(seed)", body: text(seed))
            bytes = d.save(.incremental)
        }
        let blocks = try BlockCodec.decode(bytes)
        try #require(blocks.count == 3 && bytes.count < 65_535)
        // The payload's byte string head: its length in the bytes just before the payload, all set.
        func overstated(_ block: RawBlock) throws -> [UInt8] {
            let size = block.payload.count
            let head = size < 24 ? 1 : size < 256 ? 2 : size < 65_536 ? 3 : 5
            try #require(head >= 3, "a payload of \(size) bytes")
            var damaged = bytes
            for i in block.payloadOffset - head + 1 ..< block.payloadOffset { damaged[i] = 0xFF }
            return damaged
        }
        let middle = try Document.salvage(try overstated(blocks[1]))
        let said = try #require(middle.regions.first { $0.kind == .damaged }?.problem)
        #expect(said.contains("declared length") && !said.contains("cut short"), "\(said)")
        let last = try Document.salvage(try overstated(blocks[2]))
        let lastSaid = try #require(last.regions.first { $0.kind == .damaged }?.problem)
        #expect(lastSaid.contains("the block is cut short: declared length"), "\(lastSaid)")
    }

    @Test("An intact file comes back unchanged")
    func intact() throws {
        for file in ["meeting.peernote", "meeting-appended.peernote", "hi.peernote"] {
            let bytes = try FixtureCatalog.bytes(file)
            let result = try Document.salvage(bytes)
            #expect(result.isIntact && result.bytes == bytes && result.droppedChanges.isEmpty && result.damagedBytes == 0, "\(file)")
            #expect(result.regions.allSatisfy { $0.kind != .damaged && $0.keptChanges == $0.changeCount }, "\(file)")
            #expect(result.regions.reduce(0) { $0 + $1.length } == bytes.count, "\(file)")
        }
    }

    @Test("Nothing recoverable: a clear error", arguments: [
        ("damaged/wrong-magic.peernote", "nothing can be recovered"),
        ("damaged/not-cbor.peernote", "not a .peernote file"),
        ("damaged/empty.peernote", "the file is empty"),
        ("damaged/truncated.peernote", "no intact base block"),
        ("damaged/bit-flipped.peernote", "checksum mismatch"),
    ])
    func nothingRecoverable(file: String, message: String) throws {
        let bytes = try FixtureCatalog.bytes(file)
        #expect {
            _ = try Document.salvage(bytes)
        } throws: { error in
            guard let e = error as? PeerNoteError, case .invalidDocument(_, let m) = e else { return false }
            return m.contains(message) && m.contains("nothing can be recovered")
        }
    }

    @Test("A newer format version is not damage: salvage refuses it as such")
    func newerVersion() throws {
        let bytes = try FixtureCatalog.bytes("damaged/newer-version.peernote")
        #expect(throws: PeerNoteError.unsupportedVersion(FormatInfo.version + 1)) { _ = try Document.salvage(bytes) }
    }

    @Test("A change asking for more integration work than the file's size allows (60,000 inserts at one place) is dropped, as the loader refuses it, instead of replayed for minutes")
    func workBudget() throws {
        let bytes = try FuzzFixtures.scanningInserts()
        #expect(throws: PeerNoteError.self) { _ = try Document.load(bytes) }
        let result = try Document.salvage(bytes)
        #expect(result.droppedChanges.count == 1)
        #expect(result.droppedChanges.first?.reason.contains("more work than the file's size allows") == true, "\(result.droppedChanges)")
        #expect(result.document.changeCount == 2)
        #expect(try Document.load(result.bytes).notebook == result.document.notebook)
    }

    @Test("Every damaged fixture is either recovered into a valid document or refused with an error; none crashes")
    func damagedFixtures() throws {
        for entry in FixtureCatalog.damaged {
            let bytes = try FixtureCatalog.bytes(entry.file)
            do {
                let result = try Document.salvage(bytes)
                let reloaded = try Document.load(result.bytes)
                #expect(reloaded.notebook == result.document.notebook, "\(entry.file)")
                #expect(!result.isIntact, "\(entry.file) is damaged")
            } catch {
                #expect(!error.description.isEmpty, "\(entry.file)")
            }
        }
    }

    @Test("Bytes that are no block between two blocks are skipped: every change is recovered, the junk is reported")
    func junkBetweenBlocks() throws {
        let (bytes, blocks, changes) = try appended()
        let junk = Array("garbage written by a broken sync tool".utf8)
        let file = Array(bytes[..<blocks[1].offset]) + junk + Array(bytes[blocks[1].offset...])
        let result = try Document.salvage(file)
        #expect(result.document.changeCount == changes.reduce(0, +))
        #expect(result.document.notebook == (try Document.load(bytes)).notebook)
        #expect(result.regions.map(\.kind) == [.baseBlock, .damaged, .appendBlock, .appendBlock])
        #expect(result.regions[1].range == blocks[1].offset ..< blocks[1].offset + junk.count)
        #expect(result.unreadableChanges == 0 && result.unreadableChangesExact)
        #expect(result.droppedChanges.isEmpty)
        #expect(try Document.load(result.bytes).changeCount == result.document.changeCount)
    }

    @Test("Changes of another replica that depend only on what survived are kept, even after a lost block")
    func independentReplicaSurvives() throws {
        let base = Document(title: "Trip", author: "ann", id: try FixtureFactory.uuid(FixtureFactory.hiID),
                            replica: ReplicaID(high: 1, low: 1), time: FixtureFactory.date(FixtureFactory.meetingDay))
        FixtureFactory.at(base, FixtureFactory.meetingDay + 60)
        let plan = base.addNote(title: "Plan", body: "fly")
        let bytes0 = base.save()
        // X appends a block; Y edits the base independently; Z (who has X) merges Y and appends Y's changes.
        let x = try FixtureFactory.session(bytes0, replica: ReplicaID(high: 2, low: 2), author: "xia")
        try x.setBody(plan, "fly on Monday")
        let bytes1 = x.save(.incremental)
        let y = try FixtureFactory.session(bytes0, replica: ReplicaID(high: 3, low: 3), author: "yan")
        y.addNote(title: "Packing", body: "boots")
        let z = try FixtureFactory.session(bytes1, replica: ReplicaID(high: 4, low: 4), author: "zoe")
        try z.merge(y)
        let bytes2 = z.save(.incremental)
        let blocks = try BlockCodec.decode(bytes2)
        try #require(blocks.count == 3)
        var damaged = bytes2
        damaged[blocks[1].payloadOffset + 3] ^= 0xFF

        let result = try Document.salvage(damaged)
        let expected = try Document.load(bytes0)
        try expected.merge(y)
        #expect(result.document.notebook == expected.notebook, "X's edit is lost; Y's note is kept")
        #expect(result.document.changeCount == expected.changeCount)
        #expect(result.droppedChanges.isEmpty)
        #expect(result.unreadableChanges == 1 && result.unreadableChangesExact)
        #expect(result.regions.map(\.keptChanges) == [base.changeCount, 0, y.changeCount - base.changeCount])
        #expect(result.bytes == result.document.save(.compact), "not a prefix of the file: saved compact")
        #expect(try Document.load(result.bytes).notebook == expected.notebook)
    }

    @Test("Two files glued together: the second one's base block is left out and said so")
    func secondBaseBlock() throws {
        let meeting = try FixtureCatalog.bytes("meeting.peernote")
        let hi = try FixtureCatalog.bytes("hi.peernote")
        let result = try Document.salvage(meeting + hi)
        #expect(result.bytes == meeting)
        #expect(result.regions.map(\.kind) == [.baseBlock, .baseBlock])
        #expect(result.regions[1].keptChanges == 0)
        let hiID = try Document.load(hi).id
        #expect(result.regions[1].problem == "left out: it starts another notebook (id \(hiID.uuidString.lowercased()))")
        #expect(result.leftOut.map(\.kind) == [.otherDocument])
        #expect(result.leftOut.first?.range == meeting.count ..< meeting.count + hi.count)
        #expect(result.leftOut.first?.documentID == hiID)
        #expect(result.leftOutChanges == (try Document.load(hi)).changeCount)
        #expect(result.leftOut.first?.onItsOwn == SalvageLeftOut.OnItsOwn(title: (try Document.load(hi)).title, changes: (try Document.load(hi)).changeCount, intact: true))
    }

    @Test("A glued-on notebook keeps its append blocks, even those whose rows would follow the first notebook's: they are not mixed into it")
    func gluedNotebookKeepsItsBlocks() throws {
        let (work, _, _) = try appended()
        let other = Document(title: "Other", author: "ann", time: FixtureFactory.date(FixtureFactory.meetingDay))
        var bytes = other.save(.incremental)
        for i in 1 ... 21 {   // enough blocks that some start at and after row 19, where meeting-appended's rows end
            let session = try FixtureFactory.session(bytes, replica: ReplicaID(high: 7, low: UInt64(i)), author: "ann")
            session.setTitle("Other \(i)")
            bytes = session.save(.incremental)
        }
        let result = try Document.salvage(work + bytes)
        #expect(result.bytes == work, "the first notebook as it was")
        #expect(result.document.notebook == (try Document.load(work)).notebook)
        #expect(result.droppedChanges.isEmpty)
        #expect(result.regions.filter { $0.offset >= work.count }.allSatisfy { $0.keptChanges == 0 })
    }

    @Test("Trailing bytes that cannot hold a block do not make the loss uncountable; what may be left of a block still does")
    func trailingBytesWithoutBlock() throws {
        let (bytes, blocks, _) = try appended()
        let junk = try Document.salvage(bytes + Array("hello junk\n".utf8))
        #expect(junk.bytes == bytes)
        #expect(junk.unreadableChanges == 0 && junk.unreadableChangesExact, "11 bytes without magic hold no change")
        #expect(junk.regions.last?.changeCount == 0)
        // Every cut inside the last block leaves bytes that may have held changes.
        for cut in blocks[2].offset + 1 ..< blocks[2].end {
            let result = try Document.salvage(Array(bytes[..<cut]))
            #expect(!result.unreadableChangesExact, "cut at \(cut)")
        }
        // As does a last block whose magic was hit.
        var hit = bytes
        hit[blocks[2].offset + 4] ^= 0x01
        #expect(!(try Document.salvage(hit)).unreadableChangesExact)
    }

    @Test("Salvaging a file cut at every length never crashes and always gives a valid document or an error")
    func everyCut() throws {
        let (bytes, blocks, changes) = try appended()
        for cut in stride(from: 0, through: bytes.count, by: 7) {
            do {
                let result = try Document.salvage(Array(bytes[..<cut]))
                let reloaded = try Document.load(result.bytes)
                #expect(reloaded.changeCount == result.document.changeCount)
                // What is recovered is exactly the whole blocks before the cut.
                let whole = blocks.indices.filter { blocks[$0].end <= cut }
                #expect(result.document.changeCount == whole.reduce(0) { $0 + changes[$1] }, "cut at \(cut)")
            } catch {
                #expect(cut < blocks[0].end, "cut at \(cut): \(error)")
            }
        }
    }

    @Test("Salvage keeps the file's row budget: blocks past it are damaged, the blocks within it are recovered")
    func rowBudget() throws {
        // Three blocks of 30,000 changes in a few hundred bytes: the third passes the file-wide budget.
        let file = Craft.retitles([30_000, 30_000, 30_000])
        let blocks = try BlockCodec.decode(file)
        try #require(blocks.count == 3)
        let result = try Document.salvage(file)
        #expect(result.document.changeCount == 60_000)
        #expect(result.bytes == Array(file[0 ..< blocks[1].end]), "the two blocks within the budget, as they were")
        let damaged = try #require(result.regions.last)
        #expect(damaged.kind == .damaged && damaged.offset == blocks[2].offset, "\(result.regions)")
        #expect(damaged.problem?.contains("block claims 30000 changes after the 60000 before it, more than a \(file.count)-byte file can hold") == true,
                "\(damaged.problem ?? "")")
    }

    @Test("Files that trap the loader are salvaged without trapping: the offending block or changes are left out")
    func loaderTraps() throws {
        let hi = try FixtureCatalog.bytes("hi.peernote")
        let firstRowFile = try FixtureCatalog.bytes("fuzz/first-row-overflow.peernote")
        let firstRow = try Document.salvage(firstRowFile)
        #expect(firstRow.bytes == hi)
        #expect(firstRow.regions.last?.problem?.contains("more rows than a \(firstRowFile.count)-byte file can hold") == true, "\(firstRow.regions)")

        let counters = try Document.salvage(try FixtureCatalog.bytes("fuzz/counter-overflow.peernote"))
        #expect(counters.document.changeCount == 196, "1 + the 195 changes whose op counters fit in 32 bits")
        #expect(counters.droppedChanges.first?.reason.contains("op counters pass 2^32") == true)
        #expect(counters.droppedChanges.count == 25)

        // Times beyond ±2^52 s make a block damaged (load refuses it): salvage keeps the base
        // block, says why the rest is lost, and writes a file that loads.
        let times = try FixtureCatalog.bytes("fuzz/extreme-times-compact-save.peernote")
        let salvaged = try Document.salvage(times)
        #expect(!salvaged.isIntact)
        #expect(try Document.load(salvaged.bytes).changeCount == salvaged.document.changeCount)
        #expect(salvaged.regions.contains { $0.problem?.contains("out of range") == true }, "\(salvaged.regions)")
    }
}
