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
        var list = ListCRDT<Numbered>()
        var budget = 0
        for i in ranks.indices.sorted(by: { ranks[$0] < ranks[$1] }) {
            let left = derived.left[i] < 0 ? LocalID.none : ids[derived.left[i]]
            let right = derived.right[i] < 0 ? LocalID.none : ids[derived.right[i]]
            try list.integrate(id: ids[i], originLeft: left, originRight: right, elements: CollectionOfOne(Numbered(i)),
                               budget: &budget, replicaLess: { $0 < $1 })
        }
        var order: [Int] = []
        list.forEachElement { _, i, _ in order.append(i.value) }
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

    /// A history with no concurrent changes: one writer's `edits` random edits, then a second copy
    /// and the first taking `turns` turns (each merges the other's work before editing).
    static func oneWriterHistory(seed: UInt64, edits: Int, turns: Int) throws -> Document {
        var rng = SeededRandom(state: seed)
        let doc = Document(title: "Solo", author: "me")
        for _ in 0 ..< edits { try ConvergenceTests().randomEdit(doc, &rng) }
        let other = doc.fork(author: "other")
        for _ in 0 ..< turns {
            for _ in 0 ..< 20 { try ConvergenceTests().randomEdit(other, &rng) }
            try doc.merge(other)
            for _ in 0 ..< 20 { try ConvergenceTests().randomEdit(doc, &rng) }
            try other.merge(doc)
        }
        return doc
    }

    @Test("One writer's history: every origin follows from the structure", arguments: [5, 6, 7])
    func oneWriter(seed: UInt64) throws {
        let doc = try Self.oneWriterHistory(seed: seed, edits: 300, turns: 5)
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

    // MARK: Lists built from their structure

    /// `list`'s structure, elements and ranks (places in `log`), as a file storing the
    /// structure would give them.
    static func structure<E>(of list: ListCRDT<E>, _ log: OpLog) -> (runs: [StructureRun], elements: [E], ranks: [Int]) {
        var runs: [StructureRun] = [], elements: [E] = [], ranks: [Int] = []
        list.forEachRun { id, length, deleted, content in
            runs.append(StructureRun(id: id, length: length, deleted: deleted))
            elements.append(contentsOf: content)
            for k in 0 ..< length { ranks.append(log.lv(of: id.advanced(by: k)) ?? -1) }
        }
        return (runs, elements, ranks)
    }

    /// Whether two lists hold the same elements (id, value, deleted) in the same order.
    static func sameElements<E: Equatable>(_ a: ListCRDT<E>, _ b: ListCRDT<E>) -> Bool {
        var x: [LocalID] = [], y: [LocalID] = [], xv: [E] = [], yv: [E] = [], xd: [Bool] = [], yd: [Bool] = []
        a.forEachElement { x.append($0); xv.append($1); xd.append($2) }
        b.forEachElement { y.append($0); yv.append($1); yd.append($2) }
        return x == y && xv == yv && xd == yd
    }

    /// Whether two lists give every element the same origins.
    static func sameOrigins<E>(_ a: ListCRDT<E>, _ b: ListCRDT<E>) -> Bool {
        let x = a.elementsWithOrigins(), y = b.elementsWithOrigins()
        return x.count == y.count && zip(x, y).allSatisfy { p, q in p.id == q.id && p.left == q.left && p.right == q.right && p.deleted == q.deleted }
    }

    /// Builds every list of `doc` from its structure and checks it against the one replay
    /// built: the same elements in the same order; the same origins where `sameOrigins`; and,
    /// edited on in the same random ways, still the same list (the tree built at once holds
    /// its counts, parents and id index as inserting does).
    static func expectListsBuildFromStructure(_ doc: Document, sameOrigins: Bool, _ rng: inout SeededRandom) throws {
        let log = doc.log
        var bodies = doc.state.noteStates.map(\.body)
        bodies.append(contentsOf: bodies)   // twice: the second time edited on
        for (n, body) in bodies.enumerated() {
            var replayed = body
            let (runs, elements, ranks) = structure(of: replayed, log)
            #expect(!ranks.contains(-1))
            // A change-table run at a time, as a reader would find them.
            #expect(log.localVersions(of: runs, total: ranks.count) == ranks)
            var built = ListCRDT<Unicode.Scalar>(structure: runs, elements: elements, ranks: ranks)
            #expect(built.visibleCount == replayed.visibleCount && built.totalCount == replayed.totalCount)
            #expect(sameElements(built, replayed))
            if sameOrigins { #expect(Self.sameOrigins(built, replayed)) }
            guard n >= bodies.count / 2 else { continue }
            // Edited on: inserts at random places (from a new agent, as a merge brings them) and
            // deletes of random elements, the same on both.
            var counter: UInt32 = 0
            var budget = Int.max
            for _ in 0 ..< 60 {
                let visible = replayed.visibleCount
                if visible > 0 && Bool.random(using: &rng) {
                    let at = Int.random(in: 0 ..< visible, using: &rng)
                    guard let id = replayed.idOfVisible(at) else { Issue.record("no element at \(at)"); return }
                    let a = try replayed.delete(target: id, length: 1, reversed: false)
                    let b = try built.delete(target: id, length: 1, reversed: false)
                    #expect(a == b)
                } else {
                    let at = Int.random(in: 0 ... visible, using: &rng)
                    let (left, right) = replayed.originsForInsert(atVisible: at)
                    #expect(built.originsForInsert(atVisible: at) == (left, right))
                    let id = LocalID(agent: 9_999, counter: counter)
                    let text: [Unicode.Scalar] = Array(repeating: "+", count: Int.random(in: 1 ... 3, using: &rng))
                    counter += UInt32(text.count)
                    try replayed.integrate(id: id, originLeft: left, originRight: right, elements: text, budget: &budget, replicaLess: { $0 < $1 })
                    try built.integrate(id: id, originLeft: left, originRight: right, elements: text, budget: &budget, replicaLess: { $0 < $1 })
                }
                #expect(built.visibleCount == replayed.visibleCount && built.totalCount == replayed.totalCount)
            }
            #expect(sameElements(built, replayed))
            // Every visible element is found by its id, at the place it has.
            var ids: [LocalID] = []
            built.forEachVisible { id, _ in ids.append(id) }
            for (k, id) in ids.enumerated() { #expect(built.visibleIndex(of: id) == k) }
        }
    }

    @Test("A list built from its structure is the one replay built, and edits on the same", arguments: [11, 12, 13])
    func builtFromStructure(seed: UInt64) throws {
        var rng = SeededRandom(state: seed)
        // One writer (every origin follows), then concurrent copies merged (some may not).
        let doc = Document(title: "Solo", author: "me")
        for _ in 0 ..< 400 { try ConvergenceTests().randomEdit(doc, &rng) }
        let solo = try Document.load(doc.save(.compact))
        try Self.expectListsBuildFromStructure(solo, sameOrigins: true, &rng)

        let replicas = (0 ..< 3).map { doc.fork(author: "r\($0)") }
        for _ in 0 ..< 6 {
            for r in replicas {
                for _ in 0 ..< Int.random(in: 1 ... 8, using: &rng) { try ConvergenceTests().randomEdit(r, &rng) }
            }
            try replicas[Int.random(in: 0 ..< 3, using: &rng)].merge(replicas[Int.random(in: 0 ..< 3, using: &rng)])
        }
        for r in replicas.dropFirst() { try replicas[0].merge(r) }
        let merged = try Document.load(replicas[0].save(.compact))
        let audit = merged.originAudit()
        try Self.expectListsBuildFromStructure(merged, sameOrigins: audit.bodies.leftExceptions + audit.bodies.rightExceptions == 0, &rng)
    }

    @Test("A large list builds from its structure into a tree of many levels")
    func largeListFromStructure() throws {
        // 20,000 runs of one to three elements from two agents, alternating: many leaves and
        // three levels of inner nodes; ranks increase along the list (one writer typing on).
        var runs: [StructureRun] = []
        var counters: [UInt32] = [0, 0]
        var total = 0
        for k in 0 ..< 20_000 {
            let agent = k % 2, length = 1 + k % 3
            runs.append(StructureRun(id: LocalID(agent: UInt32(agent), counter: counters[agent]), length: length, deleted: k % 5 == 0))
            counters[agent] += UInt32(length) + 1
            total += length
        }
        let elements = Array(0 ..< total)
        let list = ListCRDT<Numbered>(structure: runs, elements: elements.map(Numbered.init), ranks: Array(0 ..< total))
        #expect(list.totalCount == total)
        #expect(list.visibleCount == runs.filter { !$0.deleted }.reduce(0) { $0 + $1.length })
        var seen: [Int] = []
        list.forEachElement { _, e, _ in seen.append(e.value) }
        #expect(seen == elements)
        // Every visible element is found by its id at its visible index.
        var v = 0
        for r in runs {
            for k in 0 ..< r.length where !r.deleted {
                #expect(list.visibleIndex(of: r.id.advanced(by: k)) == v)
                v += 1
            }
        }
    }

    @Test("Built from its structure a run at a time, every element gets the origins nearestEarlier gives it", arguments: [21, 22, 23, 24])
    func runLevelOriginsMatchElementLevel(seed: UInt64) {
        var rng = SeededRandom(state: seed)
        for _ in 0 ..< 60 {
            let n = Int.random(in: 1 ... 400, using: &rng)
            // Ranks: a permutation in which runs of rising ranks are common (typing), ids: two or
            // three agents' counters in rank order.
            var ranks: [Int] = []
            var pool = Array(0 ..< n).shuffled(using: &rng)
            while !pool.isEmpty {
                let take = min(pool.count, Int.random(in: 1 ... 12, using: &rng))
                ranks.append(contentsOf: pool.suffix(take).sorted())
                pool.removeLast(take)
            }
            let agents = Int.random(in: 1 ... 3, using: &rng)
            var agentOfRank = (0 ..< n).map { _ in UInt32.random(in: 0 ..< UInt32(agents), using: &rng) }
            // Runs of rising ranks mostly keep one agent, so that structure runs grow long.
            for r in 1 ..< max(n, 1) where Int.random(in: 0 ..< 4, using: &rng) > 0 { agentOfRank[r] = agentOfRank[r - 1] }
            var counters = [UInt32](repeating: 0, count: agents)
            var idOfRank = [LocalID](repeating: .none, count: n)
            for r in 0 ..< n {
                let a = Int(agentOfRank[r])
                idOfRank[r] = LocalID(agent: UInt32(a), counter: counters[a])
                counters[a] += 1
            }
            let ids = ranks.map { idOfRank[$0] }
            var structure: [StructureRun] = []
            for (k, id) in ids.enumerated() {
                let deleted = Int.random(in: 0 ..< 5, using: &rng) == 0
                if let last = structure.last, last.deleted == deleted, last.id.agent == id.agent,
                   Int(last.id.counter) + last.length == Int(id.counter), k > 0 {
                    structure[structure.count - 1].length += 1
                } else {
                    structure.append(StructureRun(id: id, length: 1, deleted: deleted))
                }
            }
            let list = ListCRDT<Numbered>(structure: structure, elements: (0 ..< n).map(Numbered.init), ranks: ranks)
            let (left, right) = DerivedOrigins.nearestEarlier(ranks)
            let got = list.elementsWithOrigins()
            #expect(got.map(\.id) == ids)
            #expect(got.map(\.left) == left.map { $0 < 0 ? LocalID.none : ids[$0] })
            #expect(got.map(\.right) == right.map { $0 < 0 ? LocalID.none : ids[$0] })
        }
    }
}
