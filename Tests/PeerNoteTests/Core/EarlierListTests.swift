import Testing
@testable import PeerNote

/// `ListCRDT.earlier(below:reviving:)`, the list as it stood before later elements were
/// inserted, and `IDSpans`, the sets of ids it takes.
@Suite("A list's earlier state, and sets of id spans")
struct EarlierListTests {
    /// Every element of `list` in list order: id, element, deleted.
    static func elements(_ list: ListCRDT<Unicode.Scalar>) -> [String] {
        var out: [String] = []
        list.forEachElement { id, e, deleted in out.append("\(id.agent).\(id.counter)=\(e)\(deleted ? "-" : "")") }
        return out
    }

    /// An insert at a random visible place, or a delete of a random element ever inserted.
    struct Edit {
        var insert: (id: LocalID, left: LocalID, right: LocalID, scalars: [Unicode.Scalar])?
        var delete: LocalID?
    }

    static func randomEdit(_ list: inout ListCRDT<Unicode.Scalar>, _ ref: inout ReferenceList<Unicode.Scalar>, counters: inout [UInt32],
                           ids: inout [LocalID], step: Int, wide: Bool = false, _ rng: inout SeededRandom) throws -> Edit {
        var budget = Int.max
        let less: (UInt32, UInt32) -> Bool = { $0 < $1 }
        if !ids.isEmpty && rng.next() % 4 == 0 {
            let victim = ids[Int(rng.next() % UInt64(ids.count))]
            try list.delete(target: victim, length: 1, reversed: false)
            try ref.delete(target: victim, length: 1, reversed: false)
            return Edit(delete: victim)
        }
        let agent = UInt32(rng.next() % 3), length = Int(rng.next() % 3) + 1
        let (left, right) = ref.originsForInsert(atVisible: Int(rng.next() % UInt64(ref.visibleCount + 1)))
        let id = LocalID(agent: agent, counter: counters[Int(agent)])
        counters[Int(agent)] += UInt32(length)
        // With `wide`, some scalars past U+00FF (the arena then stores four bytes a scalar).
        let scalars = (0 ..< length).map { k -> Unicode.Scalar in wide && (step + k) % 7 == 0 ? "語" : Unicode.Scalar(UInt8(97 + (step + k) % 26)) }
        try list.integrate(id: id, originLeft: left, originRight: right, elements: scalars, budget: &budget, replicaLess: less)
        try ref.integrate(id: id, originLeft: left, originRight: right, elements: scalars, replicaLess: less)
        for k in 0 ..< length { ids.append(id.advanced(by: k)) }
        return Edit(insert: (id, left, right, scalars))
    }

    @Test("The earlier state is the list the earlier edits made, and the later edits on it give the same list again", arguments: [1, 2, 3, 4, 5, 6] as [UInt64])
    func earlierStateAndReplay(seed: UInt64) throws {
        var rng = SeededRandom(state: 0xEA_0000 + seed)
        var list = ListCRDT<Unicode.Scalar>(), ref = ReferenceList<Unicode.Scalar>()
        var counters: [UInt32] = [0, 0, 0], ids: [LocalID] = []
        let earlierSteps = Int(rng.next() % 200) + 20
        let wide = seed % 2 == 0
        for step in 0 ..< earlierSteps { _ = try Self.randomEdit(&list, &ref, counters: &counters, ids: &ids, step: step, wide: wide, &rng) }
        let before = list, limits = counters, earlierIDs = Set(ids)
        var deletedEarlier = Set<LocalID>()
        before.forEachElement { id, _, deleted in if deleted { deletedEarlier.insert(id) } }
        // Later edits: inserts anywhere (splitting earlier runs), deletes of earlier and later elements.
        var later: [Edit] = []
        for step in earlierSteps ..< earlierSteps + 150 { later.append(try Self.randomEdit(&list, &ref, counters: &counters, ids: &ids, step: step, wide: wide, &rng)) }
        var revived = IDSpans()
        for e in later {
            if let d = e.delete, earlierIDs.contains(d), !deletedEarlier.contains(d) { revived.insert(agent: d.agent, d.counter ..< d.counter + 1) }
        }
        revived.normalize()
        var earlier = list.earlier(below: limits, reviving: revived)
        #expect(Self.elements(earlier) == Self.elements(before), "seed \(seed)")
        // Its arena holds the kept elements only (merge after merge, it does not grow).
        #expect(earlier.arenaCount == earlier.totalCount && earlier.totalCount == before.totalCount)
        #expect(earlier.visibleElements == before.visibleElements)
        // The later edits again, on the earlier state: the same list as the one that had them.
        var budget = Int.max
        for e in later {
            if let i = e.insert {
                try earlier.integrate(id: i.id, originLeft: i.left, originRight: i.right, elements: i.scalars, budget: &budget, replicaLess: { $0 < $1 })
            }
            if let d = e.delete { try earlier.delete(target: d, length: 1, reversed: false) }
        }
        #expect(Self.elements(earlier) == Self.elements(list), "seed \(seed)")
    }

    @Test("Limits past the list's agents keep everything; a limit of zero keeps none of that agent's elements")
    func limitsAtTheEdges() throws {
        var rng = SeededRandom(state: 0xEA_1000)
        var list = ListCRDT<Unicode.Scalar>(), ref = ReferenceList<Unicode.Scalar>()
        var counters: [UInt32] = [0, 0, 0], ids: [LocalID] = []
        for step in 0 ..< 120 { _ = try Self.randomEdit(&list, &ref, counters: &counters, ids: &ids, step: step, &rng) }
        #expect(Self.elements(list.earlier(below: [], reviving: IDSpans())) == Self.elements(list))
        let withoutAgent1 = Self.elements(list).filter { !$0.hasPrefix("1.") }
        #expect(Self.elements(list.earlier(below: [.max, 0, .max], reviving: IDSpans())) == withoutAgent1)
    }

    @Test("Id spans agree with a set of ids: inserts in any order, overlaps, differences", arguments: [1, 2, 3, 4] as [UInt64])
    func idSpansAgreeWithASet(seed: UInt64) {
        var rng = SeededRandom(state: 0x5_9A45 + seed)
        func randomSet() -> (IDSpans, Set<LocalID>) {
            var spans = IDSpans(), set = Set<LocalID>()
            for _ in 0 ..< Int(rng.next() % 40) {
                let agent = UInt32(rng.next() % 3), low = UInt32(rng.next() % 100), length = UInt32(rng.next() % 6)
                spans.insert(agent: agent, low ..< low + length)
                for c in low ..< low + length { set.insert(LocalID(agent: agent, counter: c)) }
            }
            spans.normalize()
            return (spans, set)
        }
        func members(_ s: IDSpans) -> Set<LocalID> {
            var out = Set<LocalID>()
            for a in 0 ..< 3 as Range<UInt32> {
                for c in 0 ..< 120 as Range<UInt32> where s.overlaps(agent: a, c ..< c + 1) { out.insert(LocalID(agent: a, counter: c)) }
            }
            return out
        }
        for _ in 0 ..< 50 {
            let (a, setA) = randomSet(), (b, setB) = randomSet()
            #expect(members(a) == setA)
            #expect(a.isEmpty == setA.isEmpty)
            #expect(members(a.subtracting(b)) == setA.subtracting(setB))
            let agent = UInt32(rng.next() % 3), low = UInt32(rng.next() % 100), length = UInt32(rng.next() % 8)
            let overlaps = (low ..< low + length).contains { setA.contains(LocalID(agent: agent, counter: $0)) }
            #expect(a.overlaps(agent: agent, low ..< low + length) == overlaps)
        }
    }
}
