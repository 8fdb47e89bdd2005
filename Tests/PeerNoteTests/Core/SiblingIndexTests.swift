import Foundation
import Testing
@testable import PeerNote

/// peernote(5)'s integration loop ("The list CRDT"), transcribed line by line over a plain
/// array of elements, one unit at a time: the oracle for `ListCRDT.integrate`, which finds the
/// same place through its sibling index. O(n) per step of the scan; for small lists only.
struct SpecList {
    private(set) var ids: [LocalID] = []
    private var lefts: [LocalID] = []
    private var rights: [LocalID] = []
    private var index: [LocalID: Int] = [:]

    func position(of id: LocalID) -> Int? { index[id] }

    /// Inserts the units `id`, `id + 1`, ... (`length` of them) with origins `originLeft` (of
    /// the first; each later one's is the unit before it) and `originRight`.
    mutating func integrate(id: LocalID, length: Int, originLeft: LocalID, originRight: LocalID, replicaLess: (UInt32, UInt32) -> Bool) {
        for k in 0 ..< length {
            integrateUnit(id.advanced(by: k), k == 0 ? originLeft : id.advanced(by: k - 1), originRight, replicaLess)
        }
    }

    private mutating func integrateUnit(_ x: LocalID, _ l: LocalID, _ r: LocalID, _ replicaLess: (UInt32, UInt32) -> Bool) {
        let n = ids.count
        func pos(_ e: LocalID, none: Int) -> Int { e.isNone ? none : index[e]! }
        let left = pos(l, none: -1)
        let right = pos(r, none: n)
        var dest = left + 1
        var scanning = false
        var i = left + 1
        while true {
            if !scanning { dest = i }
            if i == n || i == right { break }
            let oleft = pos(lefts[i], none: -1)
            let oright = pos(rights[i], none: n)
            if oleft < left { break }
            if oleft == left {
                if oright < right {
                    scanning = true
                } else if oright == right {
                    if replicaLess(x.agent, ids[i].agent) { break }
                    scanning = false
                } else {
                    scanning = false
                }
            }
            i += 1
        }
        ids.insert(x, at: dest)
        lefts.insert(l, at: dest)
        rights.insert(r, at: dest)
        for j in dest ..< ids.count { index[ids[j]] = j }
    }
}

extension ListCRDT where Element == LocalID {
    /// Every element's id, tombstones included, in list order.
    var allIDs: [LocalID] {
        var out: [LocalID] = []
        forEachElement { id, _, _ in out.append(id) }
        return out
    }
}

@Suite("List CRDT: sibling index")
struct SiblingIndexTests {
    /// How a random history picks the origins of an insert.
    enum Origins: CaseIterable {
        /// As an honest writer does: adjacent in the copy of the replica inserting, which has
        /// seen a prefix of what was integrated so far (so its inserts are concurrent with the rest).
        case honest
        /// Any element or none for each origin, in any order: what a crafted file may hold.
        case arbitrary
        /// Mostly at one of a few places, from replicas that saw little: many siblings.
        case crowded
        /// Mostly right before the replica's own previous insert (typing backwards, the cursor
        /// kept in front of what it types), else at one of a few places.
        case backwards
        /// Mostly right before another replica's latest insert as this one knows it (in front of
        /// a chain typed backwards, each replica having seen a different prefix of it), or right
        /// before its own previous one (typing backwards), else at one of a few places.
        case chains
    }

    /// One insert of a generated history: `length` units from `id`, its origins, and its
    /// Lamport timestamp (for the canonical order).
    struct Insert {
        var id: LocalID
        var length: Int
        var left: LocalID
        var right: LocalID
        var lamport: Int
    }

    /// A random history of `replicas` replicas making `inserts` inserts of 1 to 3 units, with
    /// origins chosen as `mode` says, in the order they were made (a causal order). Each replica
    /// knows its own inserts and what it took in from another at random syncs.
    static func history(seed: UInt64, mode: Origins, replicas: Int, inserts: Int) -> [Insert] {
        var rng = SeededRandom(state: seed)
        var all = SpecList()
        var known = [Set<LocalID>](repeating: [], count: replicas)
        var clock = [Int](repeating: 0, count: replicas)
        var counters = [UInt32](repeating: 0, count: replicas)
        let hot = (0 ..< 3).map { _ in Int.random(in: 0 ..< 4, using: &rng) }
        var out: [Insert] = []
        var lamport: [LocalID: Int] = [:]
        var lastOwn = [LocalID?](repeating: nil, count: replicas)
        for _ in 0 ..< inserts {
            let r = Int.random(in: 0 ..< replicas, using: &rng)
            if Int.random(in: 0 ..< (mode == .crowded ? 12 : 4), using: &rng) == 0 {
                let other = Int.random(in: 0 ..< replicas, using: &rng)
                known[r].formUnion(known[other])
                clock[r] = max(clock[r], clock[other])
            }
            let view = all.ids.filter { known[r].contains($0) }
            var left = LocalID.none, right = LocalID.none
            switch mode {
            case .honest, .crowded, .backwards, .chains:
                let at: Int
                let roll = Int.random(in: 0 ..< 5, using: &rng)
                let q = mode == .chains && roll < 2 ? Int.random(in: 0 ..< replicas, using: &rng) : r
                if mode == .chains, roll < 4, let k = view.indices.filter({ view[$0].agent == UInt32(q) }).max(by: { view[$0].counter < view[$1].counter }) {
                    at = k
                } else if mode == .backwards, Int.random(in: 0 ..< 5, using: &rng) > 0, let own = lastOwn[r], let k = view.firstIndex(of: own) {
                    at = k
                } else if mode != .honest && Int.random(in: 0 ..< 5, using: &rng) > 0 {
                    at = min(hot[Int.random(in: 0 ..< hot.count, using: &rng)], view.count)
                } else {
                    at = Int.random(in: 0 ... view.count, using: &rng)
                }
                left = at == 0 ? .none : view[at - 1]
                right = at == view.count ? .none : view[at]
            case .arbitrary:
                if !all.ids.isEmpty && Bool.random(using: &rng) { left = all.ids.randomElement(using: &rng)! }
                if !all.ids.isEmpty && Bool.random(using: &rng) { right = all.ids.randomElement(using: &rng)! }
            }
            let length = Int.random(in: 1 ... 3, using: &rng)
            let id = LocalID(agent: UInt32(r), counter: counters[r])
            lastOwn[r] = id
            counters[r] += UInt32(length)
            // Origins the replica did not know (arbitrary ones) still come first in Lamport order.
            clock[r] = max(clock[r], lamport[left] ?? 0, lamport[right] ?? 0) + 1
            for k in 0 ..< length { lamport[id.advanced(by: k)] = clock[r] + k }
            out.append(Insert(id: id, length: length, left: left, right: right, lamport: clock[r]))
            clock[r] += length - 1
            all.integrate(id: id, length: length, originLeft: left, originRight: right, replicaLess: { $0 < $1 })
            for k in 0 ..< length { known[r].insert(id.advanced(by: k)) }
        }
        return out
    }

    /// Integrates `inserts` in order into a `ListCRDT` and into `SpecList` (replica ids ordered
    /// by a random permutation of the agents), deleting a random element now and then (deletes
    /// cut runs, and the index must follow); false, recording an issue, as soon as the two
    /// hold different elements or orders. `used` is the work the list's integration took.
    @discardableResult
    static func compare(_ inserts: [Insert], seed: UInt64, rank: [Int], label: String, used: inout Int) throws -> Bool {
        var rng = SeededRandom(state: seed &+ 1000)
        let less: (UInt32, UInt32) -> Bool = { rank[Int($0)] < rank[Int($1)] }
        var list = ListCRDT<LocalID>()
        var spec = SpecList()
        var budget = Int.max
        for (step, x) in inserts.enumerated() {
            try list.integrate(id: x.id, originLeft: x.left, originRight: x.right, elements: (0 ..< x.length).map { x.id.advanced(by: $0) },
                               budget: &budget, replicaLess: less)
            spec.integrate(id: x.id, length: x.length, originLeft: x.left, originRight: x.right, replicaLess: less)
            if Int.random(in: 0 ..< 3, using: &rng) == 0, let victim = spec.ids.randomElement(using: &rng) {
                try list.delete(target: victim, length: 1, reversed: false)
            }
            guard list.allIDs == spec.ids else {
                Issue.record("\(label), seed \(seed), insert \(step): the list and peernote(5)'s loop differ")
                return false
            }
        }
        used = Int.max - budget
        return true
    }

    /// `history` integrated in the order it was made and in the canonical order (Lamport
    /// timestamp, then replica), each compared with peernote(5)'s loop.
    static func check(seed: UInt64, mode: Origins, replicas: Int, inserts: Int) throws {
        let made = history(seed: seed, mode: mode, replicas: replicas, inserts: inserts)
        var rng = SeededRandom(state: seed &+ 2000)
        let rank = Array(0 ..< replicas).shuffled(using: &rng)
        var used = 0
        try compare(made, seed: seed, rank: rank, label: "\(mode), as made", used: &used)
        let canonical = made.sorted { ($0.lamport, rank[Int($0.id.agent)]) < ($1.lamport, rank[Int($1.id.agent)]) }
        try compare(canonical, seed: seed, rank: rank, label: "\(mode), canonical order", used: &used)
    }

    @Test("Integration through the sibling index gives peernote(5)'s order for honest histories", arguments: 1 ... 40)
    func honestHistories(seed: UInt64) throws {
        try Self.check(seed: seed, mode: .honest, replicas: 2 + Int(seed % 30), inserts: 300)
    }

    @Test("Integration gives peernote(5)'s order for crowded places (many siblings with shared origins)", arguments: 1 ... 40)
    func crowdedHistories(seed: UInt64) throws {
        try Self.check(seed: seed, mode: .crowded, replicas: 2 + Int(seed % 60), inserts: 300)
    }

    @Test("Integration gives peernote(5)'s order for replicas typing backwards, each before its own previous insert", arguments: 1 ... 40)
    func backwardsHistories(seed: UInt64) throws {
        try Self.check(seed: seed, mode: .backwards, replicas: 2 + Int(seed % 12), inserts: 300)
    }

    @Test("Integration gives peernote(5)'s order for inserts in front of chains typed backwards", arguments: 1 ... 40)
    func chainHistories(seed: UInt64) throws {
        try Self.check(seed: seed, mode: .chains, replicas: 2 + Int(seed % 16), inserts: 300)
    }

    @Test("Integration gives peernote(5)'s order for arbitrary origins", arguments: 1 ... 40)
    func arbitraryHistories(seed: UInt64) throws {
        try Self.check(seed: seed, mode: .arbitrary, replicas: 2 + Int(seed % 20), inserts: 200)
    }
}

@Suite("List CRDT: concurrent inserts at one place")
struct SamePlaceTests {
    /// `n` replicas each insert one element between the two elements of "ab" (the same
    /// origins), integrated in ascending order of replica (the canonical order of such a
    /// history) or descending; returns the list's elements, the work integration took, and how
    /// many times its id index was copied (`ListTree.sharedIndexCopies`).
    static func samePlace(_ n: Int, ascending: Bool) throws -> (ids: [LocalID], work: Int, indexCopies: Int) {
        var list = ListCRDT<LocalID>()
        var budget = Int.max
        let less: (UInt32, UInt32) -> Bool = { $0 < $1 }
        let a = LocalID(agent: 0, counter: 0), b = LocalID(agent: 0, counter: 1)
        try list.integrate(id: a, originLeft: .none, originRight: .none, elements: [a, b], budget: &budget, replicaLess: less)
        for k in 0 ..< n {
            let x = LocalID(agent: UInt32(ascending ? k + 1 : n - k), counter: 0)
            try list.integrate(id: x, originLeft: a, originRight: b, elements: [x], budget: &budget, replicaLess: less)
        }
        return (list.allIDs, Int.max - budget, list.sharedIndexCopies)
    }

    @Test("Siblings with the same origins are integrated in a bounded number of steps each, in either order")
    func boundedWork() throws {
        let n = 4000
        let expected = [LocalID(agent: 0, counter: 0)] + (1 ... n).map { LocalID(agent: UInt32($0), counter: 0) } + [LocalID(agent: 0, counter: 1)]
        for ascending in [true, false] {
            let (ids, work, indexCopies) = try Self.samePlace(n, ascending: ascending)
            #expect(ids == expected, "siblings in replica order between their origins")
            // The scan of peernote(5) takes n(n-1)/2 steps in ascending order; the index a few a sibling.
            #expect(work <= 4 * n, "ascending \(ascending): \(work) steps for \(n) siblings")
            // A step must not copy the id index (one entry list per replica, so O(n) a copy):
            // integration that looked an id up while holding a copy of its tree did so, and n
            // replicas at one place then took quadratic time in steps that each count one.
            #expect(indexCopies == 0, "ascending \(ascending): the id index was copied \(indexCopies) times")
        }
    }

    @Test("Siblings at one place, mixed with their children, match peernote(5)'s loop in the canonical order")
    func siblingsWithChildren() throws {
        // Replicas insert at one place, then each types on after its own element (children of
        // siblings, which the scan of a later sibling must skip), then more siblings arrive.
        var inserts: [SiblingIndexTests.Insert] = []
        let a = LocalID(agent: 0, counter: 0), b = LocalID(agent: 0, counter: 1)
        inserts.append(.init(id: a, length: 2, left: .none, right: .none, lamport: 1))
        for r in 1 ... 60 {
            let x = LocalID(agent: UInt32(r), counter: 0)
            inserts.append(.init(id: x, length: 1, left: a, right: b, lamport: 3))
            if r % 3 == 0 { inserts.append(.init(id: x.advanced(by: 1), length: 2, left: x, right: b, lamport: 4)) }
            if r % 7 == 0 { inserts.append(.init(id: x.advanced(by: 3), length: 1, left: a, right: x, lamport: 5)) }
        }
        var used = 0
        let rank = Array(0 ... 60)
        let canonical = inserts.sorted { ($0.lamport, $0.id.agent) < ($1.lamport, $1.id.agent) }
        #expect(try SiblingIndexTests.compare(canonical, seed: 7, rank: rank, label: "siblings with children", used: &used))
        #expect(try SiblingIndexTests.compare(inserts, seed: 7, rank: rank.reversed(), label: "siblings with children, reversed ids", used: &used))
    }

    /// `devices` replicas each typing `perDevice` characters backwards between the two elements
    /// of "ab", one insert each, each before the device's previous one; in the order made
    /// (device by device) with the Lamport timestamps a device's chain gives.
    static func typingBackwards(devices: Int, perDevice: Int) -> [SiblingIndexTests.Insert] {
        let a = LocalID(agent: 0, counter: 0), b = LocalID(agent: 0, counter: 1)
        var inserts: [SiblingIndexTests.Insert] = [.init(id: a, length: 2, left: .none, right: .none, lamport: 1)]
        for d in 1 ... devices {
            var right = b
            for k in 0 ..< perDevice {
                let x = LocalID(agent: UInt32(d), counter: UInt32(k))
                inserts.append(.init(id: x, length: 1, left: a, right: right, lamport: 3 + k))
                right = x
            }
        }
        return inserts
    }

    @Test("Devices typing backwards at one place match peernote(5)'s loop, in the order made and the canonical order")
    func typingBackwardsMatchesSpec() throws {
        var rng = SeededRandom(state: 4747)
        for (devices, perDevice) in [(1, 40), (2, 30), (3, 25), (5, 12), (9, 7), (30, 3)] {
            let made = Self.typingBackwards(devices: devices, perDevice: perDevice)
            for _ in 0 ..< 3 {
                let rank = [0] + Array(1 ... devices).shuffled(using: &rng)
                let canonical = made.sorted { ($0.lamport, rank[Int($0.id.agent)]) < ($1.lamport, rank[Int($1.id.agent)]) }
                var used = 0
                #expect(try SiblingIndexTests.compare(made, seed: 1, rank: rank, label: "\(devices) typing backwards, as made", used: &used))
                #expect(try SiblingIndexTests.compare(canonical, seed: 2, rank: rank, label: "\(devices) typing backwards, canonical", used: &used))
            }
        }
    }

    /// One device (replica `m + 1`) typing `m` characters backwards between the two elements of
    /// "ab", one insert each, and `m` others, the k-th having seen the first k of them, each
    /// inserting one character at the cursor it saw (right before the k-th); in the order made
    /// (the typing first), with the Lamport timestamps their pasts give.
    static func chainSkipping(_ m: Int) -> [SiblingIndexTests.Insert] {
        let a = LocalID(agent: 0, counter: 0), b = LocalID(agent: 0, counter: 1)
        var inserts: [SiblingIndexTests.Insert] = [.init(id: a, length: 2, left: .none, right: .none, lamport: 1)]
        var typed: [LocalID] = []
        var right = b
        for k in 0 ..< m {
            let x = LocalID(agent: UInt32(m + 1), counter: UInt32(k))
            inserts.append(.init(id: x, length: 1, left: a, right: right, lamport: 3 + k))
            typed.append(x)
            right = x
        }
        for k in 0 ..< m {
            inserts.append(.init(id: LocalID(agent: UInt32(k + 1), counter: 0), length: 1, left: a, right: typed[k], lamport: 4 + k))
        }
        return inserts
    }

    @Test("Inserts in front of different prefixes of a chain typed backwards match peernote(5)'s loop, in the order made and the canonical order")
    func chainSkippingMatchesSpec() throws {
        var rng = SeededRandom(state: 4748)
        for m in [1, 2, 3, 5, 8, 13, 40, 90] {
            let made = Self.chainSkipping(m)
            // The typing device's id sorting after the others' (the costly case), and at random.
            let ranks = [Array(0 ... m + 1)] + (0 ..< 3).map { _ in [0] + Array(1 ... m + 1).shuffled(using: &rng) }
            for rank in ranks {
                let canonical = made.sorted { ($0.lamport, rank[Int($0.id.agent)]) < ($1.lamport, rank[Int($1.id.agent)]) }
                var used = 0
                #expect(try SiblingIndexTests.compare(made, seed: 3, rank: rank, label: "chain of \(m), as made", used: &used))
                #expect(try SiblingIndexTests.compare(canonical, seed: 4, rank: rank, label: "chain of \(m), canonical", used: &used))
                #expect(try SiblingIndexTests.compare(made.reversed().sorted { $0.lamport < $1.lamport }, seed: 5, rank: rank,
                                                      label: "chain of \(m), by Lamport timestamp", used: &used))
            }
        }
    }

    @Test("Inserts in front of different prefixes of a chain typed backwards are integrated in a bounded number of steps each, in either order")
    func chainSkippingBoundedWork() throws {
        let m = 4_000
        let made = Self.chainSkipping(m)
        let canonical = made.sorted { ($0.lamport, $0.id.agent) < ($1.lamport, $1.id.agent) }
        var results: [[LocalID]] = []
        for (label, order) in [("as made", made), ("canonical", canonical)] {
            var list = ListCRDT<LocalID>()
            var budget = Int.max
            for x in order {
                try list.integrate(id: x.id, originLeft: x.left, originRight: x.right, elements: (0 ..< x.length).map { x.id.advanced(by: $0) },
                                   budget: &budget, replicaLess: { $0 < $1 })
            }
            let work = Int.max - budget
            results.append(list.allIDs)
            // Skipping the chain a right origin at a time took m²/2 steps in the order made
            // (each insert skipped the characters typed after the one it saw); now a few each.
            #expect(work <= 4 * 2 * m, "\(label): \(work) steps for \(2 * m) inserts")
            #expect(list.sharedIndexCopies == 0, "\(label)")
        }
        #expect(results[0] == results[1], "the order made and the canonical order give one list")
        #expect(results[0].count == 2 * m + 2)
    }

    @Test("Looking ids up after inserts in front of a chain typed backwards walks a bounded number of leaves each")
    func chainSkippingBoundedIndexWalk() throws {
        let m = 4_000
        let made = Self.chainSkipping(m)
        let canonical = made.sorted { ($0.lamport, $0.id.agent) < ($1.lamport, $1.id.agent) }
        for (label, order) in [("as made", made), ("canonical", canonical)] {
            var list = ListCRDT<LocalID>()
            var budget = Int.max
            for x in order {
                try list.integrate(id: x.id, originLeft: x.left, originRight: x.right, elements: (0 ..< x.length).map { x.id.advanced(by: $0) },
                                   budget: &budget, replicaLess: { $0 < $1 })
            }
            // Each insert goes in front of the chain, so the chain's characters move right across
            // many leaf splits; an id index that remembered only the leaf an id was first put in
            // walked from there, past every leaf split off since, at each lookup.
            #expect(list.indexWalkLeaves <= 2 * order.count, "\(label): \(list.indexWalkLeaves) leaves walked for \(order.count) inserts")
            #expect(list.sharedIndexCopies == 0, "\(label)")
        }
    }

    @Test("Looking ids up in a run split by many inserts walks a bounded number of leaves each")
    func splitRunBoundedIndexWalk() throws {
        // One replica types a run of m characters; m others each insert three characters
        // between two neighbours of that run, in a random order; then m more insert in front of
        // random characters of the run. The run is split into m pieces, far apart in the end.
        let m = 3_000
        var rng = SeededRandom(state: 4749)
        var list = ListCRDT<LocalID>()
        var budget = Int.max
        let typed = LocalID(agent: 0, counter: 0)
        let chars = (0 ..< m).map { typed.advanced(by: $0) }
        try list.integrate(id: typed, originLeft: .none, originRight: .none, elements: chars, budget: &budget, replicaLess: { $0 < $1 })
        var lookups = 0
        for k in (0 ..< m - 1).shuffled(using: &rng) {
            let x = LocalID(agent: UInt32(k + 1), counter: 0)
            try list.integrate(id: x, originLeft: chars[k], originRight: chars[k + 1], elements: (0 ..< 3).map { x.advanced(by: $0) },
                               budget: &budget, replicaLess: { $0 < $1 })
            lookups += 2
        }
        for k in 0 ..< m {
            let at = Int.random(in: 1 ..< m, using: &rng)
            let x = LocalID(agent: UInt32(m + k), counter: 0)
            let left = LocalID(agent: UInt32(at), counter: 2)
            try list.integrate(id: x, originLeft: left, originRight: chars[at], elements: [x], budget: &budget, replicaLess: { $0 < $1 })
            lookups += 2
        }
        #expect(list.totalCount == m + 3 * (m - 1) + m)
        #expect(list.indexWalkLeaves <= 2 * lookups, "\(list.indexWalkLeaves) leaves walked for \(lookups) lookups")
        #expect(list.sharedIndexCopies == 0)
    }

    @Test("Devices typing backwards at one place are integrated in a bounded number of steps each, in either order")
    func typingBackwardsBoundedWork() throws {
        let devices = 8, perDevice = 500
        let made = Self.typingBackwards(devices: devices, perDevice: perDevice)
        let canonical = made.sorted { ($0.lamport, $0.id.agent) < ($1.lamport, $1.id.agent) }
        // Each device's characters come out in the reverse of the order typed, the devices in
        // replica order, between "a" and "b".
        let expected = [LocalID(agent: 0, counter: 0)]
            + (1 ... devices).flatMap { d in (0 ..< perDevice).reversed().map { LocalID(agent: UInt32(d), counter: UInt32($0)) } }
            + [LocalID(agent: 0, counter: 1)]
        for (label, order) in [("as made", made), ("canonical", canonical)] {
            var list = ListCRDT<LocalID>()
            var budget = Int.max
            for x in order {
                try list.integrate(id: x.id, originLeft: x.left, originRight: x.right, elements: (0 ..< x.length).map { x.id.advanced(by: $0) },
                                   budget: &budget, replicaLess: { $0 < $1 })
            }
            let work = Int.max - budget
            #expect(list.allIDs == expected, "\(label)")
            // Before the index kept children by right origin, each character typed backwards was
            // a stretch of its own, and each insert walked the stretches of the other devices'
            // characters before its place (quadratic in the canonical order); now a few steps each.
            #expect(work <= 4 * devices * perDevice, "\(label): \(work) steps for \(devices * perDevice) characters")
        }
    }
}
