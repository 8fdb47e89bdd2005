import Foundation
import Testing
@testable import PeerNote

/// `WireChanges`, a block's changes stored run-length, against plain arrays of `WireChange`.
@Suite("Wire changes")
struct WireChangesTests {
    /// A random block of mostly continuing changes, broken every way the run rule knows (another
    /// replica, a seq jump, a dependency further back or two of them, a new time, author or
    /// message, extra fields), and the same changes as a plain array with their positions.
    static func randomBlock(seed: UInt64, count: Int) -> (WireBlock, [WireChange]) {
        var rng = SeededRandom(state: seed)
        var block = WireBlock()
        block.replicas = [ReplicaID(high: 1, low: 1), ReplicaID(high: 2, low: 2), ReplicaID(high: 3, low: 3)]
        block.documentID = UUID()
        block.genesis = ChangeID(replica: block.replicas[0], seq: 1)
        var plain: [WireChange] = []
        var replica = 0, seq: UInt32 = 1, time: Int64 = 100, author = "a", message = ""
        var depRows: [Int] = [], extraBytes: [UInt8] = []
        for row in 0 ..< count {
            var deps = row == 0 ? [] : [row - 1]
            var extra: [UInt8] = []
            switch Int.random(in: 0 ..< 40, using: &rng) {
            case 0: replica = (replica + 1) % 3
            case 1: seq += 5
            case 2 where row > 2: deps = [row - 2]
            case 3 where row > 2: deps = [row - 1, row - 3]
            case 4: time += 1
            case 5: author = author == "a" ? "b" : "a"
            case 6: message = message.isEmpty ? "m" : ""
            case 7: extra = [0xA1, 0x01, UInt8(row % 256)]
            case 8 where row > 0: deps = []
            default: break
            }
            let length = Int.random(in: 0 ..< 5, using: &rng) == 0 ? Int.random(in: 2 ... 6, using: &rng) : 1
            block.appendChange(replica: replica, seq: seq, length: length, deps: deps, time: time, author: author, message: message, extra: extra)
            block.ops.append(Op(lv: plain.reduce(0) { $0 + $1.length }, length: length,
                                body: .deleteText(note: LocalID(agent: 0, counter: 0), target: LocalID(agent: 0, counter: 0), reversed: false)))
            plain.append(WireChange(replica: replica, seq: seq, length: length, time: time, depStart: depRows.count, depCount: deps.count,
                                    author: block.changes[row].author, message: block.changes[row].message,
                                    extraStart: extraBytes.count, extraCount: extra.count))
            depRows += deps
            extraBytes += extra
            seq += 1
        }
        return (block, plain)
    }

    /// Whether `c` continues `p` (row `row - 1`) by the run rule, computed from the plain array.
    static func continues(_ c: WireChange, _ p: WireChange, row: Int, _ depRows: [Int32]) -> Bool {
        c.replica == p.replica && c.seq == p.seq + 1 && c.depCount == 1 && Int(depRows[c.depStart]) == row - 1
            && c.time == p.time && c.author == p.author && c.message == p.message && c.extraCount == 0
    }

    @Test("Changes built one by one, and read back from a file a column at a time, are the plain array, cut into runs by the rule",
          arguments: [1, 2, 3, 4, 5, 6] as [UInt64])
    func readBack(seed: UInt64) throws {
        let (block, plain) = Self.randomBlock(seed: seed, count: 3_000)
        let decoded = try StateSectionTests.onlyBlock(StateSectionTests.file(block)).block
        for list in [block.changes, decoded.changes] {
            #expect(Array(list) == plain)
            #expect(list.runCount < plain.count / 3)
            for i in 1 ..< plain.count {
                #expect(list.continuesPrevious(i) == Self.continues(plain[i], plain[i - 1], row: i, block.depRows), "row \(i)")
            }
        }
        #expect(decoded.depRows == block.depRows)
        #expect(decoded.extraBytes == block.extraBytes)
        #expect(decoded.changes == block.changes)
    }

    @Test("A decoded block's changes encode a run at a time to the columns they were read from, and so does one cut into single changes",
          arguments: [11, 12, 13] as [UInt64])
    func encodeDecodedRuns(seed: UInt64) throws {
        let (block, plain) = Self.randomBlock(seed: seed, count: 3_000)
        let payload = WireCodec.encodePayload(block)
        let decoded = try StateSectionTests.onlyBlock(StateSectionTests.file(block)).block
        #expect(decoded.changes.runCount < plain.count / 3, "the decoded block has runs to take")
        #expect(WireCodec.encodePayload(decoded) == payload)
        // Every change made a run of its own (as a hand edit does): encoded a change at a time.
        var single = decoded
        for i in plain.indices { single.changes[i] = single.changes[i] }
        #expect(single.changes.runCount == plain.count)
        #expect(WireCodec.encodePayload(single) == payload)
    }

    @Test("continuingStretch takes the continuing changes that fit the room, as a change-by-change walk does",
          arguments: [7, 8] as [UInt64])
    func continuingStretch(seed: UInt64) throws {
        let (block, plain) = Self.randomBlock(seed: seed, count: 2_000)
        var rng = SeededRandom(state: seed)
        let decoded = try StateSectionTests.onlyBlock(StateSectionTests.file(block)).block
        for list in [block.changes, decoded.changes] {
            for i in 0 ..< plain.count {
                let room = Int.random(in: 0 ..< 40, using: &rng)
                var j = i, units = 0
                while j > 0 && j < plain.count && Self.continues(plain[j], plain[j - 1], row: j, block.depRows) && units + plain[j].length <= room {
                    units += plain[j].length
                    j += 1
                }
                let got = list.continuingStretch(from: i, room: room)
                #expect(got.end == j && got.units == units, "from \(i), room \(room)")
            }
        }
    }

    @Test("Editing a change in the middle of a run changes it alone")
    func editInsideRun() throws {
        let (block, plain) = Self.randomBlock(seed: 9, count: 400)
        var list = block.changes
        var expected = plain
        // A member of a run, the first change of a run, and the last change.
        let member = try #require((1 ..< plain.count - 1).first { list.continuesPrevious($0) && list.continuesPrevious($0 + 1) })
        let first = try #require((1 ..< plain.count).first { !list.continuesPrevious($0) })
        for i in [member, first, plain.count - 1] {
            var c = list[i]
            c.seq += 1_000
            c.time = -7
            c.length = 9
            list[i] = c
            expected[i] = c
            #expect(Array(list) == expected)
        }
        #expect(!list.continuesPrevious(member) && !list.continuesPrevious(member + 1))
        // The storage report's stripped copy: every author and message, in every run.
        list.setAuthorsAndMessages(to: 0)
        #expect(list.allSatisfy { $0.author == 0 && $0.message == 0 })
        #expect(zip(list, expected).allSatisfy { a, b in a.seq == b.seq && a.depStart == b.depStart && a.length == b.length })
    }
}
