import Testing
@_spi(Diagnostics) @testable import PeerNote

/// `DerivedOrigins`: the origins a list's structure gives, and the property a format storing the
/// structure relies on (any order, with derived origins integrated in the log's order, rebuilds
/// itself with nothing concurrent to scan).
@Suite("Derived origins")
struct DerivedOriginsTests {
    @Test("nearestEarlier finds the nearest smaller rank on each side")
    func nearestEarlierByHand() {
        let (left, right) = DerivedOrigins.nearestEarlier([3, 1, 4, 0, 2])
        #expect(left == [-1, -1, 1, -1, 3])
        #expect(right == [1, 3, 3, -1, -1])
        #expect(DerivedOrigins.nearestEarlier([]).left.isEmpty)
        // Increasing ranks (typing forwards): each element's left origin is the one before it.
        #expect(DerivedOrigins.nearestEarlier([0, 1, 2]) == ([-1, 0, 1], [-1, -1, -1]))
        // Decreasing (typing backwards): each element's right origin is the one after it.
        #expect(DerivedOrigins.nearestEarlier([2, 1, 0]) == ([-1, -1, -1], [1, 2, -1]))
    }

    /// Integrates the elements of `elements` (ids in list order; `rank` their places in the log)
    /// in rank order with derived origins, with no scan steps allowed; returns the indices into
    /// `elements` in the rebuilt list's order.
    static func rebuilt(ids: [LocalID], ranks: [Int]) throws -> [Int] {
        let derived = DerivedOrigins.nearestEarlier(ranks)
        var list = ListCRDT<Int>()
        var budget = 0
        for i in ranks.indices.sorted(by: { ranks[$0] < ranks[$1] }) {
            let left = derived.left[i] < 0 ? LocalID.none : ids[derived.left[i]]
            let right = derived.right[i] < 0 ? LocalID.none : ids[derived.right[i]]
            try list.integrate(id: ids[i], originLeft: left, originRight: right, elements: CollectionOfOne(i),
                               budget: &budget, replicaLess: { $0 < $1 })
        }
        var order: [Int] = []
        list.forEachElement { _, i, _ in order.append(i) }
        return order
    }

    @Test("Any order, its derived origins integrated in rank order, rebuilds itself without a scan", arguments: [1, 2, 3, 4])
    func anyOrderRebuildsItself(seed: UInt64) throws {
        var rng = SeededRandom(state: seed)
        for _ in 0 ..< 40 {
            let n = Int.random(in: 1 ... 300, using: &rng)
            // Ranks: a random permutation; ids: three replicas' counters in rank order.
            let ranks = Array(0 ..< n).shuffled(using: &rng)
            var counters = [UInt32](repeating: 0, count: 3)
            var idOfRank = [LocalID](repeating: .none, count: n)
            for r in 0 ..< n {
                let agent = Int.random(in: 0 ..< 3, using: &rng)
                idOfRank[r] = LocalID(agent: UInt32(agent), counter: counters[agent])
                counters[agent] += 1
            }
            let ids = ranks.map { idOfRank[$0] }
            #expect(try Self.rebuilt(ids: ids, ranks: ranks) == Array(0 ..< n))
        }
    }

    /// Each list of a loaded document rebuilt from its structure alone, as `rebuilt` does.
    static func expectListsRebuild(_ doc: Document) throws {
        let log = doc.log
        let state = doc.state
        var lists = [state.order.elementsWithOrigins()]
        for note in state.noteStates { lists.append(note.body.elementsWithOrigins()) }
        for elements in lists {
            let ranks = elements.map { log.lv(of: $0.id) ?? -1 }
            #expect(!ranks.contains(-1))
            #expect(try rebuilt(ids: elements.map(\.id), ranks: ranks) == Array(elements.indices))
        }
    }

    @Test("One writer's history: every origin follows from the structure", arguments: [5, 6, 7])
    func oneWriter(seed: UInt64) throws {
        var rng = SeededRandom(state: seed)
        let doc = Document(title: "Solo", author: "me")
        for _ in 0 ..< 300 { try ConvergenceTests().randomEdit(doc, &rng) }
        // Copies that take turns (each merges the other's work before editing) make no
        // concurrent changes either.
        let other = doc.fork(author: "other")
        for _ in 0 ..< 5 {
            for _ in 0 ..< 20 { try ConvergenceTests().randomEdit(other, &rng) }
            try doc.merge(other)
            for _ in 0 ..< 20 { try ConvergenceTests().randomEdit(doc, &rng) }
            try other.merge(doc)
        }
        let loaded = try Document.load(doc.save(.compact))
        let audit = loaded.originAudit()
        #expect(audit.bodies.elements > 0)
        #expect(audit.order.elements > 0)
        for a in [audit.order, audit.bodies] {
            #expect(a.leftExceptions == 0 && a.rightExceptions == 0 && a.runsWithExceptions == 0)
        }
        try Self.expectListsRebuild(loaded)
    }

    @Test("Two inserts made at one place on two copies: one origin does not follow, and is counted")
    func concurrentInsertsAtOnePlace() throws {
        let base = Document(title: "Two", author: "base")
        let note = base.addNote(title: "n", body: "ac")
        let p = base.fork(author: "p"), q = base.fork(author: "q")
        try p.insertText(note, at: 1, "x")
        try q.insertText(note, at: 1, "y")
        try p.merge(q)
        let loaded = try Document.load(p.save(.compact))
        let audit = loaded.originAudit()
        // Whichever of x and y is later in the log has the other between itself and an origin.
        #expect(audit.bodies.leftExceptions + audit.bodies.rightExceptions == 1)
        #expect(audit.bodies.runsWithExceptions == 1)
        #expect(audit.bodies.elements == 4)
        try Self.expectListsRebuild(loaded)
    }

    @Test("Concurrent random edits merged: the structure still rebuilds itself", arguments: [8, 9, 10])
    func concurrentHistories(seed: UInt64) throws {
        var rng = SeededRandom(state: seed)
        let origin = Document(title: "Shared", author: "r0")
        let replicas = (0 ..< 4).map { origin.fork(author: "r\($0)") }
        for _ in 0 ..< 8 {
            for doc in replicas {
                for _ in 0 ..< Int.random(in: 1 ... 6, using: &rng) { try ConvergenceTests().randomEdit(doc, &rng) }
            }
            let a = replicas[Int.random(in: 0 ..< replicas.count, using: &rng)]
            try a.merge(replicas[Int.random(in: 0 ..< replicas.count, using: &rng)])
        }
        for doc in replicas.dropFirst() { try replicas[0].merge(doc) }
        let loaded = try Document.load(replicas[0].save(.compact))
        try Self.expectListsRebuild(loaded)
        // Exceptions are only ever a part of the elements.
        let audit = loaded.originAudit()
        #expect(audit.bodies.leftExceptions <= audit.bodies.elements)
    }
}
