/// Why a list op could not be applied: it names an element the list lacks.
enum ListError: Error, Sendable, Equatable {
    case missingElement(LocalID)
    /// Integration ran out of its work budget.
    case tooMuchWork
}

/// One run of consecutively inserted elements in a `ListCRDT`.
///
/// Element `k` of the run has id `id.advanced(by: k)`; its left origin is
/// `originLeft` for `k == 0` and element `k - 1` otherwise; every element of
/// the run shares `originRight`. A run is either wholly deleted or wholly
/// visible. Its elements live at `content[contentStart ..< contentStart + length]`.
///
/// `depth` is derived data of the tree's sibling index (`ListTree.buildDepths`): the depth of
/// the run's first element in the tree whose edges go from each element to its left origin
/// (an element with no left origin has depth 1; element `k` of the run has `depth + k`).
/// It is meaningful only while the tree says its depths are known, and equality ignores it.
struct ListRun: Sendable, Equatable {
    var id: LocalID
    var length: Int
    var originLeft: LocalID
    var originRight: LocalID
    var deleted: Bool
    var depth: UInt32 = 0
    var contentStart: Int

    static func == (a: ListRun, b: ListRun) -> Bool {
        a.id == b.id && a.length == b.length && a.originLeft == b.originLeft && a.originRight == b.originRight
            && a.deleted == b.deleted && a.contentStart == b.contentStart
    }

    func originLeft(at offset: Int) -> LocalID { offset == 0 ? originLeft : id.advanced(by: offset - 1) }

    func contains(_ x: LocalID) -> Bool {
        x.agent == id.agent && x.counter >= id.counter && Int(x.counter) < Int(id.counter) + length
    }

    /// Splits at `offset` (0 < offset < length), returning the right part.
    mutating func split(at offset: Int) -> ListRun {
        let right = ListRun(id: id.advanced(by: offset), length: length - offset,
                            originLeft: id.advanced(by: offset - 1), originRight: originRight,
                            deleted: deleted, depth: depth &+ UInt32(truncatingIfNeeded: offset), contentStart: contentStart + offset)
        length = offset
        return right
    }

    /// Whether `next` directly continues this run (same author, contiguous ids and content, same state).
    func canAppend(_ next: ListRun) -> Bool {
        next.id.agent == id.agent && Int(next.id.counter) == Int(id.counter) + length
            && next.originLeft == id.advanced(by: length - 1) && next.originRight == originRight
            && next.deleted == deleted && next.contentStart == contentStart + length
    }
}

