import Testing
@_spi(Diagnostics) @testable import PeerNote

/// What a reader of format version 3 (docs/FORMAT-V3.md) does instead of replaying
/// a history to build note bodies (`OpLog.buildBodies(from:)`): the checks of the stored
/// structures against the log, the bodies built, and the origins given back to the log. Tried
/// on the structures of documents replayed as now, on those structures damaged, and against a
/// plain element-by-element form of the same checks (`ReferenceStructureCheck`).
@Suite("Bodies from their structure: the reader's checks and origins")
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

    typealias Structures = [(note: LocalID, runs: [StructureRun])]

    /// Every note's body as its id and runs, in the order the state keeps notes.
    static func structures(_ doc: Document) -> Structures {
        doc.state.noteStates.map { note in
            var runs: [StructureRun] = []
            note.body.forEachRun { id, length, deleted, _ in runs.append(StructureRun(id: id, length: length, deleted: deleted)) }
            return (note.id, runs)
        }
    }

    /// What `buildBodies` says of `structures` (each given as many elements as it lists), on a
    /// copy of `log`; nil when it builds them. A refusal must leave the log as it was.
    static func problem(_ log: OpLog, _ structures: Structures) -> String? {
        var copy = log
        let stored = structures.map { s in
            StoredBody(note: s.note, runs: s.runs, elements: ScalarStore(Array(repeating: "x", count: s.runs.reduce(0) { $0 + $1.length })))
        }
        switch copy.buildBodies(from: stored) {
        case .success: return nil
        case .failure(let problem):
            #expect(copy.ops == log.ops, "a refusal changes nothing")
            return problem.message
        }
    }

    @Test("A document's own structures pass, and build the bodies replay built", arguments: [1, 2, 3])
    func ownStructuresPass(seed: UInt64) throws {
        let doc = try Self.document(seed: seed)
        let structures = Self.structures(doc)
        #expect(structures.contains { $0.runs.count > 3 }, "some body of several runs")
        #expect(Self.problem(doc.log, structures) == nil)
        #expect(doc.log.referenceStructureProblem(structures) == nil)
        var log = doc.log
        let stored = zip(doc.state.noteStates, doc.bodyStructures().lists).map { StoredBody(note: $0.id, runs: $1.runs, elements: ScalarStore($1.elements)) }
        let bodies = try log.buildBodies(from: stored).get()
        for (note, body) in zip(doc.state.noteStates, bodies) {
            var replayed: [(LocalID, Bool)] = [], built: [(LocalID, Bool)] = []
            note.body.forEachElement { id, _, deleted in replayed.append((id, deleted)) }
            body.forEachElement { id, _, deleted in built.append((id, deleted)) }
            #expect(replayed.map(\.0) == built.map(\.0) && replayed.map(\.1) == built.map(\.1))
            #expect(String(String.UnicodeScalarView(body.visibleElements)) == String(String.UnicodeScalarView(note.body.visibleElements)))
        }
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
        func problem(_ change: (inout Structures) -> Void) -> String {
            var s = good
            change(&s)
            let found = Self.problem(log, s) ?? "none"
            // The reference refuses what is refused, and passes what passes.
            #expect((log.referenceStructureProblem(s) == nil) == (found == "none"), "\(found)")
            return found
        }
        let p1 = problem { s in s[k].runs.remove(at: 1) }
        #expect(p1.hasSuffix("is missing from its structure"), "\(p1)")
        let p2 = problem { s in s[k].runs.append(runs[1]) }
        #expect(p2.hasSuffix("lists an element twice"), "\(p2)")
        let p3 = problem { s in s[other].runs.append(s[k].runs.remove(at: 1)) }
        #expect(p3.hasSuffix("lists an element that is not an insert into it"), "\(p3)")
        let visible = try #require(runs.firstIndex { !$0.deleted }), deleted = try #require(runs.firstIndex { $0.deleted })
        let p4 = problem { s in s[k].runs[visible].deleted = true }
        #expect(p4.hasSuffix("shows an element deleted that no delete targets"), "\(p4)")
        let p5 = problem { s in s[k].runs[deleted].deleted = false }
        #expect(p5.hasSuffix("shows a deleted element as visible"), "\(p5)")
        let p6 = problem { s in s[k].runs[1].id = LocalID(agent: runs[1].id.agent, counter: UInt32.max - 10) }
        #expect(p6.hasSuffix("lists an element the history lacks"), "\(p6)")
        let p7 = problem { s in s.remove(at: k) }
        #expect(p7.hasSuffix("which has no structure"), "\(p7)")
        let p8 = problem { s in s.append(s[k]) }
        #expect(p8.hasSuffix("has two structures"), "\(p8)")
        // Two runs swapped: the order is the structure's to state (its derived origins rebuild
        // it), so the checks pass, unless the swap puts an earlier element between two units of
        // one insert (the units of an op follow each other).
        let apart = "lists the characters of one insert apart"
        let p9 = problem { s in s[k].runs.swapAt(1, 2) }
        #expect(p9 == "none" || p9.hasSuffix(apart), "\(p9)")
        // A run cut in two, one part moved to the end: still every element once.
        let p10 = problem { s in
            let r = s[k].runs[0]
            guard r.length > 1 else { s[k].runs.swapAt(0, 1); return }
            s[k].runs[0].length = 1
            s[k].runs.append(StructureRun(id: r.id.advanced(by: 1), length: r.length - 1, deleted: r.deleted))
        }
        #expect(p10 == "none" || p10.hasSuffix(apart), "\(p10)")
        // The units of one insert listed apart: the last unit of a typing run of two or more
        // moved to the front of the body.
        if let r = runs.indices.first(where: { r in
            guard runs[r].length > 1, let lv = log.lv(of: runs[r].id.advanced(by: runs[r].length - 1)) else { return false }
            return log.ops[log.opIndex(containingLV: lv)].lv < lv
        }) {
            let p12 = problem { s in
                let last = s[k].runs[r]
                s[k].runs[r].length -= 1
                s[k].runs.insert(StructureRun(id: last.id.advanced(by: last.length - 1), length: 1, deleted: last.deleted), at: 0)
            }
            #expect(p12.hasSuffix(apart), "\(p12)")
        } else {
            Issue.record("the note has a run holding two units of one insert")
        }
        // A run one element longer overlaps what follows it in the history, or runs past it.
        let p11 = problem { s in s[k].runs[2].length += 1 }
        #expect(p11 != "none")
    }

    @Test("Randomly damaged structures: refused exactly when the element-by-element checks refuse them", arguments: [11, 12, 13])
    func randomDamage(seed: UInt64) throws {
        let doc = try Self.document(seed: seed)
        let log = doc.log
        let good = Self.structures(doc)
        var rng = SeededRandom(state: seed &* 7919)
        var refused = 0, passed = 0
        for round in 0 ..< 150 {
            var s = good
            for _ in 0 ... Int.random(in: 0 ... 2, using: &rng) {
                let k = Int.random(in: 0 ..< s.count, using: &rng)
                guard !s[k].runs.isEmpty else { continue }
                let i = Int.random(in: 0 ..< s[k].runs.count, using: &rng)
                // One round in five only reorders a note's own runs, which keeps every check but
                // the one on an insert's units listed apart.
                switch round % 5 == 0 ? 6 : Int.random(in: 0 ..< 9, using: &rng) {
                case 0: s[k].runs[i].deleted.toggle()
                case 1: s[k].runs[i].length += Int.random(in: 1 ... 3, using: &rng)
                case 2: if s[k].runs[i].length > 1 { s[k].runs[i].length -= 1 }
                case 3: s[k].runs[i].id.counter &+= UInt32.random(in: 1 ... 5, using: &rng)
                case 4: s[k].runs[i].id.counter &-= UInt32.random(in: 1 ... 5, using: &rng)
                case 5: s[k].runs[i].id.agent = UInt32.random(in: 0 ..< UInt32(log.replicas.count + 1), using: &rng)
                case 6: s[k].runs.swapAt(i, Int.random(in: 0 ..< s[k].runs.count, using: &rng))
                case 7: s[Int.random(in: 0 ..< s.count, using: &rng)].runs.append(s[k].runs.remove(at: i))
                default: s[k].runs.insert(s[k].runs[i], at: Int.random(in: 0 ... s[k].runs.count, using: &rng))
                }
            }
            let found = Self.problem(log, s)
            let reference = log.referenceStructureProblem(s)
            #expect((found == nil) == (reference == nil), "built: \(found ?? "passes"); reference: \(reference ?? "passes")")
            if round % 5 == 0 {
                #expect(found == nil || found?.hasSuffix("lists the characters of one insert apart") == true,
                        "reordered runs pass, or split an insert: \(found ?? "")")
            }
            if found == nil { passed += 1 } else { refused += 1 }
        }
        #expect(refused > 50 && passed >= 15, "the damage both breaks and keeps structures (\(refused) refused, \(passed) passed)")
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

    @Test("The origins left out come back from the structures where none was made concurrently at one place, and differ only at such places")
    func originsFromStructures() throws {
        // One writer (and copies that take turns): every origin follows from the structure.
        let solo = try DerivedOriginsTests.oneWriterHistory(seed: 8, edits: 200, turns: 3)
        // Three copies editing at once: some inserts were made at one place concurrently.
        let shared = try Self.document(seed: 5)
        for (doc, concurrent) in [(try Document.load(solo.save(.compact)), false), (shared, true)] {
            let original = doc.log
            var log = Self.withoutInsertOrigins(original)
            let stored = zip(doc.state.noteStates, doc.bodyStructures().lists).map { StoredBody(note: $0.id, runs: $1.runs, elements: ScalarStore($1.elements)) }
            let bodies = try log.buildBodies(from: stored).get()
            // The same origins read off the built bodies' runs, element by element.
            var reference = Self.withoutInsertOrigins(original)
            var byNote: [LocalID: ListCRDT<Unicode.Scalar>] = [:]
            for (note, body) in zip(doc.state.noteStates, bodies) { byNote[note.id] = body }
            let taken = reference.referenceTakeInsertOrigins(from: byNote)
            #expect(taken)
            #expect(log.ops == reference.ops)
            let differing = zip(log.ops, original.ops).filter { $0 != $1 }
            let audit = doc.originAudit().bodies
            let exceptions = audit.leftExceptions + audit.rightExceptions
            // What `pnbench origins` times.
            #expect(doc.readBodiesAsVersion3(from: doc.bodyStructures()) == bodies.reduce(0) { $0 + $1.totalCount })
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

    @Test("Origins taken from replayed bodies by the element-by-element reference give the log back")
    func referenceOriginsFromReplayedBodies() throws {
        let doc = try Self.document(seed: 6)
        var log = Self.withoutInsertOrigins(doc.log)
        var bodies: [LocalID: ListCRDT<Unicode.Scalar>] = [:]
        for note in doc.state.noteStates { bodies[note.id] = note.body }
        let taken = log.referenceTakeInsertOrigins(from: bodies)
        #expect(taken)
        #expect(log.ops == doc.log.ops)
    }
}

/// The reader's checks and origins in their plainest form, element by element (what
/// `OpLog.buildBodies(from:)` did before it worked a span at a time): the reference the tests
/// hold it to.
extension OpLog {
    /// Why `structures` are not the bodies this log's ops make, as far as the ops decide it; nil
    /// when they are.
    func referenceStructureProblem(_ structures: [(note: LocalID, runs: [StructureRun])]) -> String? {
        let units = lvCount
        var noteIndex: [LocalID: Int32] = [:]
        for (k, s) in structures.enumerated() {
            guard noteIndex.updateValue(Int32(k), forKey: s.note) == nil else { return "note \(name(s.note)) has two structures" }
        }
        // Per op unit: the structure of the note it inserted into, or -1 (not an insert); -2 once
        // a structure listed it.
        var insertedInto = [Int32](repeating: -1, count: units)
        var targeted = [Bool](repeating: false, count: units)
        let listed: Int32 = -2
        for op in ops {
            guard case .insertText(let note, _, _, _) = op.body else { continue }
            guard let k = noteIndex[note] else { return "an insert into note \(name(note)), which has no structure" }
            for u in op.lv ..< op.lv + op.length { insertedInto[u] = k }
        }
        for op in ops {
            guard case .deleteText(let note, let target, let reversed) = op.body else { continue }
            guard let k = noteIndex[note] else { return "a delete in note \(name(note)), which has no structure" }
            let first = reversed ? Int(target.counter) - (op.length - 1) : Int(target.counter)
            guard first >= 0 else { return "a delete in note \(name(note)) counts down past the first element" }
            for counter in first ..< first + op.length {
                guard counter <= Int(UInt32.max), let lv = lv(of: LocalID(agent: target.agent, counter: UInt32(counter))) else {
                    return "a delete in note \(name(note)) targets an element the history lacks"
                }
                guard insertedInto[lv] == k else { return "a delete in note \(name(note)) targets an element of another note" }
                targeted[lv] = true
            }
        }
        for (k, s) in structures.enumerated() {
            for run in s.runs {
                guard run.length > 0 else { return "the structure of note \(name(s.note)) lists an element the history lacks" }
                for offset in 0 ..< run.length {
                    let counter = Int(run.id.counter) + offset
                    guard counter <= Int(UInt32.max), let lv = lv(of: LocalID(agent: run.id.agent, counter: UInt32(counter))) else {
                        return "the structure of note \(name(s.note)) lists an element the history lacks"
                    }
                    if insertedInto[lv] == listed { return "the structure of note \(name(s.note)) lists an element twice" }
                    guard insertedInto[lv] == Int32(k) else { return "the structure of note \(name(s.note)) lists an element that is not an insert into it" }
                    guard targeted[lv] == run.deleted else {
                        return run.deleted ? "the structure of note \(name(s.note)) shows an element deleted that no delete targets"
                                           : "the structure of note \(name(s.note)) shows a deleted element as visible"
                    }
                    insertedInto[lv] = listed
                }
            }
        }
        if let lv = insertedInto.firstIndex(where: { $0 >= 0 }) {
            return "an insert into note \(name(structures[Int(insertedInto[lv])].note)) is missing from its structure"
        }
        // Every unit of an insert after its first: its derived left origin (the nearest element
        // before it with a smaller local version) is the unit before it.
        for s in structures {
            var ids: [LocalID] = [], ranks: [Int] = []
            for run in s.runs {
                for offset in 0 ..< run.length {
                    let id = run.id.advanced(by: offset)
                    ids.append(id)
                    ranks.append(lv(of: id) ?? -1)
                }
            }
            let derived = DerivedOrigins.nearestEarlier(ranks)
            for (i, id) in ids.enumerated() where ops[opIndex(containingLV: ranks[i])].lv != ranks[i] {
                guard derived.left[i] >= 0, ids[derived.left[i]] == id.advanced(by: -1) else {
                    return "the structure of note \(name(s.note)) lists the characters of one insert apart"
                }
            }
        }
        return nil
    }

    /// Gives every insertText op the origins its first unit has in `bodies[note]`, element by
    /// element. False, changing nothing, when an op's first unit is in no body, in another
    /// note's, or in two places.
    mutating func referenceTakeInsertOrigins(from bodies: [LocalID: ListCRDT<Unicode.Scalar>]) -> Bool {
        var firstUnits: [LocalID: Int] = [:]
        for (i, op) in ops.enumerated() {
            guard case .insertText = op.body else { continue }
            firstUnits[localID(ofLV: op.lv, change: changeIndex(containingLV: op.lv))] = i
        }
        var found: [(op: Int, left: LocalID, right: LocalID)] = []
        for (note, body) in bodies {
            for element in body.elementsWithOrigins() {
                guard let i = firstUnits[element.id] else { continue }
                guard case .insertText(let n, _, _, _) = ops[i].body, n == note else { return false }
                found.append((i, element.left, element.right))
                firstUnits[element.id] = nil
            }
        }
        guard firstUnits.isEmpty else { return false }
        setInsertOrigins(found)
        return true
    }
}
