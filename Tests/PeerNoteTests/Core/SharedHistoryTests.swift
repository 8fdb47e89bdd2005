import Foundation
import Testing
@testable import PeerNote

/// The shared-history checks (`OpLog.sharesHistory(with:)`, which compares long stretches at a
/// time, and `sharesHistoryByFingerprints`) held to a plain change-by-change comparison written here, on copies that
/// make the same edits under one reused replica id except for one random difference.
@Suite("Shared history")
struct SharedHistoryTests {
    /// One step of a script that both copies play.
    enum Step {
        case type(String, at: Int)           // insert at a position (taken modulo the body's length + 1)
        case backspace(at: Int)
        case deleteRange(at: Int, count: Int)
        case retitle(String)
        case tag(String)
        case tick                            // the clock moves on a second
        case message(String)                 // the next edits are one transaction with this message
        case mergeThird                      // merge the third replica's edits (a change with two dependencies follows)
    }

    static func randomScript(_ rng: inout SeededRandom, length: Int) -> [Step] {
        let chars = ["a", "b", "é", "日", "\n", "xy"]
        var steps: [Step] = []
        var cursor = 0
        for _ in 0 ..< length {
            switch Int.random(in: 0 ..< 20, using: &rng) {
            case 0 ..< 11: steps.append(.type(chars[Int.random(in: 0 ..< 4, using: &rng)], at: cursor)); cursor += 1
            case 11, 12: steps.append(.backspace(at: cursor)); cursor = max(0, cursor - 1)
            case 13: cursor = Int.random(in: 0 ..< 40, using: &rng)   // a cursor jump: a new insert op
            case 14: steps.append(.deleteRange(at: Int.random(in: 0 ..< 40, using: &rng), count: Int.random(in: 1 ... 5, using: &rng)))
            case 15: steps.append(.retitle(chars.randomElement(using: &rng) ?? "t"))
            case 16: steps.append(.tag(["p", "q"].randomElement(using: &rng) ?? "p"))
            case 17: steps.append(.tick)
            case 18: steps.append(.message(["", "fix", "draft"].randomElement(using: &rng) ?? ""))
            default: steps.append(.mergeThird)
            }
        }
        return steps
    }

    /// How the second copy departs from the script at one step. `regroup` types the same
    /// characters into the same number of changes, cut elsewhere (the first copy plays
    /// `regroupOther` at that step): the same op units, different change lengths.
    enum Difference: CaseIterable { case none, character, position, time, author, message, split, deletion, regroup, regroupOther }
    static let randomDifferences: [Difference] = [.none, .character, .position, .time, .author, .message, .split, .deletion, .regroup]

    final class Copy {
        let doc: Document
        let note: NoteID
        var seconds: Double = 5_000
        var message = ""
        init(_ doc: Document, _ note: NoteID) {
            self.doc = doc
            self.note = note
            setClock()
        }
        func setClock() { let s = seconds; doc.clock = { Date(timeIntervalSince1970: s) } }
        var length: Int { doc.note(note)?.body.unicodeScalars.count ?? 0 }

        func play(_ step: Step, third: Document, differing difference: Difference = .none) throws {
            switch step {
            case .type(let s, let at):
                var s = s, at = at % (length + 1)
                if difference == .character { s = s == "z" ? "w" : "z" }
                if difference == .position { at = (at + 1) % (length + 1) }
                if difference == .author { doc.author = "someone else" }
                if difference == .time { doc.clock = { Date(timeIntervalSince1970: 1) } }
                if difference == .regroup || difference == .regroupOther {
                    let (first, second) = difference == .regroup ? (s, "QR") : (s + "Q", "R")
                    try doc.transaction(message: message) { try doc.insertText(note, at: at, first) }
                    try doc.transaction(message: message) { try doc.insertText(note, at: at + first.unicodeScalars.count, second) }
                } else if difference == .deletion && length > 0 {
                    try doc.transaction(message: message) { try doc.deleteText(note, range: 0 ..< 1) }
                } else if difference == .split {
                    for (k, ch) in s.unicodeScalars.enumerated() {
                        try doc.transaction(message: message) { try doc.insertText(note, at: at + k, String(ch)) }
                        try doc.transaction(message: message) { try doc.insertText(note, at: at + k + 1, "+") }
                    }
                } else {
                    try doc.transaction(message: difference == .message ? message + "!" : message) { try doc.insertText(note, at: at, s) }
                }
                doc.author = "w"
                setClock()
            case .backspace(let at):
                let at = at % (length + 1)
                if at > 0 { try doc.transaction(message: message) { try doc.deleteText(note, range: at - 1 ..< at) } }
            case .deleteRange(let at, let count):
                let at = at % (length + 1), end = min(length, at + count)
                if end > at { try doc.transaction(message: message) { try doc.deleteText(note, range: at ..< end) } }
            case .retitle(let t): try doc.transaction(message: message) { try doc.setNoteTitle(note, t) }
            case .tag(let t): try doc.transaction(message: message) { try doc.addTag(note, t) }
            case .tick: seconds += 1; setClock()
            case .message(let m): message = m
            case .mergeThird: try doc.merge(third)
            }
        }
    }

    /// Both copies play the script under one replica id; the second departs from it at step `at`
    /// with `difference`, and the first plays `extra` more steps (so that it holds more changes).
    static func copies(seed: UInt64) throws -> (Document, Document, Difference) {
        var rng = SeededRandom(state: seed)
        let base = Document(title: "T", author: "a", replica: ReplicaID(high: 1, low: 1))
        let note = base.addNote(title: "N", body: "start")
        let third = base.fork(author: "third")
        let reused = ReplicaID(high: 9, low: 9)
        let one = Copy(Document(id: base.id, genesis: base.genesis, log: base.log, state: base.state, replica: reused, author: "w"), note)
        let two = Copy(Document(id: base.id, genesis: base.genesis, log: base.log, state: base.state, replica: reused, author: "w"), note)
        let script = randomScript(&rng, length: Int.random(in: 10 ... 90, using: &rng))
        let difference = randomDifferences.randomElement(using: &rng) ?? .none
        let at = Int.random(in: 0 ..< script.count, using: &rng)
        let extra = Int.random(in: 0 ... 3, using: &rng) == 0 ? Int.random(in: 1 ... 10, using: &rng) : 0
        for (k, step) in script.enumerated() {
            if case .mergeThird = step { try third.insertText(note, at: 0, "3") }
            try one.play(step, third: third, differing: k == at && difference == .regroup ? .regroupOther : .none)
            if k < script.count - extra { try two.play(step, third: third, differing: k == at ? difference : .none) }
        }
        return (one.doc, two.doc, difference)
    }

    /// The reference: the first change (in `b`'s order) that both hold with different content,
    /// compared field by field, ops cut per change with ids as (replica, counter) and text spelled out.
    static func referenceFirstDifference(_ a: OpLog, _ b: OpLog) -> ChangeID? {
        func ops(_ log: OpLog, _ ci: Int) -> [String] {
            log.ops(ofChange: ci).map { op in
                var body = op.body.mapIDs { id in id.isNone ? id : LocalID(agent: UInt32(truncatingIfNeeded: log.replicas[Int(id.agent)].hashValue), counter: id.counter) }
                var text = ""
                if case .insertText(let n, let l, let r, let s) = body {
                    text = String(String.UnicodeScalarView(log.text[s ..< s + op.length]))
                    body = .insertText(note: n, originLeft: l, originRight: r, contentStart: 0)
                }
                return "\(op.length) \(body) \(text)"
            }
        }
        for j in 0 ..< b.changes.count {
            guard let i = a.changeIndex(of: b.changeID(j)) else { continue }
            let x = a.changes[i], y = b.changes[j]
            let same = x.length == y.length && x.counterStart == y.counterStart && x.time == y.time
                && a.author(of: i) == b.author(of: j) && a.message(of: i) == b.message(of: j) && a.extra(of: i) == b.extra(of: j)
                && a.deps(of: i).map(a.changeID).sorted() == b.deps(of: j).map(b.changeID).sorted()
                && ops(a, i) == ops(b, j)
            if !same { return b.changeID(j) }
        }
        return nil
    }

    /// An op that overwrites several values lists them in the order the register held them in
    /// memory, and sorted by replica id in a file; both are one op. Were the two orders compared
    /// as they are, the copy that made the change would refuse to merge a copy loaded from its
    /// own file whenever they differed (about half the time).
    @Test("A copy loaded from a file merges with the copy in memory that wrote it, whatever order the overwritten values were in")
    func predecessorOrder() throws {
        for trial in 0 ..< 16 {
            let base = Document(title: "T", author: "a")
            let note = base.addNote(title: "N", body: "")
            let x = base.fork(author: "x"), y = base.fork(author: "y")
            x.setTitle("X"); y.setTitle("Y")
            try x.setPriority(note, .high); try y.setPriority(note, .low)
            try x.merge(y)
            // Each overwrites both concurrent values.
            x.setTitle("Z")
            try x.setPriority(note, .normal)
            let copy = try Document.load(x.save())
            for _ in 0 ..< 3 {   // compared directly, then (checked often) by fingerprints
                #expect(x.relation(to: copy) == .shared && copy.relation(to: x) == .shared, "trial \(trial)")
            }
            #expect(try x.merge(copy).isUpToDate && copy.merge(x).isUpToDate)
        }
    }

    @Test("The stretch-by-stretch check agrees with a change-by-change comparison, both ways, in memory and loaded",
          arguments: 0 ..< 120)
    func agreesWithReference(seed: Int) throws {
        let (one, two, difference) = try Self.copies(seed: UInt64(seed) &* 7919 &+ 17)
        // Loading may lay out runs and ops differently from the edits that made them.
        let loadedOne = try Document.load(one.save()), loadedTwo = try Document.load(two.save())
        for (a, b) in [(one, two), (two, one), (loadedOne, two), (one, loadedTwo), (loadedTwo, loadedOne)] {
            let expected = Self.referenceFirstDifference(a.log, b.log)
            #expect(a.log.sharesHistory(with: b.log) == (expected == nil), "seed \(seed), \(difference)")
            // Compared half on each thread, the halves cut anywhere (inside ops, at their ends,
            // between changes): the same answer.
            for cut in Array(0 ... 48) + [64, 100, 333, 1_000, 10_000, Int.max] {
                #expect(a.log.sharesHistory(with: b.log, concurrentFrom: 0, splitAt: cut) == (expected == nil),
                        "seed \(seed), cut at \(cut), \(difference)")
            }
            // Fingerprints, on copies of the logs (they cache), agree too.
            var (fa, fb) = (a.log, b.log)
            let byFingerprints = fa.sharesHistoryByFingerprints(with: &fb)
            #expect(byFingerprints == (expected == nil), "fingerprints: seed \(seed), \(difference)")
            // `relation` compares directly the first time, by fingerprints after: both give the answer.
            #expect(a.relation(to: b) == (expected.map { .conflictingChange($0) } ?? .shared), "seed \(seed), \(difference)")
        }
        // A copy always shares its history with itself and with its own saved bytes.
        #expect(one.log.sharesHistory(with: loadedOne.log))
        #expect(loadedTwo.log.sharesHistory(with: two.log))
    }

    @Test("Every kind of difference is met by the random scripts, and refused")
    func differencesAreMet() throws {
        var refused = Set<String>()
        for seed in 0 ..< 120 {
            let (one, two, difference) = try Self.copies(seed: UInt64(seed) &* 7919 &+ 17)
            if case .conflictingChange = one.relation(to: two) { refused.insert("\(difference)") }
        }
        for d in Self.randomDifferences where d != .none { #expect(refused.contains("\(d)"), "\(d) was never refused") }
        #expect(!refused.contains("none"))
    }

    /// `agentMap(from:)` looks for an agent at its own index first (copies of one document list
    /// the replicas of their common past in the same order): held to a plain lookup of every
    /// replica, on tables that agree, agree on a prefix, list the same replicas in another order,
    /// and share only some of them.
    @Test("agentMap gives, for each replica of the other log, this log's agent for it, whatever the two orders")
    func agentMapMatchesLookup() {
        var rng = SeededRandom(state: 11)
        let pool = (0 ..< 40).map { _ in ReplicaID(high: rng.next(), low: rng.next()) }
        func log(_ replicas: [ReplicaID]) -> OpLog {
            var log = OpLog()
            for r in replicas { _ = log.agent(for: r) }
            return log
        }
        let prefix = Array(pool[0 ..< 20])
        var cases: [([ReplicaID], [ReplicaID])] = []
        cases.append((pool, pool))                                                   // the same order
        cases.append((prefix + pool[20 ..< 30], prefix + pool[25 ..< 40]))           // a common prefix, then apart
        cases.append((pool, Array(pool.reversed())))                                 // the same replicas, another order
        cases.append((prefix + pool[20 ..< 30], Array(pool[20 ..< 30]) + prefix))    // shifted
        cases.append((Array(pool[0 ..< 10]), Array(pool[30 ..< 40])))                // none shared
        cases.append(([], prefix))
        cases.append((prefix, []))
        for _ in 0 ..< 20 {
            let m = Int.random(in: 0 ... 40, using: &rng), t = Int.random(in: 0 ... 40, using: &rng)
            let mine = Array(pool.shuffled(using: &rng).prefix(m)), theirs = Array(pool.shuffled(using: &rng).prefix(t))
            cases.append((mine, theirs))
        }
        for (mine, theirs) in cases {
            let a = log(mine), b = log(theirs)
            let expected = theirs.map { r in mine.firstIndex(of: r).map { UInt32($0) } ?? OpLog.unknownAgent }
            #expect(a.agentMap(from: b) == expected)
            #expect(b.agentMap(from: a) == mine.map { r in theirs.firstIndex(of: r).map { UInt32($0) } ?? OpLog.unknownAgent })
        }
    }
}
