import Foundation
import Testing
@_spi(Diagnostics) @testable import PeerNote

/// Why a fixture could not be built.
struct FixtureBuildError: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

/// Builds every file of `Fixtures/` in memory, deterministically: fixed document
/// UUIDs, one fixed `ReplicaID` per editing session, fixed clocks. Damaged files
/// are crafted with the library's internal codecs so that each is damaged in
/// exactly one way and otherwise well-formed.
enum FixtureFactory {
    /// One replica id per editing session (a real session draws a random one).
    enum Replica {
        static let aliceMeeting = ReplicaID(high: 0xA11C_E001_0000_0000, low: 0x0000_0000_0000_0001)
        static let bobMeeting = ReplicaID(high: 0xB0B0_0001_0000_0000, low: 0x0000_0000_0000_0001)
        static let aliceNextDay = ReplicaID(high: 0xA11C_E002_0000_0000, low: 0x0000_0000_0000_0002)
        static let bobNextDay = ReplicaID(high: 0xB0B0_0002_0000_0000, low: 0x0000_0000_0000_0002)
        static let chen = ReplicaID(high: 0xC4E1_0001_0000_0000, low: 0x0000_0000_0000_0003)
        static let groceryBase = ReplicaID(high: 0x6B00_0001_0000_0000, low: 0x0000_0000_0000_0004)
        static let groceryLaptop = ReplicaID(high: 0x1A70_0001_0000_0000, low: 0x0000_0000_0000_0005)
        static let groceryPhone = ReplicaID(high: 0xF0E0_0001_0000_0000, low: 0x0000_0000_0000_0006)
        static let unrelatedA = ReplicaID(high: 0xAAAA_0001_0000_0000, low: 0x0000_0000_0000_0007)
        static let unrelatedB = ReplicaID(high: 0xBBBB_0001_0000_0000, low: 0x0000_0000_0000_0008)
        static let hi = ReplicaID(high: 0x0123_4567_89AB_CDEF, low: 0xFEDC_BA98_7654_3210)
    }

    static let meetingID = "3B8D5C4E-7F21-4A6B-9C0D-1E2F3A4B5C6D"
    static let groceryID = "9E6F1A2B-3C4D-4E5F-8A9B-0C1D2E3F4A5B"
    static let unrelatedAID = "11111111-2222-4333-8444-555555555555"
    static let unrelatedBID = "AAAAAAAA-BBBB-4CCC-8DDD-EEEEEEEEEEEE"
    static let hiID = "00112233-4455-4677-8899-AABBCCDDEEFF"

    /// 2024-03-14 09:00:00 UTC, the meeting.
    static let meetingDay = 1_710_406_800
    /// 2024-03-15 09:00:00 UTC.
    static let nextDay = meetingDay + 86_400
    /// 2024-03-16 08:00:00 UTC, the grocery list.
    static let saturday = meetingDay + 2 * 86_400 - 3_600

    // MARK: Helpers

    static func uuid(_ s: String) throws -> UUID {
        guard let u = UUID(uuidString: s) else { throw FixtureBuildError("bad UUID \(s)") }
        return u
    }

    static func date(_ t: Int) -> Date { Date(timeIntervalSince1970: TimeInterval(t)) }

    /// Sets the clock that stamps `d`'s next changes.
    static func at(_ d: Document, _ t: Int) {
        let when = date(t)
        d.clock = { when }
    }

    /// An editing session on a device: `bytes` loaded (fully verified) into a document
    /// whose replica is `replica` instead of a random one. Incremental saves append to `bytes`.
    static func session(_ bytes: [UInt8], replica: ReplicaID, author: String) throws -> Document {
        let loaded = try Document.load(bytes)
        let d = Document(id: loaded.id, genesis: loaded.genesis, log: loaded.log, state: loaded.state, replica: replica, author: author)
        d.unknownFields = loaded.unknownFields
        d.persisted = loaded.persisted
        return d
    }

    static func body(_ d: Document, _ n: NoteID) throws -> String {
        guard let note = d.note(n) else { throw FixtureBuildError("no note \(n)") }
        return note.body
    }

    /// Appends `text` to the end of a note's body.
    static func append(_ d: Document, _ n: NoteID, _ text: String) throws {
        try d.insertText(n, at: try body(d, n).unicodeScalars.count, text)
    }

    /// Rewrites a note's body by replacing `old` with `new` (recorded as character edits).
    static func replace(_ d: Document, _ n: NoteID, _ old: String, with new: String) throws {
        let b = try body(d, n)
        guard b.contains(old) else { throw FixtureBuildError("\"\(old)\" not in \(b)") }
        try d.setBody(n, b.replacingOccurrences(of: old, with: new))
    }

    static func note(_ d: Document, titled title: String) throws -> NoteID {
        try d.findNote(title, includeDeleted: true).id
    }

    // MARK: Valid documents

    /// `meeting.peernote`: Alice takes notes, shares the file with Bob mid-meeting,
    /// both edit, Alice merges Bob's copy and saves compact.
    static func meeting() throws -> [UInt8] {
        let t = meetingDay
        let alice = Document(title: "Weekly product sync", author: "Alice Martin", id: try uuid(meetingID),
                             replica: Replica.aliceMeeting, time: date(t))
        at(alice, t + 60)
        let agenda = alice.addNote(title: "Agenda", body: "1. Release 2.4 status\n2. Hiring\n3. Customer feedback\n4. Action items",
                                   tags: ["agenda"])
        at(alice, t + 240)
        let release = alice.addNote(title: "Release 2.4 status",
                                    body: "Beta shipped Monday. Two crash reports, both fixed on main.\nRelease candidate planned for Thursday.",
                                    tags: ["release"], priority: .high)
        at(alice, t + 600)
        let hiring = alice.addNote(title: "Hiring", body: "Two backend candidates in the final round.\nOffer to Sam expected next week.",
                                   tags: ["hiring", "people"])
        at(alice, t + 960)
        let feedback = alice.addNote(title: "Customer feedback",
                                     body: "Export to PDF is the top requst (14 tickets).\nSync conflicts are confusng users on mobile.",
                                     tags: ["customers"], priority: .high)
        at(alice, t + 1_500)
        let actions = alice.addNote(title: "Action items",
                                    body: "- Alice: ship the RC on Thursday\n- Bob: triage the sync tickets\n- Chen: schedule the hiring panel",
                                    tags: ["actions"], priority: .high)
        at(alice, t + 1_560)
        let parking = alice.addNote(title: "Parking lot", body: "Office move in Q3?", priority: .low)
        // Alice shares the file; Bob takes notes on his desktop.
        let shared = alice.save()
        let bob = try session(shared, replica: Replica.bobMeeting, author: "Bob Okafor")
        at(bob, t + 1_800)
        try append(bob, release, "\nDocs freeze on Wednesday.")
        try bob.addTag(feedback, "mobile")
        at(bob, t + 2_100)
        _ = bob.addNote(title: "Decisions", body: "Ship the 2.4 RC on Thursday if no new crash reports.\nPDF export goes on the 2.5 roadmap.",
                        tags: ["decisions"], at: 4)
        // Meanwhile Alice edits her copy.
        at(alice, t + 1_900)
        try replace(alice, hiring, "next week", with: "by Friday")
        try alice.moveNote(actions, to: 1)
        try alice.removeTag(hiring, "people")
        at(alice, t + 2_000)
        try alice.deleteNote(parking)
        at(alice, t + 2_400)
        try alice.merge(bob)
        try alice.setNoteTitle(agenda, "Agenda (14 March)")
        guard alice.conflicts.isEmpty else { throw FixtureBuildError("meeting has conflicts: \(alice.conflicts)") }
        return alice.save()
    }

    /// `meeting-alice.peernote` and `meeting-bob.peernote`: two copies of the meeting
    /// edited the next day without syncing, so that every kind of conflict arises.
    static func meetingPair(_ meeting: [UInt8]) throws -> (alice: [UInt8], bob: [UInt8]) {
        let t = nextDay
        let alice = try session(meeting, replica: Replica.aliceNextDay, author: "Alice Martin")
        let bob = try session(meeting, replica: Replica.bobNextDay, author: "Bob Okafor")
        let release = try note(alice, titled: "Release 2.4 status")
        let hiring = try note(alice, titled: "Hiring")
        let decisions = try note(alice, titled: "Decisions")
        let feedback = try note(alice, titled: "Customer feedback")

        at(alice, t + 300)
        try alice.setNoteTitle(release, "Release 2.4: RC status")
        try alice.setPriority(hiring, .high)
        at(alice, t + 420)
        try append(alice, decisions, "\nHire both backend candidates if the budget allows.")
        try alice.moveNote(feedback, to: 0)
        at(alice, t + 480)
        try replace(alice, feedback, "requst", with: "request")

        at(bob, t + 360)
        try bob.setNoteTitle(release, "Release 2.4 status (RC slipped to Friday)")
        try bob.setPriority(hiring, .low)
        at(bob, t + 400)
        try bob.moveNote(feedback, to: 1)
        try bob.deleteNote(decisions)
        at(bob, t + 540)
        try replace(bob, feedback, "confusng", with: "confusing")
        return (alice.save(), bob.save())
    }

    /// `meeting-appended.peernote`: Chen opens the meeting file and saves twice incrementally.
    static func meetingAppended(_ meeting: [UInt8]) throws -> [UInt8] {
        let t = nextDay + 7_200
        let chen = try session(meeting, replica: Replica.chen, author: "Chen Wei")
        let actions = try note(chen, titled: "Action items")
        let release = try note(chen, titled: "Release 2.4 status")
        at(chen, t)
        try append(chen, actions, "\n- Chen: book a room for the retro")
        try chen.addTag(actions, "follow-up")
        let first = chen.save(.incremental)
        at(chen, t + 600)
        chen.addNote(title: "Retro ideas", body: "What slowed the 2.4 beta down?\nMore pairing on crash triage.", tags: ["retro"], priority: .low)
        try chen.setPriority(release, .normal)
        let second = chen.save(.incremental)
        guard Array(first.prefix(meeting.count)) == meeting, Array(second.prefix(first.count)) == first,
              try Document.storageReport(second).blockCount == 3 else {
            throw FixtureBuildError("incremental saves did not append two blocks")
        }
        return second
    }

    /// The grocery list: a base made on the laptop, then edited on the laptop and on the phone.
    static func groceryPair() throws -> (laptop: [UInt8], phone: [UInt8]) {
        let t = saturday
        let first = Document(title: "Groceries", author: "Sam", id: try uuid(groceryID), replica: Replica.groceryBase, time: date(t))
        at(first, t + 60)
        first.addNote(title: "Weekly shop", body: "- milk\n- eggs\n- bread\n- apples\n- coffee", tags: ["weekly"])
        first.addNote(title: "Pharmacy", body: "- sunscreen\n- plasters", tags: ["errands"])
        first.addNote(title: "Hardware store", body: "- AA batteries\n- light bulbs (E27)", tags: ["errands", "maybe"])
        first.addNote(title: "Party", body: "- candles\n- balloons\n- juice", tags: ["party"], priority: .high)
        let base = first.save()

        let laptop = try session(base, replica: Replica.groceryLaptop, author: "Sam")
        let weekly = try note(laptop, titled: "Weekly shop")
        let pharmacy = try note(laptop, titled: "Pharmacy")
        at(laptop, t + 3_600)
        laptop.addNote(title: "Farmers market", body: "- strawberries\n- goat cheese", tags: ["saturday"])
        try laptop.insertText(weekly, at: 2, "oat ")
        at(laptop, t + 3_660)
        try laptop.deleteNote(try note(laptop, titled: "Hardware store"))
        try laptop.addTag(weekly, "urgent")

        let phone = try session(base, replica: Replica.groceryPhone, author: "Jo")
        at(phone, t + 4_000)
        phone.addNote(title: "Bakery", body: "- sourdough\n- croissants", tags: ["saturday"])
        try replace(phone, weekly, "- eggs\n", with: "- eggs (a dozen)\n")
        at(phone, t + 4_060)
        try replace(phone, weekly, "- bread\n", with: "")
        try append(phone, weekly, "\n- bananas")
        at(phone, t + 4_120)
        try phone.removeTag(pharmacy, "errands")
        try phone.addTag(pharmacy, "today")
        try phone.setPriority(pharmacy, .high)
        return (laptop.save(), phone.save())
    }

    /// Two independent notebooks with the same title.
    static func unrelatedPair() throws -> (a: [UInt8], b: [UInt8]) {
        let t = meetingDay + 3 * 86_400
        let a = Document(title: "Notes", author: "Alice Martin", id: try uuid(unrelatedAID), replica: Replica.unrelatedA, time: date(t))
        at(a, t + 60)
        a.addNote(title: "Reading list", body: "- The Mythical Man-Month\n- Designing Data-Intensive Applications", tags: ["books"])
        let b = Document(title: "Notes", author: "Bob Okafor", id: try uuid(unrelatedBID), replica: Replica.unrelatedB, time: date(t))
        at(b, t + 120)
        b.addNote(title: "Recipes", body: "Shakshuka: eggs, tomatoes, peppers, cumin.", tags: ["cooking"])
        return (a.save(), b.save())
    }

    /// `Document(title: "Hi")`, saved: the man page's walk-through.
    static func hi() throws -> [UInt8] {
        Document(title: "Hi", id: try uuid(hiID), replica: Replica.hi, time: date(meetingDay)).save()
    }

    // MARK: Damaged documents

    /// A block envelope around `payload`: `55799(0x706E6F74([version, payload, crc]))`. The
    /// version defaults to the one writers give a base block with a state section (2; the
    /// damaged files are `meeting.peernote`'s block, damaged).
    static func envelope(version: UInt64 = 2, payload: [UInt8], crc: UInt32? = nil) -> [UInt8] {
        var e = CBOREncoder()
        e.tag(Format.selfDescribeTag)
        e.tag(Format.blockTag)
        e.arrayHeader(3)
        e.unsigned(version)
        e.bytes(payload)
        e.unsigned(UInt64(crc ?? CRC32.checksum(payload)))
        return e.bytes
    }

    /// The only block of a compact file, decoded (unverified) so it can be altered and re-encoded.
    static func singleBlock(_ file: [UInt8]) throws -> (raw: RawBlock, block: WireBlock) {
        let raws = try BlockCodec.decode(file)
        guard raws.count == 1 else { throw FixtureBuildError("expected one block, found \(raws.count)") }
        let block = try WireCodec.decodePayload(raws[0], fileSize: file.count)
        // Re-encoding must reproduce the file exactly, or the damage would not be the only difference.
        guard envelope(version: raws[0].version, payload: WireCodec.encodePayload(block)) == file, BlockCodec.encode(payload: raws[0].payload, version: raws[0].version) == file else {
            throw FixtureBuildError("re-encoding the block does not reproduce the file")
        }
        return (raws[0], block)
    }

    /// The damaged set, made from `meeting.peernote`.
    static func damaged(_ meeting: [UInt8]) throws -> [String: [UInt8]] {
        let (raw, block) = try singleBlock(meeting)
        let payload = raw.payload
        var out: [String: [UInt8]] = [:]

        out["damaged/truncated.peernote"] = Array(meeting.prefix(meeting.count / 2))

        var flipped = meeting
        flipped[raw.payloadOffset + payload.count / 2] ^= 0x10
        out["damaged/bit-flipped.peernote"] = flipped

        var magic = meeting
        magic[0] = UInt8(ascii: "P")
        magic[1] = UInt8(ascii: "K")
        out["damaged/wrong-magic.peernote"] = magic

        out["damaged/bad-checksum.peernote"] = envelope(payload: payload, crc: 0xDEAD_BEEF)

        // The payload's byte string head (`59 hi lo` for this size) becomes an 8-byte length of 2^60.
        let headOffset = Format.magic.count + 2
        guard meeting[headOffset] == 0x59, raw.payloadOffset == headOffset + 3 else {
            throw FixtureBuildError("unexpected payload head \(meeting[headOffset])")
        }
        out["damaged/huge-length.peernote"] = Array(meeting[..<headOffset]) + [0x5B, 0x10, 0, 0, 0, 0, 0, 0, 0] + Array(meeting[raw.payloadOffset...])

        var deep = block
        deep.unknownFields = [[0x18, 99] + [UInt8](repeating: 0x81, count: 10_000) + [0x00]]
        out["damaged/deep-nesting.peernote"] = envelope(payload: WireCodec.encodePayload(deep))

        // A new author "Chlo?" goes at the end of the string table; its "?" becomes 0xE9 (Latin-1 "é").
        var latin = block
        latin.changes[latin.changes.count - 1].author = latin.intern("Chlo?")
        var latinPayload = WireCodec.encodePayload(latin)
        let map = try CBORDecoder.decodeItem(latinPayload)
        guard let strings = map.mapValue(forKey: BlockKey.strings.rawValue)?.array, let last = strings.last,
              last.textValue == "Chlo?", latinPayload[last.end - 1] == UInt8(ascii: "?") else {
            throw FixtureBuildError("string table not as expected")
        }
        latinPayload[last.end - 1] = 0xE9
        out["damaged/invalid-utf8.peernote"] = envelope(payload: latinPayload)

        var missing = block
        missing.changes[missing.changes.count - 1].depStart = missing.depRows.count
        missing.changes[missing.changes.count - 1].depCount = 1
        missing.depRows.append(-3)
        out["damaged/missing-dependency.peernote"] = envelope(payload: WireCodec.encodePayload(missing))

        var unknown = block
        guard let k = unknown.ops.lastIndex(where: { if case .setNoteTitle = $0.body { true } else { false } }),
              case .setNoteTitle(let n, let title, let preds) = unknown.ops[k].body else {
            throw FixtureBuildError("no setNoteTitle op")
        }
        unknown.ops[k].body = .setNoteTitle(note: LocalID(agent: n.agent, counter: 9_999), title, preds: preds)
        out["damaged/unknown-note.peernote"] = envelope(payload: WireCodec.encodePayload(unknown))

        out["damaged/not-cbor.peernote"] = Array("Weekly product sync\n\n- Agenda\n- Release 2.4 status\n- Hiring\n".utf8)
        out["damaged/empty.peernote"] = []
        out["damaged/newer-version.peernote"] = envelope(version: FormatInfo.version + 1, payload: payload)
        return out
    }

    // MARK: Everything

    /// Every file of `Fixtures/`, by path relative to it.
    static func all() throws -> [String: [UInt8]] {
        var files: [String: [UInt8]] = [:]
        let meeting = try meeting()
        files["meeting.peernote"] = meeting
        // The same document in format version 3, which readers read and writers do not write yet.
        files["meeting-v3.peernote"] = try Document.load(meeting).save(.compact, writeStructures: true)
        files["meeting-appended.peernote"] = try meetingAppended(meeting)
        let pair = try meetingPair(meeting)
        files["meeting-alice.peernote"] = pair.alice
        files["meeting-bob.peernote"] = pair.bob
        let grocery = try groceryPair()
        files["grocery-laptop.peernote"] = grocery.laptop
        files["grocery-phone.peernote"] = grocery.phone
        let unrelated = try unrelatedPair()
        files["unrelated-a.peernote"] = unrelated.a
        files["unrelated-b.peernote"] = unrelated.b
        files["hi.peernote"] = try hi()
        for (path, bytes) in try damaged(meeting) { files[path] = bytes }
        files["README.md"] = Array(FixtureCatalog.readme().utf8)
        return files
    }
}

/// Writes `Fixtures/` when `PEERNOTE_WRITE_FIXTURES=1` (`make fixtures`); otherwise checks
/// that the committed files are byte-identical to what the code generates now.
@Suite("FixtureGeneration")
struct FixtureGeneration {
    @Test("Fixtures/ matches what the project's code generates (PEERNOTE_WRITE_FIXTURES=1 rewrites it)")
    func fixturesAreUpToDate() throws {
        let files = try FixtureFactory.all()
        let catalogued = Set(FixtureCatalog.valid.map(\.file) + FixtureCatalog.damaged.map(\.file) + ["README.md"])
        #expect(Set(files.keys) == catalogued, "every generated file is in the catalog and vice versa")
        let dir = FixtureCatalog.directory
        if ProcessInfo.processInfo.environment["PEERNOTE_WRITE_FIXTURES"] == "1" {
            try FileManager.default.createDirectory(at: dir.appendingPathComponent("damaged"), withIntermediateDirectories: true)
            for (path, bytes) in files.sorted(by: { $0.key < $1.key }) {
                try FileStore.writeAtomically(bytes, to: dir.appendingPathComponent(path).path)
            }
            print("wrote \(files.count) files to \(dir.path)")
            return
        }
        for (path, bytes) in files.sorted(by: { $0.key < $1.key }) {
            let committed = try #require(try? FixtureCatalog.bytes(path), "Fixtures/\(path) is missing: run `make fixtures`")
            let same = committed == bytes
            let firstDifference = (0 ..< min(committed.count, bytes.count)).first { committed[$0] != bytes[$0] } ?? min(committed.count, bytes.count)
            #expect(same, """
                Fixtures/\(path) differs from what the code generates now (\(committed.count) vs \(bytes.count) bytes, \
                first difference at byte \(firstDifference)). If the format changed on purpose, run `make fixtures` and \
                commit; compressed columns also depend on the libdeflate version.
                """)
        }
    }

    @Test("Generation is deterministic: building twice gives identical bytes")
    func deterministic() throws {
        #expect(try FixtureFactory.all() == FixtureFactory.all())
    }
}
