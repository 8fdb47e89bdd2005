import Testing
@_spi(Diagnostics) @testable import PeerNote

/// The checks a reader of the proposed format version 3 (docs/FORMAT-V3.md) makes before it
/// builds note bodies from their stored structures, and the origins it gives the log after:
/// tried on the structures of documents replayed as now, and on those structures damaged.
@Suite("Bodies from their structure: the reader's checks")
struct StructureLoadTests {
    /// A document of several notes edited on three copies, merged, saved and loaded (so that its
    /// log is in a file's order).
    static func document(seed: UInt64) throws -> Document {
        var rng = SeededRandom(state: seed)
        let doc = Document(title: "Shared", author: "a")
        for _ in 0 ..< 80 { try ConvergenceTests().randomEdit(doc, &rng) }
        let copies = (0 ..< 2).map { doc.fork(author: "c\($0)") }
        for round in 0 ..< 4 {
            for copy in copies + [doc] { for _ in 0 ..< 25 { try ConvergenceTests().randomEdit(copy, &rng) } }
            try doc.merge(copies[round % 2])
            try copies[(round + 1) % 2].merge(doc)
        }
        for copy in copies { try doc.merge(copy) }
        return try Document.load(doc.save(.compact))
    }

    /// Every note's body as its id and runs, in the order the state keeps notes.
    static func structures(_ doc: Document) -> [(note: LocalID, runs: [StructureRun])] {
        doc.state.noteStates.map { note in
            var runs: [StructureRun] = []
            note.body.forEachRun { id, length, deleted, _ in runs.append(StructureRun(id: id, length: length, deleted: deleted)) }
            return (note.id, runs)
        }
    }

    @Test("A document's own structures pass", arguments: [1, 2, 3])
    func ownStructuresPass(seed: UInt64) throws {
        let doc = try Self.document(seed: seed)
        let structures = Self.structures(doc)
        #expect(structures.contains { $0.runs.count > 3 }, "some body of several runs")
        #expect(doc.log.structureProblem(structures) == nil)
    }

    @Test("A structure that does not add up is refused, saying why")
    func damagedStructures() throws {
        let doc = try Self.document(seed: 4)
        let log = doc.log
        let good = Self.structures(doc)
        let k = try #require(good.indices.max { good[$0].runs.count < good[$1].runs.count })
        let other = try #require(good.indices.first { $0 != k && !good[$0].runs.isEmpty })
        let runs = good[k].runs
        try #require(runs.count > 3)
        func problem(_ change: (inout [(note: LocalID, runs: [StructureRun])]) -> Void) -> String {
            var s = good
            change(&s)
            return log.structureProblem(s) ?? "none"
        }
        let p1 = problem { (s: inout [(note: LocalID, runs: [StructureRun])]) in s[k].runs.remove(at: 1) }
        #expect(p1.hasSuffix("is missing from its structure"), "\(p1)")
        let p2 = problem { (s: inout [(note: LocalID, runs: [StructureRun])]) in s[k].runs.append(runs[1]) }
        #expect(p2.hasSuffix("lists an element twice"), "\(p2)")
        let p3 = problem { (s: inout [(note: LocalID, runs: [StructureRun])]) in s[other].runs.append(s[k].runs.remove(at: 1)) }
        #expect(p3.hasSuffix("lists an element that is not an insert into it"), "\(p3)")
        let visible = try #require(runs.firstIndex { !$0.deleted }), deleted = try #require(runs.firstIndex { $0.deleted })
        let p4 = problem { (s: inout [(note: LocalID, runs: [StructureRun])]) in s[k].runs[visible].deleted = true }
        #expect(p4.hasSuffix("shows an element deleted that no delete targets"), "\(p4)")
        let p5 = problem { (s: inout [(note: LocalID, runs: [StructureRun])]) in s[k].runs[deleted].deleted = false }
        #expect(p5.hasSuffix("shows a deleted element as visible"), "\(p5)")
        let p6 = problem { (s: inout [(note: LocalID, runs: [StructureRun])]) in s[k].runs[1].id = LocalID(agent: runs[1].id.agent, counter: UInt32.max - 10) }
        #expect(p6.hasSuffix("lists an element the history lacks"), "\(p6)")
        let p7 = problem { (s: inout [(note: LocalID, runs: [StructureRun])]) in s.remove(at: k) }
        #expect(p7.hasSuffix("which has no structure"), "\(p7)")
        let p8 = problem { (s: inout [(note: LocalID, runs: [StructureRun])]) in s.append(s[k]) }
        #expect(p8.hasSuffix("has two structures"), "\(p8)")
        // Two runs swapped: the order is the structure's to state (its derived origins rebuild
        // it), so the checks pass; a swap within one note's own elements changes no membership.
        let p9 = problem { (s: inout [(note: LocalID, runs: [StructureRun])]) in s[k].runs.swapAt(1, 2) }
        #expect(p9 == "none")
    }

    /// `log` with every insert's origins blanked: what a version 3 file leaves out.
    static func withoutInsertOrigins(_ log: OpLog) -> OpLog {
        var log = log
        log.setInsertOrigins(log.ops.indices.compactMap { i in
            guard case .insertText = log.ops[i].body else { return nil }
            return (i, .none, .none)
        })
        return log
    }

    @Test("Origins left out and taken from the bodies give the log back; with a body missing, nothing changes", arguments: [5, 6])
    func originsTakenBack(seed: UInt64) throws {
        let doc = try Self.document(seed: seed)
        let original = doc.log
        var log = Self.withoutInsertOrigins(original)
        #expect(log.ops != original.ops)
        var bodies: [LocalID: ListCRDT<Unicode.Scalar>] = [:]
        for note in doc.state.noteStates { bodies[note.id] = note.body }
        let taken = log.takeInsertOrigins(from: bodies)
        #expect(taken)
        #expect(log.ops == original.ops)
        var partial = Self.withoutInsertOrigins(original)
        bodies.removeValue(forKey: try #require(doc.state.noteStates.first { $0.body.totalCount > 0 }).id)
        let before = partial.ops
        let takenWithout = partial.takeInsertOrigins(from: bodies)
        #expect(!takenWithout)
        #expect(partial.ops == before)
    }

    @Test("Bodies built from their structures give every insert its origins back where none was made concurrently at one place, and differ only at such places")
    func originsFromStructures() throws {
        // One writer (and copies that take turns): every origin follows from the structure.
        let solo = try DerivedOriginsTests.oneWriterHistory(seed: 8, edits: 200, turns: 3)
        // Three copies editing at once: some inserts were made at one place concurrently.
        let shared = try Self.document(seed: 5)
        for (doc, concurrent) in [(try Document.load(solo.save(.compact)), false), (shared, true)] {
            let original = doc.log
            var log = Self.withoutInsertOrigins(original)
            let lists = try #require(doc.buildBodies(from: doc.bodyStructures()))
            var bodies: [LocalID: ListCRDT<Unicode.Scalar>] = [:]
            for (note, list) in zip(doc.state.noteStates, lists) { bodies[note.id] = list }
            let taken = log.takeInsertOrigins(from: bodies)
            #expect(taken)
            let differing = zip(log.ops, original.ops).filter { $0 != $1 }
            let audit = doc.originAudit().bodies
            let exceptions = audit.leftExceptions + audit.rightExceptions
            // What `pnbench origins` times: the check, the bodies built, the origins taken.
            #expect(doc.readBodiesAsVersion3(from: doc.bodyStructures()) == lists.reduce(0) { $0 + $1.totalCount })
            if concurrent {
                #expect(exceptions > 0 && !differing.isEmpty, "the concurrent copies make exceptions")
                #expect(differing.count <= exceptions, "an op differs only where an element's origins do not follow")
                #expect(differing.allSatisfy { if case .insertText = $0.0.body { true } else { false } })
            } else {
                #expect(exceptions == 0)
                #expect(differing.isEmpty, "\(differing.count) ops differ")
            }
        }
    }
}
