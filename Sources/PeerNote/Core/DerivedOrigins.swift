/// Origins that follow from a list's structure: groundwork for a file format that stores each
/// list's structure (its elements' ids in list order, tombstones included) and only the origins
/// that do not follow from it (Benchmarks/README.md, "What stands between these figures and the
/// targets").
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
