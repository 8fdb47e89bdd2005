import Testing
@testable import PeerNote

@Suite("NoteID: printable ids")
struct NoteIDTests {
    @Test("An id's text form is its SHA-256's first 16 hex digits; its short form the first 8")
    func textForms() {
        // SHA-256 of the 20 bytes 00 00 00 00 00 00 00 01 | 00 00 00 00 00 00 00 02 | 00 00 00 03
        // (replica high, low, counter, big-endian), computed apart from this code.
        // (Python: hashlib.sha256(struct.pack(">QQI", 1, 2, 3)).hexdigest()[:16])
        let id = NoteID(replica: ReplicaID(high: 1, low: 2), counter: 3)
        #expect(id.description == "921b4d5241fa44e5")
        #expect(id.short == "921b4d52")
    }

    @Test("shortForms gives each id's short form in order, on one thread or two", arguments: [0, 1, 2, 1_023, 1_024, 1_025, 3_001])
    func shortForms(count: Int) {
        var rng = SeededRandom(state: UInt64(count) + 11)
        let ids = (0 ..< count).map { _ in
            NoteID(replica: ReplicaID(high: UInt64.random(in: 0 ... .max, using: &rng), low: UInt64.random(in: 0 ... .max, using: &rng)),
                   counter: UInt32.random(in: 0 ... .max, using: &rng))
        }
        #expect(NoteID.shortForms(of: ids) == ids.map(\.short))
    }
}
