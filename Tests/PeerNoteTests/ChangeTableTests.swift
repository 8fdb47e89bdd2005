import Testing
@testable import PeerNote

@Suite("Change table")
struct ChangeTableTests {
    /// Changes read back from the compact table are the records appended, whatever their
    /// authors, messages, extras, dependencies and lengths, including after the last one grows.
    @Test("Appended change records read back unchanged")
    func roundTrip() {
        var rng = SeededRandom(state: 7)
        var table = ChangeTable()
        var expected: [ChangeRecord] = []
        var lv = 0, dep = 0
        for i in 0 ..< 500 {
            let depCount = UInt32.random(in: 0 ... 3, using: &rng)
            let length = Int.random(in: 0 ... 5, using: &rng)
            let c = ChangeRecord(agent: UInt32.random(in: 0 ... 2, using: &rng), seq: UInt32(i + 1), counterStart: UInt32(i * 7),
                                 author: UInt32.random(in: 0 ... 1, using: &rng), message: i % 50 == 0 ? UInt32(i) : 0,
                                 extra: i % 97 == 0 ? UInt32(i) : 0, depCount: depCount, depStart: dep, length: length,
                                 lvStart: lv, lamport: UInt64(i * 3), time: Int64(i) - 100)
            table.append(c)
            expected.append(c)
            lv += length
            dep += Int(depCount)
            if i % 10 == 0 {
                table.extendLast(by: 4)
                expected[i].length += 4
                lv += 4
            }
        }
        #expect(table.count == expected.count)
        #expect(Array(table) == expected)
        #expect(table.lvEnd == lv)
    }

    /// The point of the table: a change costs 56 bytes, not a `ChangeRecord`'s 72.
    @Test("A stored change is 56 bytes")
    func rowSize() {
        #expect(MemoryLayout<ChangeTable.Row>.stride == 56)
        #expect(MemoryLayout<ChangeRecord>.stride == 72)
    }

    /// An op log's changes keep their fields through local edits (one change per keystroke).
    @Test("A document's changes tile its local versions and dependencies")
    func documentChangesTile() throws {
        let d = Document(title: "t", author: "a")
        let n = d.addNote(title: "n", body: "hello")
        for k in 0 ..< 50 { try d.insertText(n, at: k % 5, "x") }
        try d.deleteText(n, range: 0 ..< 10)
        var lv = 0, dep = 0
        for c in d.log.changes {
            #expect(c.lvStart == lv && c.depStart == dep)
            lv = c.lvEnd
            dep = c.depStart + Int(c.depCount)
        }
        #expect(lv == d.log.lvCount && dep == d.log.depPool.count)
        #expect(d.note(n)?.body.unicodeScalars.count == 45)
    }
}
