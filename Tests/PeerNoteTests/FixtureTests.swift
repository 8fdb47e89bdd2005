import Foundation
import Testing
@_spi(Diagnostics) @testable import PeerNote

/// The bundled fixtures behave as `Fixtures/README.md` says.
@Suite("Fixtures")
struct FixtureTests {
    static func load(_ file: String) throws -> Document { try Document.load(try FixtureCatalog.bytes(file)) }

    /// A note's id, found by its title (deleted notes included).
    static func id(_ d: Document, _ title: String) throws -> NoteID { try d.findNote(title, includeDeleted: true).id }

    /// Merges `b` into a copy of `a` loaded from its bytes.
    static func merged(_ a: String, _ b: String) throws -> Document {
        let x = try load(a)
        try x.merge(try load(b))
        return x
    }

    @Test("Every valid fixture loads and re-saves compact deterministically", arguments: FixtureCatalog.valid.map(\.file))
    func validFixtureLoads(_ file: String) throws {
        let bytes = try FixtureCatalog.bytes(file)
        let d = try Document.load(bytes)
        let compact = d.save(.compact)
        let again = try Document.load(compact)
        #expect(again.notebook == d.notebook)
        #expect(again.deletedNotes == d.deletedNotes)
        #expect(again.history == d.history)
        #expect(again.save(.compact) == compact)
        #expect(try Document.load(bytes).save(.compact) == compact)
        if file == "meeting-v3.peernote" {
            #expect(compact == (try FixtureCatalog.bytes("meeting.peernote")), "a compact save writes it as version 2")
            #expect(d.save(.compact, writeStructures: true) == bytes, "and as version 3 when asked")
        } else if file != "meeting-appended.peernote" {
            #expect(compact == bytes, "\(file) is stored in compact form")
        }
        // Nothing new: an incremental save gives back the file as it is.
        #expect(try Document.load(bytes).save(.incremental) == bytes)
    }

    @Test("meeting.peernote holds the meeting as described")
    func meeting() throws {
        let d = try Self.load("meeting.peernote")
        #expect(d.title == "Weekly product sync")
        #expect(d.notes.map(\.title) == ["Agenda (14 March)", "Action items", "Release 2.4 status", "Hiring", "Customer feedback", "Decisions"])
        #expect(d.deletedNotes.map(\.title) == ["Parking lot"])
        #expect(d.conflicts.isEmpty)
        let hiring = try d.findNote("Hiring")
        #expect(hiring.body == "Two backend candidates in the final round.\nOffer to Sam expected by Friday.")
        #expect(hiring.tags == ["hiring"])
        #expect(try d.findNote("Customer feedback").tags == ["customers", "mobile"])
        #expect(try d.findNote("Release 2.4 status").priority == .high)
        #expect(try d.findNote("Release 2.4 status").body.hasSuffix("Thursday.\nDocs freeze on Wednesday."))
        #expect(Set(d.history.map(\.author)) == ["Alice Martin", "Bob Okafor"])
        #expect(try Document.storageReport(try FixtureCatalog.bytes("meeting.peernote")).blockCount == 1)
    }

    @Test("A change named by a replica prefix two replicas share is ambiguous, and the message lists both")
    func ambiguousChangePrefix() throws {
        let d = try Self.load("meeting-bob.peernote")
        let bobs = d.replicas.map(\.replica).filter { $0.description.hasPrefix("b0b0") }
        try #require(bobs.count == 2)
        let both = bobs.map { ChangeID(replica: $0, seq: 1).fullDescription }.sorted()
        #expect(throws: PeerNoteError.ambiguousChange("1@b0b0", candidates: both)) { try d.findChange("1@b0b0") }
        #expect(try d.findChange("1@\(bobs[1].short)") == ChangeID(replica: bobs[1], seq: 1))
        #expect(throws: PeerNoteError.noSuchChange("999@b0b0")) { try d.findChange("999@b0b0") }
        #expect("\(PeerNoteError.ambiguousChange("1@b0b0", candidates: both))".hasPrefix("\"1@b0b0\" matches several changes: 1@b0b0"))
    }

    @Test("The storage report of a loaded document's own bytes is the report of those bytes; the block count reads envelopes only")
    func savedStorageReport() throws {
        for name in ["meeting.peernote", "meeting-appended.peernote", "grocery-laptop.peernote", "hi.peernote"] {
            let bytes = try FixtureCatalog.bytes(name)
            let d = try Document.load(bytes)
            let report = try Document.storageReport(bytes)
            #expect(d.savedStorageReport == report, "\(name)")
            // Measured from the bytes alone, once the document that verified them is gone.
            #expect(Document.storageReport(verified: bytes) == report, "\(name)")
            #expect(try Document.blockCount(bytes) == report.blockCount, "\(name)")
            #expect(report.historyBytes > 0 && report.metadataBytes > 0, "\(name)")
            // After a save, the report is the saved bytes'.
            d.setTitle("Renamed")
            let saved = d.save(.incremental)
            #expect(d.savedStorageReport == (try Document.storageReport(saved)), "\(name)")
        }
        #expect(Document(title: "new").savedStorageReport == nil)
        // A compact save with a state section (text in the notes, deleted text in the columns), and
        // the same save with a block appended: the report needs no placeholder text to measure them.
        let big = Document(title: "State")
        for i in 0 ..< 300 { big.addNote(title: "N\(i)", body: String(repeating: "body \(i) ", count: 1 + i % 7)) }
        let victim = big.addNote(title: "Gone", body: "deleted text")
        try big.deleteText(victim, range: 0 ..< 8)
        let compact = big.save(.compact)
        let loaded = try Document.load(compact)
        loaded.addNote(title: "Later", body: "appended")
        let appended = loaded.save(.incremental)
        for bytes in [compact, appended] {
            let report = try Document.storageReport(bytes)
            #expect(Document.storageReport(verified: bytes) == report)
            #expect(report.textBytes > 0 && report.historyBytes > 0)
        }
        #expect(try Document.storageReport(appended).blockCount == 2)
        // A flipped bit fails the block's CRC-32, which the block count checks.
        var bytes = try FixtureCatalog.bytes("meeting.peernote")
        bytes[bytes.count - 20] ^= 0x40
        #expect(throws: PeerNoteError.self) { try Document.blockCount(bytes) }
    }

    @Test("meeting-appended.peernote is meeting.peernote plus two appended blocks")
    func appended() throws {
        let base = try FixtureCatalog.bytes("meeting.peernote")
        let bytes = try FixtureCatalog.bytes("meeting-appended.peernote")
        #expect(Array(bytes.prefix(base.count)) == base)
        #expect(try Document.storageReport(bytes).blockCount == 3)
        let d = try Document.load(bytes)
        let original = try Document.load(base)
        #expect(d.changeCount == original.changeCount + 4)
        #expect(try d.findNote("Action items").body.hasSuffix("\n- Chen: book a room for the retro"))
        #expect(try d.findNote("Action items").tags == ["actions", "follow-up"])
        #expect(try d.findNote("Retro ideas").priority == .low)
        #expect(try d.findNote("Release 2.4 status").priority == .normal)
        // It shares history with the original and merging the original in changes nothing.
        #expect(d.relation(to: original) == .shared)
        #expect(try d.merge(original).isUpToDate)
    }

    @Test("Each diverged pair merges in both orders to the same notebook and the same compact bytes; merging again is a no-op",
          arguments: [("meeting-alice.peernote", "meeting-bob.peernote"), ("grocery-laptop.peernote", "grocery-phone.peernote")])
    func mergeBothOrders(_ a: String, _ b: String) throws {
        let ab = try Self.merged(a, b), ba = try Self.merged(b, a)
        #expect(ab.notebook == ba.notebook)
        #expect(ab.deletedNotes == ba.deletedNotes)
        #expect(ab.heads == ba.heads)
        #expect(ab.heads.count == 2)
        let bytes = ab.save(.compact)
        #expect(ba.save(.compact) == bytes)
        // Idempotent: merging either side again changes nothing.
        #expect(try ab.merge(try Self.load(a)).isUpToDate)
        #expect(try ab.merge(try Self.load(b)).isUpToDate)
        #expect(try ab.merge(ba).isUpToDate)
        #expect(ab.save(.compact) == bytes)
        // The merge's own file loads to the same state.
        #expect(try Document.load(bytes).notebook == ab.notebook)
    }

    @Test("Grocery pair: no conflict, and every edit of both devices is there")
    func grocery() throws {
        let d = try Self.merged("grocery-laptop.peernote", "grocery-phone.peernote")
        #expect(d.conflicts.isEmpty)
        #expect(d.title == "Groceries")
        #expect(Set(d.notes.map(\.title)) == ["Weekly shop", "Pharmacy", "Party", "Farmers market", "Bakery"])
        #expect(Array(d.notes.map(\.title).prefix(3)) == ["Weekly shop", "Pharmacy", "Party"])
        #expect(d.deletedNotes.map(\.title) == ["Hardware store"])
        let weekly = try d.findNote("Weekly shop")
        #expect(weekly.body == "- oat milk\n- eggs (a dozen)\n- apples\n- coffee\n- bananas")
        #expect(weekly.tags == ["urgent", "weekly"])
        let pharmacy = try d.findNote("Pharmacy")
        #expect(pharmacy.tags == ["today"])
        #expect(pharmacy.priority == .high)
        #expect(try d.findNote("Farmers market").body == "- strawberries\n- goat cheese")
        #expect(try d.findNote("Bakery").body == "- sourdough\n- croissants")
        #expect(try d.findNote("Party").priority == .high)
        #expect(Set(d.history.map(\.author)) == ["Sam", "Jo"])
        // Each side alone lacks the other's edits.
        let laptop = try Self.load("grocery-laptop.peernote")
        #expect(try laptop.findNote("Weekly shop").body == "- oat milk\n- eggs\n- bread\n- apples\n- coffee")
        #expect(laptop.notes.contains { $0.title == "Bakery" } == false)
    }

    @Test("Meeting pair: every conflict kind is reported, both spelling fixes survive, the moved note is neither lost nor duplicated")
    func meetingConflicts() throws {
        let base = try Self.load("meeting.peernote")
        let release = try Self.id(base, "Release 2.4 status")
        let hiring = try Self.id(base, "Hiring")
        let decisions = try Self.id(base, "Decisions")
        let feedback = try Self.id(base, "Customer feedback")
        let d = try Self.merged("meeting-alice.peernote", "meeting-bob.peernote")

        var titles: Set<String> = [], priorities: Set<String> = [], moves = 0
        var deletedBy: [String] = [], editedBy: [String] = []
        for c in d.conflicts {
            switch c {
            case .noteTitle(let n, let values, _) where n == release: titles = Set(values.map(\.value))
            case .priority(let n, _, let values, _) where n == hiring: priorities = Set(values.map(\.value))
            case .position(let n, _, let m) where n == feedback: moves = m.count
            case .deletedWhileEdited(let n, _, let del, let ed) where n == decisions:
                deletedBy = del.map(\.author); editedBy = ed.map(\.author)
            default: Issue.record("unexpected conflict \(c)")
            }
        }
        #expect(titles == ["Release 2.4: RC status", "Release 2.4 status (RC slipped to Friday)"])
        #expect(priorities == ["high", "low"])
        #expect(moves == 2)
        #expect(deletedBy == ["Bob Okafor"])
        #expect(editedBy == ["Alice Martin"])
        #expect(d.conflicts.count == 4)
        // Rule 2: one deterministic winner is shown, and it is one of the written values.
        #expect(try titles.contains(#require(d.note(release)).title))
        // Rule 4: the note moved by both (and edited by both) shows exactly once.
        #expect(d.notes.filter { $0.id == feedback }.count == 1)
        // Rule 1: both typo fixes in one body survive.
        let body = try #require(d.note(feedback)).body
        #expect(body == "Export to PDF is the top request (14 tickets).\nSync conflicts are confusing users on mobile.")
        // Rule 5: the deleted note stays deleted, Alice's edit is kept and comes back on restore.
        #expect(d.notes.contains { $0.id == decisions } == false)
        let deleted = try #require(d.deletedNotes.first { $0.id == decisions })
        #expect(deleted.body.hasSuffix("\nHire both backend candidates if the budget allows."))
        try d.restoreNote(decisions)
        #expect(d.notes.contains { $0.id == decisions && $0.body.hasSuffix("if the budget allows.") })
    }

    @Test("The unrelated pair is refused, and nothing changes")
    func unrelated() throws {
        let a = try Self.load("unrelated-a.peernote"), b = try Self.load("unrelated-b.peernote")
        #expect(a.title == b.title)
        #expect(a.relation(to: b) == .differentDocuments(a.id, b.id))
        let before = a.save(.compact)
        #expect(throws: PeerNoteError.unrelated(.differentDocuments(a.id, b.id))) { try a.merge(b) }
        #expect(throws: PeerNoteError.unrelated(.differentDocuments(b.id, a.id))) { try b.merge(a) }
        #expect(a.save(.compact) == before)
    }

    @Test("Every damaged fixture is rejected quickly with exactly the documented error", arguments: FixtureCatalog.damaged.map(\.file))
    func damaged(_ file: String) throws {
        let expected = try #require(FixtureCatalog.damaged.first { $0.file == file })
        let bytes = try FixtureCatalog.bytes(file)
        let started = ContinuousClock.now
        var thrown: PeerNoteError?
        do { _ = try Document.load(bytes) } catch { thrown = error }
        let elapsed = ContinuousClock.now - started
        let error = try #require(thrown, "\(file) loaded without error")
        #expect(expected.matches(error), "\(file): got \(error), README documents \(expected.documentedError)")
        #expect(elapsed < HangGuard.duration, "\(file) took \(elapsed) to reject")
    }

    @Test("Fixtures/README.md is the catalog's table")
    func readme() throws {
        let committed = String(decoding: try FixtureCatalog.bytes("README.md"), as: UTF8.self)
        #expect(committed == FixtureCatalog.readme())
        for f in FixtureCatalog.valid.map(\.file) + FixtureCatalog.damaged.map(\.file) {
            #expect(committed.contains("`\(f)`"))
        }
    }

    @Test("The hex dump walk-through in man/peernote.5 is exactly Fixtures/hi.peernote")
    func manPageExample() throws {
        let page = FixtureCatalog.directory.deletingLastPathComponent().appendingPathComponent("man/peernote.5")
        let text = String(decoding: try Data(contentsOf: page), as: UTF8.self)
        var dumped: [UInt8] = []
        for line in text.split(separator: "\n") {
            let chars = Array(line)
            guard chars.count > 10, chars[8] == ":", chars[0 ..< 8].allSatisfy(\.isHexDigit) else { continue }
            #expect(Int(String(chars[0 ..< 8]), radix: 16) == dumped.count, "xxd offsets are consecutive")
            for group in String(chars[10 ..< min(chars.count, 49)]).split(separator: " ") {
                var rest = Substring(group)
                while rest.count >= 2 {
                    dumped.append(try #require(UInt8(rest.prefix(2), radix: 16)))
                    rest = rest.dropFirst(2)
                }
            }
        }
        #expect(dumped == (try FixtureCatalog.bytes("hi.peernote")))
    }
}
