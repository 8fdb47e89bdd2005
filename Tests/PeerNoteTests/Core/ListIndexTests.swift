import Testing
@testable import PeerNote

/// The id lookup of `ListTree`: a tree of one leaf keeps no index and scans its leaf; the
/// index is built when that leaf first splits. Every id is found, and no other, on either side
/// of that moment.
@Suite("List id lookup, one leaf and after its first split")
struct ListIndexTests {
    @Test("Every inserted id is found where the reference list has it, before and after the first split", arguments: [11, 12, 13])
    func lookupsAcrossFirstSplit(seed: UInt64) throws {
        var rng = SeededRandom(state: seed)
        var list = ListCRDT<Unicode.Scalar>()
        var ref = ReferenceList<Unicode.Scalar>()
        var counters: [UInt32] = [0, 0, 0]
        let less: (UInt32, UInt32) -> Bool = { $0 < $1 }
        var ids: [LocalID] = []
        var budget = Int.max
        var checkedRuns = Set<Int>()
        // Each insert at a random place is a run of its own (and splits the one it lands in), so
        // the first leaf (64 runs) splits after a few dozen steps; an agent's runs lie out of
        // counter order in the list.
        for step in 0 ..< 160 {
            let agent = UInt32(rng.next() % 3)
            let length = Int(rng.next() % 3) + 1
            let (left, right) = ref.originsForInsert(atVisible: Int(rng.next() % UInt64(ref.visibleCount + 1)))
            let id = LocalID(agent: agent, counter: counters[Int(agent)])
            counters[Int(agent)] += UInt32(length)
            let scalars = (0 ..< length).map { k in Unicode.Scalar(UInt8(97 + (step + k) % 26)) }
            try list.integrate(id: id, originLeft: left, originRight: right, elements: scalars, budget: &budget, replicaLess: less)
            try ref.integrate(id: id, originLeft: left, originRight: right, elements: scalars, replicaLess: less)
            for k in 0 ..< length { ids.append(id.advanced(by: k)) }
            if step % 7 == 0, let victim = ids.randomElement(using: &rng), ref.isDeleted(victim) == false {
                try list.delete(target: victim, length: 1, reversed: false)
                try ref.delete(target: victim, length: 1, reversed: false)
            }
            var runs = 0
            list.forEachRun { _, _, _, _ in runs += 1 }
            checkedRuns.insert(runs / 32)
            for x in ids {
                #expect(list.contains(x), "seed \(seed) step \(step): \(x) not found")
                #expect(list.isDeleted(x) == ref.isDeleted(x), "seed \(seed) step \(step): \(x)")
                #expect(list.visibleIndex(of: x) == ref.visibleIndex(of: x), "seed \(seed) step \(step): \(x)")
            }
            for a in 0 ..< 4 {
                let next = LocalID(agent: UInt32(a), counter: a < 3 ? counters[a] : 0)
                #expect(!list.contains(next), "seed \(seed) step \(step): \(next) was never inserted")
            }
        }
        var listAll: [LocalID] = [], refAll: [LocalID] = []
        list.forEachElement { id, _, _ in listAll.append(id) }
        ref.forEachElement { id, _, _ in refAll.append(id) }
        #expect(listAll == refAll)
        // The runs went from well under one leaf's 64 to several leaves' worth.
        #expect(checkedRuns.contains(0) && checkedRuns.contains(1) && checkedRuns.contains { $0 >= 3 }, "\(checkedRuns.sorted())")
    }

    @Test("A list built by appending fills its leaves, each in an array of its size; splits in the middle keep arrays of their size too")
    func appendedListFillsLeaves() throws {
        var list = ListCRDT<Unicode.Scalar>()
        var ref = ReferenceList<Unicode.Scalar>()
        let less: (UInt32, UInt32) -> Bool = { $0 < $1 }
        var budget = Int.max
        var previous = LocalID.none
        // Two agents in turn: no run continues the one before it, so each insert is a run.
        for k in 0 ..< 1_000 {
            let id = LocalID(agent: UInt32(k % 2), counter: UInt32(k / 2))
            let scalar: [Unicode.Scalar] = [Unicode.Scalar(UInt8(97 + k % 26))]
            try list.integrate(id: id, originLeft: previous, originRight: .none, elements: scalar, budget: &budget, replicaLess: less)
            try ref.integrate(id: id, originLeft: previous, originRight: .none, elements: scalar, replicaLess: less)
            previous = id
        }
        let fill = list.leafFill
        #expect(fill.count == 16, "1,000 runs in leaves of 64")
        #expect(fill.dropLast().allSatisfy { $0.runs == ListTree<Unicode.Scalar>.leafCapacity }, "\(fill.map(\.runs))")
        #expect(fill.allSatisfy { $0.capacity < 2 * max($0.runs, 1) }, "\(fill)")
        // Inserts in the middle of a full leaf split it in halves, and the lookups still agree.
        var rng = SeededRandom(state: 5)
        var ids: [LocalID] = []
        ref.forEachElement { id, _, _ in ids.append(id) }
        for k in 0 ..< 300 {
            let (left, right) = ref.originsForInsert(atVisible: Int(rng.next() % UInt64(ref.visibleCount + 1)))
            let id = LocalID(agent: 2, counter: UInt32(k))
            try list.integrate(id: id, originLeft: left, originRight: right, elements: ["x"], budget: &budget, replicaLess: less)
            try ref.integrate(id: id, originLeft: left, originRight: right, elements: ["x"], replicaLess: less)
            ids.append(id)
        }
        #expect(list.leafFill.count > 16 && list.leafFill.allSatisfy { $0.capacity < 2 * max($0.runs, 1) + 4 }, "\(list.leafFill)")
        var listAll: [LocalID] = [], refAll: [LocalID] = []
        list.forEachElement { id, _, _ in listAll.append(id) }
        ref.forEachElement { id, _, _ in refAll.append(id) }
        #expect(listAll == refAll)
        for x in ids { #expect(list.visibleIndex(of: x) == ref.visibleIndex(of: x), "\(x)") }
    }
}
