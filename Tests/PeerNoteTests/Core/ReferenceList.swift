@testable import PeerNote

/// Test oracle: the first, flat-array implementation of the list CRDT (O(n) per op).
/// A sequence CRDT (the FugueMax / YjsMod algorithm) over runs of elements:
/// note bodies (elements are Unicode scalars) and the order of notes
/// (elements are note ids).
///
/// Invariants: every element ever inserted stays in `runs` (deleted ones as
/// tombstones), in list order; each element's position is fully determined by
/// its origins and the replica ids of concurrent siblings, so replicas that
/// integrated the same inserts (in any causal order) hold the same sequence.
/// Concurrent runs inserted at one place never interleave, whether typed
/// forwards or backwards.
struct ReferenceList<Element: Sendable>: Sendable {
    private(set) var runs: [ListRun] = []
    private(set) var content: [Element] = []
    private(set) var visibleCount = 0
    private(set) var totalCount = 0

    // MARK: Reading

    var visibleElements: [Element] {
        var out: [Element] = []
        out.reserveCapacity(visibleCount)
        for r in runs where !r.deleted { out.append(contentsOf: content[r.contentStart ..< r.contentStart + r.length]) }
        return out
    }

    /// Visits each visible element with its id, in order.
    func forEachVisible(_ body: (LocalID, Element) -> Void) {
        for r in runs where !r.deleted {
            for k in 0 ..< r.length { body(r.id.advanced(by: k), content[r.contentStart + k]) }
        }
    }

    /// Visits every element, deleted or not, with its id.
    func forEachElement(_ body: (LocalID, Element, Bool) -> Void) {
        for r in runs {
            for k in 0 ..< r.length { body(r.id.advanced(by: k), content[r.contentStart + k], r.deleted) }
        }
    }

    func contains(_ id: LocalID) -> Bool { locate(id) != nil }

    func isDeleted(_ id: LocalID) -> Bool? {
        guard let (i, _) = locate(id) else { return nil }
        return runs[i].deleted
    }

    // MARK: Locating

    /// The run index and offset of the element with `id`.
    private func locate(_ id: LocalID) -> (Int, Int)? {
        for (i, r) in runs.enumerated() where r.contains(id) { return (i, Int(id.counter) - Int(r.id.counter)) }
        return nil
    }

    /// The absolute position (counting tombstones) of an element.
    private func position(of id: LocalID) -> Int? {
        var pos = 0
        for r in runs {
            if r.contains(id) { return pos + Int(id.counter) - Int(r.id.counter) }
            pos += r.length
        }
        return nil
    }

    /// The element id at visible position `index` (0-based).
    func idOfVisible(_ index: Int) -> LocalID? {
        var remaining = index
        for r in runs where !r.deleted {
            if remaining < r.length { return r.id.advanced(by: remaining) }
            remaining -= r.length
        }
        return nil
    }

    /// The visible index of an element, or nil when deleted or absent.
    func visibleIndex(of id: LocalID) -> Int? {
        var pos = 0
        for r in runs {
            if r.contains(id) { return r.deleted ? nil : pos + Int(id.counter) - Int(r.id.counter) }
            if !r.deleted { pos += r.length }
        }
        return nil
    }

    // MARK: Local edits

    /// Where a local insert at visible position `index` goes: its left and right origins.
    func originsForInsert(atVisible index: Int) -> (left: LocalID, right: LocalID) {
        if index == 0 {
            return (.none, runs.first?.id ?? .none)
        }
        var remaining = index
        for (i, r) in runs.enumerated() where !r.deleted {
            if remaining <= r.length {
                let left = r.id.advanced(by: remaining - 1)
                if remaining < r.length { return (left, r.id.advanced(by: remaining)) }
                let right = i + 1 < runs.count ? runs[i + 1].id : .none
                return (left, right)
            }
            remaining -= r.length
        }
        // Past the end: append after the last visible element.
        let left = runs.last(where: { !$0.deleted }).map { $0.id.advanced(by: $0.length - 1) } ?? .none
        return (left, .none)
    }

    /// Origins for inserting directly after the element `after` (or at the start).
    func originsForInsert(after: LocalID) -> (left: LocalID, right: LocalID) {
        if after.isNone { return (.none, runs.first?.id ?? .none) }
        guard let (i, off) = locate(after) else { return (after, .none) }
        if off + 1 < runs[i].length { return (after, runs[i].id.advanced(by: off + 1)) }
        return (after, i + 1 < runs.count ? runs[i + 1].id : .none)
    }

    /// The ids of the visible elements in `range`, as maximal runs of contiguous ids
    /// (start id, length, reversed=false).
    func visibleIDSpans(_ range: Range<Int>) -> [(LocalID, Int)] {
        var spans: [(LocalID, Int)] = []
        var pos = 0
        for r in runs where !r.deleted {
            let lo = max(range.lowerBound, pos), hi = min(range.upperBound, pos + r.length)
            if lo < hi {
                let start = r.id.advanced(by: lo - pos)
                if let last = spans.last, last.0.agent == start.agent, Int(last.0.counter) + last.1 == Int(start.counter) {
                    spans[spans.count - 1].1 += hi - lo
                } else {
                    spans.append((start, hi - lo))
                }
            }
            pos += r.length
            if pos >= range.upperBound { break }
        }
        return spans
    }

    // MARK: Integration

    /// Integrates a run of `elements` with the given id and origins (local or remote).
    /// `replicaOrder(a, b)` says whether agent `a`'s replica id sorts before `b`'s.
    mutating func integrate(id: LocalID, originLeft: LocalID, originRight: LocalID, elements: some Collection<Element>,
                            replicaLess: (UInt32, UInt32) -> Bool) throws(ListError) {
        let length = elements.count
        guard length > 0 else { return }
        let left: Int
        if originLeft.isNone { left = -1 } else {
            guard let p = position(of: originLeft) else { throw .missingElement(originLeft) }
            left = p
        }
        let right: Int
        if originRight.isNone { right = totalCount } else {
            guard let p = position(of: originRight) else { throw .missingElement(originRight) }
            right = p
        }
        // Scan the runs between the origins (YjsMod): find where the new run goes.
        var destination = left + 1
        var scanning = false
        var i = left + 1
        var (runIndex, offset) = runAt(position: i)
        while true {
            if !scanning { destination = i }
            if i >= totalCount || i == right { break }
            let other = runs[runIndex]
            let otherLeftID = other.originLeft(at: offset)
            let oleft: Int
            if offset > 0 { oleft = i - 1 } else if otherLeftID.isNone { oleft = -1 } else {
                guard let p = position(of: otherLeftID) else { throw .missingElement(otherLeftID) }
                oleft = p
            }
            let oright: Int
            if other.originRight.isNone { oright = totalCount } else {
                guard let p = position(of: other.originRight) else { throw .missingElement(other.originRight) }
                oright = p
            }
            if oleft < left {
                break
            } else if oleft == left {
                if oright < right {
                    scanning = true
                } else if oright == right {
                    if replicaLess(id.agent, other.id.agent) { break }
                    scanning = false
                } else {
                    scanning = false
                }
            }
            // The rest of this run has its left origin inside the run, past `left`: skip it,
            // but stop at `right` if it lies inside.
            let runEnd = i + other.length - offset
            if right > i && right < runEnd {
                if !scanning { destination = right }
                break
            }
            i = runEnd
            runIndex += 1
            offset = 0
        }
        insertRun(ListRun(id: id, length: length, originLeft: originLeft, originRight: originRight,
                          deleted: false, contentStart: content.count), at: destination)
        content.append(contentsOf: elements)
        visibleCount += length
        totalCount += length
    }

    /// The run index and offset at absolute position `pos` (runs.count, 0 at the end).
    private func runAt(position pos: Int) -> (Int, Int) {
        var p = 0
        for (i, r) in runs.enumerated() {
            if pos < p + r.length { return (i, pos - p) }
            p += r.length
        }
        return (runs.count, 0)
    }

    private mutating func insertRun(_ run: ListRun, at pos: Int) {
        var (i, off) = runAt(position: pos)
        if off > 0 {
            let right = runs[i].split(at: off)
            runs.insert(right, at: i + 1)
            i += 1
        }
        if i > 0, runs[i - 1].canAppend(run) {
            runs[i - 1].length += run.length
        } else {
            runs.insert(run, at: i)
        }
    }

    /// Marks `length` elements starting at `target` deleted (counting down when `reversed`).
    /// Returns the elements newly deleted, or throws when an id is unknown.
    @discardableResult
    mutating func delete(target: LocalID, length: Int, reversed: Bool) throws(ListError) -> Int {
        let start = reversed ? target.advanced(by: -(length - 1)) : target
        var done = 0
        var newly = 0
        while done < length {
            let cur = start.advanced(by: done)
            guard let (i0, off) = locate(cur) else { throw .missingElement(cur) }
            var i = i0
            if off > 0 {
                let right = runs[i].split(at: off)
                runs.insert(right, at: i + 1)
                i += 1
            }
            let take = min(runs[i].length, length - done)
            if take < runs[i].length {
                let right = runs[i].split(at: take)
                runs.insert(right, at: i + 1)
            }
            if !runs[i].deleted {
                runs[i].deleted = true
                visibleCount -= take
                newly += take
            }
            done += take
        }
        return newly
    }
}
