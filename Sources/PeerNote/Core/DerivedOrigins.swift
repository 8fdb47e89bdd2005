/// Origins that follow from a list's structure: what format version 3 relies on to store each
/// body's structure (its elements' ids in list order, tombstones included) and only the origins
/// that do not follow from it (peernote(5), "Origins derived from a structure"; docs/FORMAT-V3.md).
///
/// An insert's left origin is the element directly before it, among the elements its author's
/// copy held, when it was made; its right origin the element directly after. Those elements
/// are all earlier in the log's order (a causal order), and an element the author's copy held
/// never comes to lie between the insert and its origins. So when every element earlier in the
/// log's order was in the author's copy (no concurrent insert precedes it in the log), the left
/// origin is the nearest element before it in list order that is earlier in the log, and the
/// right origin the nearest such after it: `nearestEarlier` computes both for every element of
/// a list in O(n).
///
/// The converse makes such a format safe to read without replaying its history: for any list
/// order whatever, the origins derived this way, integrated in the log's order, rebuild that
/// same order (each element's derived origins are adjacent among the earlier elements, so it
/// goes between them with nothing concurrent to scan). A file cannot make its structure and its
/// history disagree, except through the origins it stores explicitly.
enum DerivedOrigins {
    /// For the elements of a list in list order, whose positions in the log's order are
    /// `rank` (all different), the index of the nearest element before each with a smaller
    /// rank (`left`) and of the nearest after it (`right`); -1 where there is none.
    static func nearestEarlier(_ rank: [Int]) -> (left: [Int], right: [Int]) {
        let n = rank.count
        var left = [Int](repeating: -1, count: n)
        var right = [Int](repeating: -1, count: n)
        // A stack of indices whose ranks increase from bottom to top: the elements that can
        // still be the nearest earlier one for what comes next.
        var stack: [Int] = []
        stack.reserveCapacity(64)
        for i in 0 ..< n {
            while let top = stack.last, rank[top] > rank[i] { stack.removeLast() }
            left[i] = stack.last ?? -1
            stack.append(i)
        }
        stack.removeAll(keepingCapacity: true)
        for i in stride(from: n - 1, through: 0, by: -1) {
            while let top = stack.last, rank[top] > rank[i] { stack.removeLast() }
            right[i] = stack.last ?? -1
            stack.append(i)
        }
        return (left, right)
    }
}

extension ListCRDT {
    /// Every element in list order: its id, its actual left and right origins, and whether it
    /// is deleted.
    func elementsWithOrigins() -> [(id: LocalID, left: LocalID, right: LocalID, deleted: Bool)] {
        var out: [(id: LocalID, left: LocalID, right: LocalID, deleted: Bool)] = []
        out.reserveCapacity(totalCount)
        forEachRunWithOrigins { id, length, left, right, deleted in
            for k in 0 ..< length {
                out.append((id.advanced(by: k), k == 0 ? left : id.advanced(by: k - 1), right, deleted))
            }
        }
        return out
    }
}

/// A run of a list's structure: `length` elements with consecutive ids from `id` (one agent's),
/// next to each other in list order, all deleted or all visible.
struct StructureRun: Sendable, Equatable {
    var id: LocalID
    var length: Int
    var deleted: Bool
}

extension ListCRDT {
    /// The list whose structure is `structure` (its runs in list order), whose elements are
    /// `elements` (in list order, tombstones included) and whose elements' places in the log's
    /// order are `ranks` (in list order, all different): every element gets the origins that
    /// follow from the structure (`DerivedOrigins`), and the tree is built from runs at once,
    /// integrating nothing. Where every origin follows from the structure (no two copies
    /// inserted at one place concurrently), this is the list that replaying the history builds:
    /// the same elements, origins and tombstones (cut into runs as integrating them would cut
    /// them, or joined where replay left two runs that continue each other). Where one does not, it is still a list
    /// in that order, whose origins rebuild that order (see `DerivedOrigins`).
    init(structure: [StructureRun], elements: [Element], ranks: [Int]) {
        precondition(elements.count == ranks.count && structure.reduce(0, { $0 + $1.length }) == ranks.count,
                     "one element and one rank for each element of the structure")
        self.init(tree: ListTree(runs: Self.runs(structure: structure, ranks: ranks).runs, content: elements))
    }

    /// The list runs `init(structure:elements:ranks:)` builds its tree from, in list order: each
    /// with the origins that follow from the structure, and its elements' index in list order as
    /// `contentStart`; and for each structure run, the list run holding its first element (the
    /// others follow it). `ranks` has one entry for each element of the structure.
    static func runs(structure: [StructureRun], ranks: [Int]) -> (runs: [ListRun], firstOf: [Int]) {
        // `nearestEarlier`, a structure run at a time: a run's ids are one agent's consecutive
        // units, so its ranks increase along it, each element's left origin is the one before
        // it, and its right origins change only a few times along it (each is the nearest
        // earlier element after the run, deeper on the stack the smaller the element's rank).
        // The stacks and tables hold at most one entry per run: they are allocated once, at
        // that size, and used through pointers.
        let n = structure.count
        guard n > 0 else { return ([], []) }
        precondition(ranks.count == structure.reduce(0) { $0 + $1.length }, "one rank for each element of the structure")
        let starts = UnsafeMutableBufferPointer<Int>.allocate(capacity: n + 1)
        let firstLeft = UnsafeMutableBufferPointer<LocalID>.allocate(capacity: n)
        let stackRun = UnsafeMutableBufferPointer<Int>.allocate(capacity: n)
        let stackEnd = UnsafeMutableBufferPointer<Int>.allocate(capacity: n)
        defer {
            starts.deallocate()
            firstLeft.deallocate()
            stackRun.deallocate()
            stackEnd.deallocate()
        }
        var runs: [ListRun] = []
        var firstOf = [Int](repeating: -1, count: n)
        structure.withUnsafeBufferPointer { structure in
            ranks.withUnsafeBufferPointer { ranks in
                var total = 0
                for s in 0 ..< n {
                    starts[s] = total
                    total += structure[s].length
                }
                starts[n] = total
                @inline(__always) func id(_ element: Int, inRun s: Int) -> LocalID { structure[s].id.advanced(by: element - starts[s]) }

                // Left to right: the left origin of each run's first element. The stack holds
                // the elements that can still be the nearest earlier one for what comes next
                // (ranks increasing upwards), as parts of runs: run `stackRun[j]`'s elements from
                // its start up to `stackEnd[j]`.
                var depth = 0
                for s in 0 ..< n {
                    let r = ranks[starts[s]]
                    firstLeft[s] = .none
                    while depth > 0 {
                        let top = stackRun[depth - 1]
                        if ranks[starts[top]] > r {
                            depth -= 1
                            continue
                        }
                        // Its elements of a larger rank end it: keep those before the first of them.
                        let e = stackEnd[depth - 1]
                        if ranks[e - 1] > r {
                            var lo = starts[top], hi = e - 1      // ranks[lo] < r < ranks[hi]
                            while hi - lo > 1 {
                                let mid = (lo + hi) / 2
                                if ranks[mid] < r { lo = mid } else { hi = mid }
                            }
                            stackEnd[depth - 1] = hi
                        }
                        firstLeft[s] = id(stackEnd[depth - 1] - 1, inRun: top)
                        break
                    }
                    stackRun[depth] = s
                    stackEnd[depth] = starts[s + 1]
                    depth += 1
                }

                // Right to left: each run's elements cut where their right origin changes. The
                // stack holds elements (with their runs) after the run, ranks increasing upwards
                // (in `stackEnd` and `stackRun`); the elements of a larger rank than the top's
                // share it as right origin, and are a suffix. The pieces come out last first.
                var pieces: [(run: Int, start: Int, end: Int, right: LocalID)] = []
                pieces.reserveCapacity(n + n / 4)
                depth = 0
                var s = n - 1
                while s >= 0 {
                    let a = starts[s]
                    var hi = starts[s + 1]
                    while hi > a {
                        guard depth > 0 else {
                            pieces.append((s, a, hi, .none))
                            break
                        }
                        let topElement = stackEnd[depth - 1]
                        let t = ranks[topElement]
                        var kb = hi
                        if ranks[a] > t {
                            kb = a
                        } else if ranks[hi - 1] > t {
                            var lo = a, h = hi - 1                // ranks[lo] < t < ranks[h]
                            while h - lo > 1 {
                                let mid = (lo + h) / 2
                                if ranks[mid] < t { lo = mid } else { h = mid }
                            }
                            kb = h
                        }
                        if kb < hi {
                            pieces.append((s, kb, hi, id(topElement, inRun: stackRun[depth - 1])))
                            hi = kb
                        }
                        if hi > a { depth -= 1 }
                    }
                    // Of the run, only its first element (its smallest rank) stays a candidate.
                    stackEnd[depth] = a
                    stackRun[depth] = s
                    depth += 1
                    s -= 1
                }

                runs.reserveCapacity(pieces.count)
                for p in pieces.reversed() {
                    let run = ListRun(id: id(p.start, inRun: p.run), length: p.end - p.start,
                                      originLeft: p.start == starts[p.run] ? firstLeft[p.run] : id(p.start - 1, inRun: p.run),
                                      originRight: p.right, deleted: structure[p.run].deleted, contentStart: p.start)
                    // Runs that continue a list run (the next ids, the one before as left origin,
                    // the same right origin and state) join it, as integrating them in turn does.
                    if let last = runs.last, last.canAppend(run) {
                        runs[runs.count - 1].length += run.length
                    } else {
                        runs.append(run)
                    }
                    if firstOf[p.run] < 0 { firstOf[p.run] = runs.count - 1 }
                }
            }
        }
        return (runs, firstOf)
    }
}
