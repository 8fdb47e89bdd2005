/// A set of op unit ids (`LocalID`s), kept by agent as spans of consecutive counters: the
/// elements a run of deletes named, for instance.
///
/// Invariant once `normalize()` ran (and until the next `insert`): each agent's spans are
/// sorted, non-empty and apart (no two overlap or touch). Lookups need it.
struct IDSpans: Sendable {
    /// By agent: spans of counters.
    private var spans: [[Range<UInt32>]] = []
    private var normalized = true

    init() {}

    var isEmpty: Bool { spans.allSatisfy(\.isEmpty) }

    /// Adds the ids `agent`'s `counters`; an empty range adds nothing.
    mutating func insert(agent: UInt32, _ counters: Range<UInt32>) {
        guard !counters.isEmpty, agent != LocalID.none.agent else { return }
        let a = Int(agent)
        if spans.count <= a { spans.append(contentsOf: repeatElement([], count: a + 1 - spans.count)) }
        if let last = spans[a].last, last.upperBound >= counters.lowerBound, last.lowerBound <= counters.lowerBound {
            // The usual case (deletes come in order): it continues or overlaps the last span.
            spans[a][spans[a].count - 1] = last.lowerBound ..< Swift.max(last.upperBound, counters.upperBound)
            return
        }
        if let last = spans[a].last, last.lowerBound > counters.lowerBound { normalized = false }
        spans[a].append(counters)
    }

    /// Sorts each agent's spans and joins those that overlap or touch.
    /// - Complexity: O(s log s) for s spans.
    mutating func normalize() {
        guard !normalized else { return }
        for a in spans.indices where spans[a].count > 1 {
            let sorted = spans[a].sorted { $0.lowerBound < $1.lowerBound }
            var out: [Range<UInt32>] = []
            out.reserveCapacity(sorted.count)
            for s in sorted {
                if let last = out.last, last.upperBound >= s.lowerBound {
                    out[out.count - 1] = last.lowerBound ..< Swift.max(last.upperBound, s.upperBound)
                } else {
                    out.append(s)
                }
            }
            spans[a] = out
        }
        normalized = true
    }

    /// The first span of `agent` that ends after `counter` (it holds `counter` when it starts at
    /// or before it), if any. Requires `normalize()`.
    /// - Complexity: O(log s).
    func firstSpan(agent: UInt32, endingAfter counter: UInt32) -> Range<UInt32>? {
        precondition(normalized, "IDSpans looked up before normalize()")
        guard Int(agent) < spans.count else { return nil }
        let list = spans[Int(agent)]
        var lo = 0, hi = list.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if list[mid].upperBound <= counter { lo = mid + 1 } else { hi = mid }
        }
        return lo < list.count ? list[lo] : nil
    }

    /// Whether any id of `agent`'s `counters` is in the set. Requires `normalize()`.
    func overlaps(agent: UInt32, _ counters: Range<UInt32>) -> Bool {
        guard !counters.isEmpty, let s = firstSpan(agent: agent, endingAfter: counters.lowerBound) else { return false }
        return s.lowerBound < counters.upperBound
    }

    /// The ids of this set that are not in `other`. Both require `normalize()`; so does the result,
    /// which is normalized.
    /// - Complexity: O(s + t) for the two sets' spans.
    func subtracting(_ other: IDSpans) -> IDSpans {
        precondition(normalized && other.normalized, "IDSpans subtracted before normalize()")
        var out = IDSpans()
        for a in spans.indices {
            let cut = a < other.spans.count ? other.spans[a] : []
            var j = 0
            for s in spans[a] {
                var from = s.lowerBound
                while j < cut.count && cut[j].upperBound <= from { j += 1 }
                var k = j
                while from < s.upperBound {
                    guard k < cut.count, cut[k].lowerBound < s.upperBound else {
                        out.insert(agent: UInt32(a), from ..< s.upperBound)
                        break
                    }
                    if cut[k].lowerBound > from { out.insert(agent: UInt32(a), from ..< cut[k].lowerBound) }
                    from = Swift.max(from, cut[k].upperBound)
                    k += 1
                }
            }
        }
        return out
    }
}
