import Foundation
import Testing
@testable import PeerNote

/// The adversarial corpus (`AdversarialCorpus`) at sizes where the quadratic paths of issue 47
/// took tens of seconds to minutes in a debug build (or ran out of memory), while the work the
/// library now does takes well under the limit each test sets: each limit fails with the old code
/// and passes with room to spare with the new. Each test also checks what the history means.
@Suite("Adversarial corpus")
struct AdversarialCorpusTests {
    /// Seconds `body` takes.
    private func seconds<T>(_ body: () throws -> T) rethrows -> (T, Double) {
        let start = Date()
        let value = try body()
        return (value, Date().timeIntervalSince(start))
    }

    @Test("A replica whose changes never depend on its own previous one keeps them all heads, and loading them is linear")
    func manyHeads() throws {
        let n = 40_000
        let bytes = try AdversarialCorpus.bytes(.manyHeads, size: n)
        let (doc, time) = try seconds { try Document.load(bytes) }
        #expect(doc.heads.count == n)
        #expect(doc.notes[0].tags.count == 17)
        #expect(time < 20, "loading \(n) heads took \(time) s")
    }

    @Test("Thousands of replicas each deleting a note while one edits them all: every note is a delete-versus-edit conflict, in memory linear in the history")
    func manyDeleters() throws {
        let n = 8_000
        let doc = try AdversarialCorpus.document(.manyDeleters, size: n)
        let (conflicts, time) = seconds { doc.conflicts }
        let deleted = conflicts.filter { if case .deletedWhileEdited = $0 { true } else { false } }
        #expect(deleted.count == n)
        if case .deletedWhileEdited(_, _, let by, let edited) = deleted[0] {
            #expect(by.count == 1 && edited.count == 1)
        }
        #expect(doc.notes.isEmpty && doc.deletedNotes.count == n)
        #expect(time < 20, "the conflict check over \(n) deleted notes took \(time) s")
    }

    @Test("Register writes that each name one of thousands of live values leave the others, without scanning them all per write")
    func registerPredecessors() throws {
        let n = 40_000
        let bytes = try AdversarialCorpus.bytes(.registerPreds, size: n)
        let (doc, time) = try seconds { try Document.load(bytes) }
        let conflict = try #require(doc.conflicts.first { if case .noteTitle = $0 { true } else { false } })
        if case .noteTitle(_, let values, _) = conflict {
            #expect(values.count == n)
            #expect(values.allSatisfy { $0.value.hasPrefix("again ") })
        }
        #expect(time < 20, "loading \(n) register writes took \(time) s")
    }

    @Test("Tag removes that each name one of thousands of adds leave the tag gone, in time linear in the ops")
    func tagStorm() throws {
        let n = 40_000
        let bytes = try AdversarialCorpus.bytes(.tagStorm, size: n)
        let (doc, time) = try seconds { try Document.load(bytes) }
        #expect(doc.notes[0].tags.isEmpty)
        #expect(time < 20, "loading \(n) tag adds and removes took \(time) s")
    }

    @Test("A change adding or removing thousands of tags has a one-line summary naming each tag once")
    func tagSummariesAreCut() throws {
        // The removes of n adds of one tag: one tag untagged.
        let storm = try #require(try AdversarialCorpus.document(.tagStorm, size: 4_000).history.last)
        #expect(storm.summary.hasPrefix("untagged storm \""), "\(storm.summary.prefix(200))")
        #expect(!storm.summary.contains("storm, storm"))
        // One change adding n distinct tags: as many as fit in 120 characters, then how many more.
        var b = AdversarialCorpus.Builder()
        b.change(by: 0, deps: [])
        let note = b.op(.createNote(originLeft: .none, originRight: .none, created: b.time))
        b.op(.setNoteTitle(note: note, "N", preds: []))
        b.change(by: 1, deps: [0])
        let n = 5_000
        for i in 0 ..< n { b.op(.addTag(note: note, "t\(i)")) }
        let entry = try #require(try b.document().history.last)
        let part = try #require(entry.summaryParts.first?.text)
        #expect(part.hasPrefix("tagged t0, t1, t2, "), "\(part)")
        #expect(part.count <= 140, "\(part.count) characters: \(part.prefix(200))")
        let shown = part.components(separatedBy: ", ").count
        let more = try #require(part.range(of: #"and (\d+) more"#, options: .regularExpression).map { part[$0].split(separator: " ")[1] })
        #expect(shown + (Int(more) ?? 0) == n, "\(part)")
        #expect(entry.summary == part)
    }

    @Test("A note deleted by thousands of replicas and moved thousands of times is listed as deleted without scanning its deletes at every place")
    func moves() throws {
        let n = 20_000
        let doc = try AdversarialCorpus.document(.moves, size: n)
        let (notes, time) = seconds { (doc.notes, doc.deletedNotes) }
        #expect(notes.0.count == 1 && notes.1.count == 1)
        #expect(time < 20, "listing a note with \(n) deletes and \(n) places took \(time) s")
    }

    @Test("A note deleted while another copy typed into it keystroke by keystroke lists every keystroke change once, in linear time")
    func deleteVersusEdit() throws {
        let n = 100_000
        let doc = try AdversarialCorpus.document(.deleteVersusEdit, size: n)
        let (conflicts, time) = seconds { doc.conflicts }
        #expect(conflicts.count == 1)
        if case .deletedWhileEdited(_, _, let by, let edited) = try #require(conflicts.first) {
            #expect(by.count == 1)
            #expect(edited.count == n)
        }
        #expect(time < 20, "the conflict check over \(n) keystrokes took \(time) s")
    }

    @Test("Thousands of concurrent notebook retitles are one conflict holding every value")
    func retitles() throws {
        let n = 20_000
        let bytes = try AdversarialCorpus.bytes(.retitles, size: n)
        let (doc, time) = try seconds { () throws -> (Document, [Conflict]) in
            let d = try Document.load(bytes)
            return (d, d.conflicts)
        }
        let conflict = try #require(doc.1.first)
        // The genesis title and the n written concurrently (none names it as a predecessor).
        if case .notebookTitle(let values, _) = conflict { #expect(values.count == n + 1) }
        #expect(time < 20, "loading and checking \(n) retitles took \(time) s")
    }

    @Test("Thousands of concurrent branches merged by one change load with one head")
    func branches() throws {
        let n = 20_000
        let bytes = try AdversarialCorpus.bytes(.branches, size: n)
        let (doc, time) = try seconds { try Document.load(bytes) }
        #expect(doc.heads.count == 1 && doc.notes.count == 1 && doc.notes[0].tags.count == n)
        #expect(time < 20, "loading \(n) branches took \(time) s")
    }

    @Test("Thousands of devices typing at one place load in the canonical order, compact, and the compacted file loads")
    func samePlace() throws {
        let n = 20_000
        let bytes = try AdversarialCorpus.bytes(.samePlace, size: n)
        let (doc, time) = try seconds { try Document.load(bytes) }
        // Each replica's character goes after those of smaller replicas: replica r typed
        // character (n - r) % 26 of the alphabet.
        let letters = Array("abcdefghijklmnopqrstuvwxyz")
        let expected = "a" + String((1 ... n).map { letters[(n - $0) % 26] }) + "b"
        #expect(doc.notes[0].body == expected)
        // The scan of peernote(5) takes n²/2 = 2·10^8 steps here, minutes in a debug build (and
        // more than the file's work budget); the sibling index a few steps an insert.
        #expect(time < 60, "loading \(n) inserts at one place took \(time) s")
        let compacted = doc.save(.compact)
        let (again, reload) = try seconds { try Document.load(compacted) }
        #expect(again.notebook == doc.notebook)
        #expect(again.save(.compact) == compacted)
        #expect(reload < 60, "loading the compacted file took \(reload) s")
    }

    @Test("Devices typing backwards at one place load in the canonical order, compact, and the compacted file loads")
    func typingBackwards() throws {
        let n = 20_000
        let bytes = try AdversarialCorpus.bytes(.typingBackwards, size: n)
        let (doc, time) = try seconds { try Document.load(bytes) }
        // Each device's characters in the reverse of the order typed (device d typed letter
        // (d + i) % 26 i-th), the devices in replica order.
        let letters = Array("abcdefghijklmnopqrstuvwxyz")
        let perDevice = n / 8
        let expected = "a" + String((0 ..< 8).flatMap { d in (0 ..< perDevice).reversed().map { letters[(d + $0) % 26] } }) + "b"
        #expect(doc.notes[0].body == expected)
        #expect(time < 60, "loading \(n) characters typed backwards took \(time) s")
        let compacted = doc.save(.compact)
        let (again, reload) = try seconds { try Document.load(compacted) }
        #expect(again.notebook == doc.notebook)
        #expect(again.save(.compact) == compacted)
        #expect(reload < 60, "loading the compacted file took \(reload) s")
    }

    @Test("Inserts in front of different prefixes of a chain typed backwards load in the order appended and the canonical order, and compact")
    func chainSkipping() throws {
        let n = 20_000
        let bytes = try AdversarialCorpus.bytes(.chainSkipping, size: n)
        let (doc, time) = try seconds { try Document.load(bytes) }
        // The k-th inserting device (replica k) saw the typing device's first k characters and
        // typed "-" right before the k-th; its id sorts before the typing device's, so it goes
        // before every character typed after the k-th: all the dashes first, then the characters
        // typed, last first.
        let letters = Array("abcdefghijklmnopqrstuvwxyz")
        let expected = "a" + String(repeating: "-", count: n) + String((0 ..< n).reversed().map { letters[$0 % 26] }) + "b"
        #expect(doc.notes[0].body == expected)
        // Skipping the chain a character at a time took n²/2 = 2·10^8 steps in the order
        // appended, more than the file's work budget.
        #expect(time < 60, "loading \(n) inserts in front of a chain took \(time) s")
        let compacted = doc.save(.compact)
        let again = try Document.load(compacted)
        #expect(again.notebook == doc.notebook)
        #expect(again.save(.compact) == compacted)
    }

    @Test("Checking whether a change is in another's causal past gives what version vectors give, by either strategy")
    func pastQueriesAgreeWithVersionVectors() throws {
        // A random history of 6 replicas, each change on top of 1-3 random earlier changes.
        var rng = SeededRandom(state: 47)
        var b = AdversarialCorpus.Builder()
        b.change(by: 0, deps: [])
        b.op(.setNotebookTitle("T", preds: []))
        for _ in 1 ..< 300 {
            let count = b.log.changes.count
            let deps = Set((0 ..< Int(rng.next() % 3 + 1)).map { _ in Int(rng.next() % UInt64(count)) }).sorted()
            b.change(by: Int(rng.next() % 6), deps: deps)
            b.op(.setNotebookTitle("x", preds: []))
        }
        let log = b.log
        var queries: [OpLog.PastQuery] = []
        var expected: [Bool] = []
        for _ in 0 ..< 3_000 {
            let root = Int(rng.next() % UInt64(log.changes.count)), c = Int(rng.next() % UInt64(log.changes.count))
            queries.append(OpLog.PastQuery(root: root, agent: log.changes.agent(c), seq: log.changes.seq(c)))
            expected.append(log.versionVector(of: [root])[Int(log.changes.agent(c))] >= log.changes.seq(c))
        }
        // Many roots and few agents (forward passes), and queries of one root each (backward walks).
        #expect(log.pastContains(queries) == expected)
        for k in stride(from: 0, to: queries.count, by: 97) {
            #expect(log.pastContains([queries[k]]) == [expected[k]])
        }
    }

    /// The list-integration work (scan steps, as the loader counts them against
    /// `VerifiedFile.workBudget`) `doc`'s history takes replayed in the order of its log and in
    /// the canonical order, the larger (a load does one or both; a compact save with a state
    /// section does less, building its bodies from the section).
    static func integrationWork(of doc: Document) throws -> Int {
        var fileOrder = DocState()
        try fileOrder.applyOps(of: doc.log, from: 0, firstChange: 0)
        let canonical = try DocState.canonical(of: doc.log, workBudget: .max)
        return max(.max - fileOrder.workBudget, .max - canonical.workBudget)
    }

    /// Honest histories, each with the smallest file it saves as (compact): the fixtures, every
    /// family of the corpus at `sizes`, and the editing traces when they are there.
    static func honestHistories(sizes: (AdversarialCorpus.Family) -> [Int]) throws -> [(name: String, doc: Document, bytes: Int)] {
        var out: [(name: String, doc: Document, bytes: Int)] = []
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fixtures")
        for name in try FileManager.default.contentsOfDirectory(atPath: fixtures.path).sorted() where name.hasSuffix(".peernote") {
            let doc = try Document.load([UInt8](Data(contentsOf: fixtures.appendingPathComponent(name))))
            out.append((name, doc, doc.save(.compact).count))
        }
        for family in AdversarialCorpus.Family.allCases {
            for n in sizes(family) {
                let doc = try AdversarialCorpus.build(family, size: n).document()
                out.append(("\(family.rawValue)-\(n)", doc, doc.save(.compact).count))
            }
        }
        if tracesAvailable {
            let concurrent = try EditingTrace.load("friendsforever.json.gz").replayConcurrently { doc, other in try doc.merge(other) }.final
            out.append(("friendsforever", concurrent, concurrent.save(.compact).count))
            let trace = try EditingTrace.load("automerge-paper.json.gz")
            let paper = Document(title: "automerge-paper", author: "trace")
            let note = paper.addNote(title: "paper", body: "")
            for txn in trace.txns.prefix(TraceTests.sequentialPrefix) { try paper.apply(txn, to: note) }
            out.append(("automerge-paper-\(TraceTests.sequentialPrefix)", paper, paper.save(.compact).count))
        }
        return out
    }

    @Test("Honest histories take a small fraction of the integration work their file's size allows")
    func honestWorkWithinBudget() throws {
        // PEERNOTE_WORK_TABLE: a line per history (the figures docs/ROBUSTNESS.md gives).
        let table = ProcessInfo.processInfo.environment["PEERNOTE_WORK_TABLE"] != nil
        let histories = try Self.honestHistories { family in
            // The families that insert concurrently into a list (the others integrate every insert
            // right after its left origin, which takes no steps) at their test size and four times it.
            table && [.samePlace, .typingBackwards, .chainSkipping].contains(family) ? [Self.testSize(family), 4 * Self.testSize(family)] : [1_000, 4_000]
        }
        for h in histories {
            let work = try Self.integrationWork(of: h.doc)
            let budget = VerifiedFile.workBudget(fileSize: h.bytes)
            let ops = h.doc.log.ops.count
            if table {
                print("work: \(h.name) | \(h.bytes) | \(ops) | \(work) | \(String(format: "%.3f", Double(work) / Double(h.bytes))) | \(String(format: "%.3f", Double(work) / Double(max(ops, 1))))")
            }
            // The budget allows `VerifiedFile.workPerRow` steps for each op row the file's size
            // admits; honest histories take at most a quarter of that per op row they hold.
            #expect(4 * work <= VerifiedFile.workPerRow * ops, "\(h.name): \(work) steps for \(ops) op rows")
            #expect(work <= budget, "\(h.name): \(work) steps for \(h.bytes) bytes, the budget \(budget)")
        }
    }

    /// The size each family's test above builds it at.
    static func testSize(_ family: AdversarialCorpus.Family) -> Int {
        switch family {
        case .manyHeads, .registerPreds, .tagStorm: 40_000
        case .manyDeleters: 8_000
        case .moves, .retitles, .branches, .samePlace, .typingBackwards, .chainSkipping: 20_000
        case .deleteVersusEdit: 100_000
        }
    }

    /// Writes every family at four doubling sizes from its stress size (`AdversarialCorpus.stressSize`)
    /// (divided by `PEERNOTE_STRESS_DIVISOR`, for a quicker run on debug tools) into
    /// `PEERNOTE_STRESS_DIR`, as FAMILY-SIZE.peernote, for `make stress`; without it, every
    /// family at size 100 into a temporary folder, checking that each file loads.
    /// `PEERNOTE_STRESS_FAMILY` names the one family to write.
    @Test("Every family writes files that load")
    func writeCorpus() throws {
        let env = ProcessInfo.processInfo.environment
        let stress = env["PEERNOTE_STRESS_DIR"]
        let dir = stress ?? NSTemporaryDirectory() + "peernote-corpus-\(getpid())"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        // PEERNOTE_STRESS_FAMILY: one family only (its name).
        let only = env["PEERNOTE_STRESS_FAMILY"].flatMap { $0.isEmpty ? nil : $0 }
        for family in AdversarialCorpus.Family.allCases where only == nil || only == family.rawValue {
            let divisor = max(Int(env["PEERNOTE_STRESS_DIVISOR"] ?? "") ?? 1, 1)
            let sizes = stress == nil ? [100] : (0 ..< 4).map { (AdversarialCorpus.stressSize(family) / divisor) << $0 }
            for n in sizes {
                let bytes = try AdversarialCorpus.bytes(family, size: n)
                _ = try Document.load(bytes)
                try Data(bytes).write(to: URL(fileURLWithPath: dir + "/\(family.rawValue)-\(n).peernote"))
            }
        }
        if stress == nil { try FileManager.default.removeItem(atPath: dir) }
    }
}
