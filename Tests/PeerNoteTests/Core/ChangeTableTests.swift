import Foundation
import Testing
@testable import PeerNote

@Suite("Change table")
struct ChangeTableTests {
    /// Changes read back from the run-length table are the records appended, with their
    /// dependencies, whatever their agents, authors, messages, extras, times and lengths
    /// (empty changes included), including after the last one grows; and they are found again
    /// by (agent, seq) and by (agent, op counter).
    @Test("Appended change records read back unchanged, and are found by seq and counter")
    func roundTrip() {
        var rng = SeededRandom(state: 7)
        var table = ChangeTable()
        var expected: [ChangeRecord] = []
        var expectedDeps: [[Int]] = []
        var lv = 0
        var seqs = [UInt32](repeating: 0, count: 3), counters = [UInt32](repeating: 0, count: 3)
        var lastOf = [Int](repeating: -1, count: 3)
        var lamportEnd: [UInt64] = []
        for i in 0 ..< 2000 {
            // Mostly one agent typing on (so that runs form), sometimes another agent, a merge,
            // a new author, a message, extra fields or a new second.
            let agent: UInt32 = Int.random(in: 0 ..< 10, using: &rng) == 0 ? UInt32.random(in: 0 ... 2, using: &rng) : 0
            var deps: [Int] = []
            if i > 0 {
                if Int.random(in: 0 ..< 8, using: &rng) == 0 {
                    deps = Array(Set((0 ..< Int.random(in: 1 ... 3, using: &rng)).map { _ in Int.random(in: 0 ..< i, using: &rng) })).sorted()
                } else {
                    deps = [i - 1]
                }
                if lastOf[Int(agent)] >= 0 && !deps.contains(where: { $0 >= lastOf[Int(agent)] }) { deps = (deps + [lastOf[Int(agent)]]).sorted() }
            }
            let length = Int.random(in: 0 ..< 10, using: &rng) == 0 ? 0 : Int.random(in: 1 ... 3, using: &rng)
            let lamport = (deps.map { lamportEnd[$0] }.max() ?? 0) + 1
            seqs[Int(agent)] += 1
            let c = ChangeRecord(agent: agent, seq: seqs[Int(agent)], counterStart: counters[Int(agent)],
                                 author: Int.random(in: 0 ..< 20, using: &rng) == 0 ? 1 : 0, message: i % 50 == 0 ? UInt32(i) : 0,
                                 extra: i % 97 == 0 ? UInt32(i) : 0, depCount: UInt32(deps.count), length: length,
                                 lvStart: lv, lamport: lamport, time: Int64(i / 40) - 10)
            table.append(c, deps: deps)
            expected.append(c)
            expectedDeps.append(deps)
            lastOf[Int(agent)] = i
            lv += length
            if i % 10 == 0 {
                table.extendLast(by: 4)
                expected[i].length += 4
                lv += 4
            }
            counters[Int(agent)] += UInt32(expected[i].length)
            lamportEnd.append(lamport + UInt64(expected[i].length) - 1)
        }
        #expect(table.count == expected.count)
        #expect(Array(table) == expected)
        #expect(table.indices.map { Array(table.deps(of: $0)) } == expectedDeps)
        #expect(table.lvEnd == lv)
        // Runs did form (else this test checks nothing about them), and not everything is one run.
        #expect(table.runCount > 50 && table.runCount < expected.count / 2)
        for (i, c) in expected.enumerated() {
            #expect(table.index(agent: c.agent, seq: c.seq) == i)
            if c.length > 0 {
                #expect(table.index(agent: c.agent, counter: c.counterStart) == i)
                #expect(table.index(agent: c.agent, counter: c.counterStart + UInt32(c.length) - 1) == i)
            }
            #expect(table.lamportEnd(i) == lamportEnd[i])
        }
        for a in 0 ..< 3 {
            #expect(table.changeCount(agent: UInt32(a)) == Int(seqs[a]))
            #expect(table.lastIndex(agent: UInt32(a)) == (lastOf[a] >= 0 ? lastOf[a] : nil))
            #expect(table.index(agent: UInt32(a), seq: seqs[a] + 1) == nil)
            #expect(table.index(agent: UInt32(a), counter: counters[a]) == nil)
            // An agent's changes past a seq, a run at a time, are those found seq by seq.
            for after in [0, 1, Int(seqs[a]) / 3, Int(seqs[a]) - 1, Int(seqs[a]), Int(seqs[a]) + 5] {
                var found: [Int] = []
                table.appendIndices(agent: UInt32(a), after: after, to: &found)
                let expected = after >= Int(seqs[a]) ? [] : (after + 1 ... Int(seqs[a])).compactMap { table.index(agent: UInt32(a), seq: UInt32($0)) }
                #expect(found == expected, "agent \(a), after seq \(after)")
            }
        }
        // A lookup given a hint (right, next, stale, out of range) finds what one without finds.
        var hints = [Int](repeating: 0, count: 3)
        for _ in 0 ..< 3000 {
            let a = UInt32.random(in: 0 ... 2, using: &rng)
            let counter = UInt32.random(in: 0 ... counters[Int(a)] + 2, using: &rng)
            if Int.random(in: 0 ..< 4, using: &rng) == 0 { hints[Int(a)] = Int.random(in: -1 ... 5_000, using: &rng) }
            let plain = table.lvSpan(agent: a, counter: counter)
            let hinted = table.lvSpan(agent: a, counter: counter, hint: &hints[Int(a)])
            #expect(plain?.lv == hinted?.lv && plain?.count == hinted?.count, "agent \(a), counter \(counter)")
            // Consecutive lookups on: the hint now points at the run found.
            if let plain, plain.count > 1 {
                var again = hints[Int(a)]
                #expect(table.lvSpan(agent: a, counter: counter + 1, hint: &again)?.lv == plain.lv + 1 && again == hints[Int(a)])
            }
        }
        var none: [Int] = []
        table.appendIndices(agent: 7, after: 0, to: &none)
        #expect(none.isEmpty)
        #expect(table.index(agent: 0, seq: 0) == nil && table.index(agent: 7, seq: 1) == nil)
    }

    /// The point of the table: one change per keystroke costs a few bytes, not a whole record.
    @Test("A typing session is one run")
    func typingIsOneRun() throws {
        let d = Document(title: "t", author: "a")
        d.clock = { Date(timeIntervalSince1970: 1_000) }
        let n = d.addNote(title: "n", body: "hello")
        for k in 0 ..< 500 { try d.insertText(n, at: k, "x") }
        try d.deleteText(n, range: 0 ..< 10)
        #expect(d.log.changes.count >= 502)
        // The genesis change, the note, then the typing and the delete on top.
        #expect(d.log.changes.runCount <= 3)
    }

    /// An op log's changes keep their fields through local edits (one change per keystroke).
    @Test("A document's changes tile its local versions")
    func documentChangesTile() throws {
        let d = Document(title: "t", author: "a")
        let n = d.addNote(title: "n", body: "hello")
        for k in 0 ..< 50 { try d.insertText(n, at: k % 5, "x") }
        try d.deleteText(n, range: 0 ..< 10)
        var lv = 0
        for (i, c) in d.log.changes.enumerated() {
            #expect(c.lvStart == lv)
            #expect(d.log.deps(of: i).count == Int(c.depCount))
            lv = c.lvEnd
        }
        #expect(lv == d.log.lvCount)
        #expect(d.note(n)?.body.unicodeScalars.count == 45)
    }

    /// A block's changes as read from a file are 48 bytes each (a load holds one per change),
    /// and every field keeps its largest 32-bit value; `fits` tells the reader what does not fit.
    @Test("A wire change keeps 32-bit fields in 48 bytes")
    func wireChangeFields() {
        let m = Int(UInt32.max)
        let c = WireChange(replica: m, seq: .max, length: m, time: .min, depStart: m, depCount: m, author: m, message: m, extraStart: m, extraCount: m)
        #expect([c.replica, c.length, c.depStart, c.depCount, c.author, c.message, c.extraStart, c.extraCount] == Array(repeating: m, count: 8))
        #expect(c.seq == .max && c.time == .min)
        #expect(MemoryLayout<WireChange>.stride == 48)
        #expect(WireChange.fits(0) && WireChange.fits(m) && !WireChange.fits(m + 1) && !WireChange.fits(-1))
    }

    /// Loading appends a stretch of typing changes at once when each continues the one before
    /// (same replica, author, message and time, inserting on). Stretches broken every way
    /// (a new second, another author, a message, a concurrent copy's changes merged in, a delete,
    /// typing elsewhere) load back change by change: the same history, notebook and runs.
    @Test("Typing stretches broken every way load back change by change")
    func typingStretchesLoadBack() throws {
        var rng = SeededRandom(state: 11)
        let d = Document(title: "t", author: "a")
        let clock = TestClock(1_000)
        d.clock = { clock.now }
        let n = d.addNote(title: "n", body: "")
        var other = d.fork(author: "b")
        var end = 0
        for k in 0 ..< 1_500 {
            switch Int.random(in: 0 ..< 60, using: &rng) {
            case 0: clock.advance()
            case 1: d.author = d.author == "a" ? "c" : "a"
            case 2: try d.transaction(message: "m\(k)") { try d.insertText(n, at: end, "xy") }; end += 2; continue
            case 3:
                try other.insertText(n, at: 0, "B")
                try d.merge(other)
                end += 1
                other = d.fork(author: "b")
            case 4 where end > 3: try d.deleteText(n, range: end - 2 ..< end); end -= 2
            case 5: try d.insertText(n, at: end / 2, "q"); end += 1
            default: break
            }
            try d.insertText(n, at: end, String(Unicode.Scalar(UInt8(97 + k % 26))))
            end += 1
        }
        let bytes = d.save()
        let loaded = try Document.load(bytes)
        // The file lists changes in canonical (Lamport, replica) order, which is not the order
        // `d` received them in once merges happened: compare them by id.
        let byID: (HistoryEntry, HistoryEntry) -> Bool = { $0.id.replica != $1.id.replica ? $0.id.replica < $1.id.replica : $0.id.seq < $1.id.seq }
        let sameHistory = loaded.history.sorted(by: byID) == d.history.sorted(by: byID)
        #expect(sameHistory)
        #expect(loaded.notebook == d.notebook)
        #expect(loaded.save() == bytes)
        #expect(loaded.log.changes.runCount > 20 && loaded.log.changes.runCount < loaded.log.changes.count / 5)
        #expect(Set(loaded.log.heads.map(loaded.log.changeID)) == Set(d.log.heads.map(d.log.changeID)))
    }
}

extension ChangeTableTests {
    /// Appending a stretch of changes to the last run: refused, changing nothing, unless the
    /// last change is the same agent's with the same meta and time; accepted stretches may hold
    /// empty changes, and read back as if appended one by one.
    @Test("appendContinuing(lengths:) joins only the last run's agent, meta and time, or changes nothing")
    func appendContinuingStretch() {
        var table = ChangeTable()
        let meta = ChangeTable.Meta(author: 1, message: 0, extra: 0)
        table.append(ChangeRecord(agent: 0, seq: 1, counterStart: 0, author: 1, message: 0, extra: 0, depCount: 0, length: 2,
                                  lvStart: 0, lamport: 1, time: 7), deps: [Int]())
        let before = Array(table)
        let otherAgent = table.appendContinuing(agent: 1, meta: meta, time: 7, lengths: [1])
        let otherTime = table.appendContinuing(agent: 0, meta: meta, time: 8, lengths: [1])
        let otherMeta = table.appendContinuing(agent: 0, meta: ChangeTable.Meta(author: 2, message: 0, extra: 0), time: 7, lengths: [1])
        #expect(!otherAgent && !otherTime && !otherMeta)
        #expect(Array(table) == before && table.lvEnd == 2)
        let joined = table.appendContinuing(agent: 0, meta: meta, time: 7, lengths: [2, 0, 3])
        #expect(joined)
        #expect(table.count == 4 && table.runCount == 1 && table.lvEnd == 7)
        #expect(table.indices.map(table.length) == [2, 2, 0, 3])
        #expect(table.indices.map(table.lvStart) == [0, 2, 4, 4])
        #expect(table.indices.map(table.seq) == [1, 2, 3, 4])
        #expect(table.indices.map { Array(table.deps(of: $0)) } == [[], [0], [1], [2]])
        #expect(table.index(agent: 0, counter: 4) == 3 && table.index(agent: 0, counter: 3) == 1)
    }

    /// A typing stretch in a file that is broken in the middle (a sequence number skipped, or a
    /// dependency two rows back) is refused with the message the change-by-change path gives,
    /// not taken into the run.
    @Test("A broken change inside a typing stretch is refused, not appended with the stretch")
    func brokenTypingStretchRefused() throws {
        let d = Document(title: "t", author: "a")
        d.clock = { Date(timeIntervalSince1970: 2_000) }
        let n = d.addNote(title: "n", body: "")
        for k in 0 ..< 50 { try d.insertText(n, at: k, "x") }
        let (_, block) = try StateSectionTests.onlyBlock(d.save())
        let k = 30
        try #require(block.changes.count > k + 5 && block.changes[k].depCount == 1)
        func refused(_ b: WireBlock, _ fragment: String) {
            #expect {
                _ = try Document.load(StateSectionTests.file(b))
            } throws: { error in
                guard let e = error as? PeerNoteError, case .invalidDocument(_, let m) = e else { return false }
                return m.contains("change at row \(k)") && m.contains(fragment)
            }
        }
        var skipped = block
        skipped.changes[k].seq += 1
        refused(skipped, "sequence number \(block.changes[k].seq + 1), expected \(block.changes[k].seq)")
        var twoBack = block
        twoBack.depRows[twoBack.changes[k].depStart] = Int32(k - 2)
        refused(twoBack, "does not follow its replica's previous change")
        // The block as saved loads (so the two above fail for their one change).
        #expect(try Document.load(StateSectionTests.file(block)).notebook == d.notebook)
    }
}

extension ChangeTableTests {
    /// Inside a run the shared-history check compares only lengths and ops (the rest follows
    /// from the run), so a change with extra fields must not join a run: two logs that differ
    /// only in the last change's extra fields must disagree, and two equal logs agree.
    @Test("The shared-history check tells apart a last change that differs only in its extra fields")
    func sharedHistorySeesExtraFields() {
        let replica = ReplicaID(high: 3, low: 4)
        func log(lastExtra: [UInt8]) -> (OpLog, Int) {
            var l = OpLog()
            let a = l.agent(for: replica)
            var last = l.beginChange(agent: a, time: 5, author: "w", message: "")
            l.append(.setNotebookTitle("t", preds: []), length: 1)
            for k in 0 ..< 10 {
                last = l.beginChange(agent: a, time: 5, author: "w", message: "", extra: k == 9 ? lastExtra : [])
                l.append(.addTag(note: LocalID(agent: a, counter: 0), "x"), length: 1)
            }
            return (l, last)
        }
        let (plain, i) = log(lastExtra: [])
        let (same, _) = log(lastExtra: [])
        let (extra, _) = log(lastExtra: [0xA1, 0x01, 0x02])
        #expect(plain.changes.runCount < plain.changes.count)
        #expect(plain.sharesHistory(with: same))
        #expect(!plain.sharesHistory(with: extra))
        #expect(!extra.sharesHistory(with: plain))
        #expect(!plain.sameChange(i, extra, i, plain.agentMap(from: extra)))
        // Fingerprints hash a change that continues the one before without its head: the same.
        var (p2, s2, e2) = (plain, same, extra)
        let fPlain = p2.fingerprint(ofChange: i), fSame = s2.fingerprint(ofChange: i), fExtra = e2.fingerprint(ofChange: i)
        #expect(fPlain == fSame)
        #expect(fPlain != fExtra)
        let agree = p2.sharesHistoryByFingerprints(with: &s2), disagree = p2.sharesHistoryByFingerprints(with: &e2)
        #expect(agree && !disagree)
    }
}

extension ChangeTableTests {
    @Test("The default clock stamps changes with the system's time; a clock set, then a fork's, is used instead")
    func clocks() throws {
        // Changes read the coarse clock (`Document.systemSeconds`), which may lag `Date()` by a
        // tick: across a second's boundary it can still give the second before.
        let before = Date().timeIntervalSince1970.rounded(.down) - 1
        let doc = Document(title: "T", author: "a")
        let note = doc.addNote(title: "N")
        try doc.insertText(note, at: 0, "x")
        let after = Date().timeIntervalSince1970.rounded(.up)
        let times = doc.history.map(\.time.timeIntervalSince1970)
        #expect(times.count == 3)
        for t in times { #expect(t >= before && t <= after, "\(t) not in \(before) ... \(after)") }
        #expect(doc.notes[0].created.timeIntervalSince1970 >= before)
        #expect(doc.clock().timeIntervalSince1970 >= before, "the getter gives the system clock too")

        doc.clock = { Date(timeIntervalSince1970: 1_000_000) }
        try doc.insertText(note, at: 1, "y")
        let fork = doc.fork(author: "b")
        try fork.insertText(note, at: 2, "z")
        #expect(doc.history.last?.time.timeIntervalSince1970 == 1_000_000)
        #expect(fork.history.last?.time.timeIntervalSince1970 == 1_000_000, "a fork keeps the clock")

        // Made with a fixed time, a document goes back to the system clock after its first change.
        let fixed = Document(title: "F", author: "a", time: Date(timeIntervalSince1970: 2_000_000))
        fixed.addNote(title: "later")
        #expect(fixed.history.map(\.time.timeIntervalSince1970).min() == 2_000_000)
        #expect((fixed.history.last?.time.timeIntervalSince1970 ?? 0) >= before)
    }
}

/// A clock a test moves forward by hand (the document's clock is a `@Sendable` closure).
private final class TestClock: @unchecked Sendable {
    private var seconds: Double
    init(_ seconds: Double) { self.seconds = seconds }
    var now: Date { Date(timeIntervalSince1970: seconds) }
    func advance() { seconds += 1 }
}

extension ChangeTableTests {
    /// Typing's shortcuts in the log (`beginChange` joining the last run of changes, and
    /// `appendTypingInsert` extending the last op) append exactly what the general paths do:
    /// interning, appending a change on explicit dependencies, and `appendOp`. Random
    /// keystrokes, with what breaks a run mixed in: another agent, another author, message or
    /// time, extra fields, a delete, text the ops skip, another note or right origin.
    @Test("Typing's shortcuts in the log append what the general paths append", arguments: [1, 2])
    func typingShortcutsMatchGeneralPaths(seed: UInt64) {
        var rng = SeededRandom(state: seed)
        var fast = OpLog(), general = OpLog()
        let agents = [ReplicaID(high: 1, low: 1), ReplicaID(high: 2, low: 2)].map { r -> UInt32 in
            _ = general.agent(for: r)
            return fast.agent(for: r)
        }
        let notes = [LocalID(agent: 0, counter: 0), LocalID(agent: 1, counter: 0)]
        let rights = [LocalID.none, LocalID(agent: 1, counter: 0), LocalID(agent: 0, counter: 1)]
        var shortcuts = 0
        for step in 0 ..< 3_000 {
            let roll = Int.random(in: 0 ..< 100, using: &rng)
            let agent = roll < 5 ? agents[1] : agents[0]
            let author = roll == 6 ? "other" : "me"
            let message = roll == 7 ? "msg" : ""
            let time: Int64 = roll == 8 ? Int64(step) : 100
            let extra: [UInt8] = roll == 9 ? [0xA0] : []
            let runsBefore = fast.changes.runCount
            let a = fast.beginChange(agent: agent, time: time, author: author, message: message, extra: extra)
            let b = general.beginChange(agent: agent, deps: general.heads, time: time, author: author, message: message, extra: extra)
            #expect(a == b, "step \(step)")
            if fast.changes.runCount == runsBefore { shortcuts += 1 }
            if roll == 10 {
                let d = OpBody.deleteText(note: notes[0], target: LocalID(agent: agents[0], counter: 0), reversed: false)
                fast.appendOp(d, length: 1)
                general.appendOp(d, length: 1)
                continue
            }
            if roll == 11 {
                fast.appendText("~")
                general.appendText("~")
            }
            let note = roll == 12 ? notes[1] : notes[0]
            let right = roll == 13 ? rights[Int.random(in: 0 ..< 3, using: &rng)] : rights[0]
            let start = fast.text.count
            let length = fast.appendText(Int.random(in: 0 ..< 4, using: &rng) == 0 ? "ab" : "c")
            general.appendText(length == 2 ? "ab" : "c")
            // Fingerprints (the shared-history check's) are cached: the shortcut must drop the
            // open change's when its ops grow, as `appendOp` does.
            if roll >= 90 {
                // Often the open change itself, which the insert below then extends.
                let i = Bool.random(using: &rng) ? fast.changes.count - 1 : Int.random(in: 0 ..< fast.changes.count, using: &rng)
                #expect(fast.fingerprint(ofChange: i) == general.fingerprint(ofChange: i), "step \(step)")
            }
            fast.appendTypingInsert(note: note, originRight: right, contentStart: start, length: length)
            general.appendOp(.insertText(note: note, originLeft: general.nextID.advanced(by: -1), originRight: right, contentStart: start), length: length)
        }
        for i in 0 ..< fast.changes.count where i % 7 == 0 || i >= fast.changes.count - 3 {
            #expect(fast.fingerprint(ofChange: i) == general.fingerprint(ofChange: i), "change \(i)")
        }
        #expect(fast.ops == general.ops)
        #expect(fast.heads == general.heads)
        #expect(fast.changes.count == general.changes.count && fast.changes.runCount == general.changes.runCount)
        #expect((0 ..< fast.changes.count).allSatisfy { fast.changes[$0] == general.changes[$0] && Array(fast.deps(of: $0)) == Array(general.deps(of: $0)) })
        #expect(fast.strings == general.strings)
        // Most keystrokes take the shortcut; the op log stays a few long ops.
        #expect(shortcuts > 2_000)
        #expect(fast.ops.count < 1_000)
    }
}
