/// A run of op ids of one agent.
struct IDRun: Sendable, Equatable {
    var first: LocalID
    var count: Int
}

/// Which of up to eight lists of id runs hold each id, as one partition of the id space into
/// segments: a segment starts at an id and reaches to the next segment's start (within its
/// agent; an agent's last segment holds no list and reaches to the end of its ids), and every
/// id in it is held by exactly the lists of its mask (bit k for list k). Runs in a list may
/// overlap or touch. Cutting a body's run into pieces of one membership then takes one search
/// per run, and the pieces come already in order.
///
/// Invariant: segments sorted by (agent, start), starts distinct within an agent, neighbours
/// of one agent with different masks.
struct EditSegments: Sendable {
    struct Segment: Sendable, Equatable {
        var agent: UInt32
        var start: Int
        var mask: UInt8
    }

    private(set) var segments: [Segment] = []
    /// Each segment's (agent, start) packed into one integer that orders as the pair does
    /// (`key(_:_:)`), for the searches; empty when an agent number is too large to pack.
    private var keys: [UInt64] = []

    /// (agent, place) as one integer ordered as the pair: an agent's places reach at most 2^32
    /// (33 bits), and agent numbers index a log's replica table, so they stay far below 2^31.
    @inline(__always) private static func key(_ agent: UInt32, _ place: Int) -> UInt64 {
        UInt64(agent & (1 << 31 - 1)) << 33 | UInt64(place)
    }

    init(_ lists: [[IDRun]]) {
        precondition(lists.count <= 8, "at most eight lists")
        // Each run gives two events: list k starts holding ids at one place and stops at another.
        var events: [(key: UInt64, agent: UInt32, list: Int, delta: Int)] = []
        events.reserveCapacity(2 * lists.reduce(0) { $0 + $1.count })
        var packable = true
        for (k, list) in lists.enumerated() {
            for r in list where r.count > 0 {
                packable = packable && r.first.agent < 1 << 31
                events.append((Self.key(r.first.agent, Int(r.first.counter)), r.first.agent, k, 1))
                events.append((Self.key(r.first.agent, Int(r.first.counter) + r.count), r.first.agent, k, -1))
            }
        }
        if packable {
            events = Self.sortedByKey(events)
        } else {
            events.sort { ($0.agent, $0.key & (1 << 33 - 1)) < ($1.agent, $1.key & (1 << 33 - 1)) }
        }
        var depth = [Int](repeating: 0, count: lists.count)
        var i = 0
        while i < events.count {
            let key = events[i].key, agent = events[i].agent
            while i < events.count && events[i].key == key && events[i].agent == agent {
                depth[events[i].list] += events[i].delta
                i += 1
            }
            var mask: UInt8 = 0
            for k in depth.indices where depth[k] > 0 { mask |= 1 << UInt8(k) }
            let position = Int(key & (1 << 33 - 1))
            if let last = segments.last, last.agent == agent, last.mask == mask { continue }
            segments.append(Segment(agent: agent, start: position, mask: mask))
        }
        if packable { keys = segments.map { Self.key($0.agent, $0.start) } }
    }

    /// `events` ordered by key, events of equal keys in any order (they are taken together).
    /// By digits when the places fit 32 bits and the agents are few (`RadixSort` on the places,
    /// then a counting sort by agent, both stable): a comparison sort of the tens of thousands of
    /// events of a long history took most of the search's setup.
    private static func sortedByKey(_ events: [(key: UInt64, agent: UInt32, list: Int, delta: Int)]) -> [(key: UInt64, agent: UInt32, list: Int, delta: Int)] {
        var places: [UInt32] = []
        places.reserveCapacity(events.count)
        var largestAgent: UInt32 = 0
        for e in events {
            let place = e.key & (1 << 33 - 1)
            guard place <= UInt64(UInt32.max) else { return events.sorted { $0.key < $1.key } }
            places.append(UInt32(place))
            largestAgent = max(largestAgent, e.agent)
        }
        guard Int(largestAgent) <= events.count + 1_024 else { return events.sorted { $0.key < $1.key } }
        let byPlace = RadixSort.order(of: places)
        // Where each agent's events start, then each event put after those of smaller agents.
        var start = [Int](repeating: 0, count: Int(largestAgent) + 2)
        for e in events { start[Int(e.agent) + 1] += 1 }
        for a in 1 ..< start.count { start[a] += start[a - 1] }
        var out = events
        for i in byPlace {
            let a = Int(events[i].agent)
            out[start[a]] = events[i]
            start[a] += 1
        }
        return out
    }

    /// The lists holding `id`, as a mask.
    func mask(of id: LocalID) -> UInt8 {
        let i = lastSegment(atOrBefore: id)
        return i >= 0 && segments[i].agent == id.agent ? segments[i].mask : 0
    }

    /// Calls `body(from, to, mask)` for the pieces of the id run `first ..< first + length`, in
    /// order: offsets from `first`, each piece as long as its ids' membership stays the same.
    /// `hint` is where the last call ended; the search starts there (a body's runs often
    /// continue one another's ids).
    func forEachPiece(_ first: LocalID, _ length: Int, hint: inout Int, _ body: (Int, Int, UInt8) -> Void) {
        let start = Int(first.counter), end = start + length
        var i = covers(hint, first) ? hint : covers(hint + 1, first) ? hint + 1 : lastSegment(atOrBefore: first)
        var p = start
        while p < end {
            let mask = i >= 0 && segments[i].agent == first.agent ? segments[i].mask : 0
            var stop = end
            let next = i + 1
            if next < segments.count, segments[next].agent == first.agent, segments[next].start < end {
                stop = segments[next].start
            }
            body(p - start, stop - start, mask)
            p = stop
            if p < end { i = next }
        }
        hint = i
    }

    /// Whether segment `i` is the last one starting at or before `id` (-1: none does).
    private func covers(_ i: Int, _ id: LocalID) -> Bool {
        guard i >= -1, i < segments.count else { return false }
        guard !keys.isEmpty, id.agent < 1 << 31 else { return coversComparingPairs(i, id) }
        let k = Self.key(id.agent, Int(id.counter))
        return keys.withUnsafeBufferPointer { keys in
            (i < 0 || keys[i] <= k) && (i + 1 == keys.count || keys[i + 1] > k)
        }
    }

    private func coversComparingPairs(_ i: Int, _ id: LocalID) -> Bool {
        let counter = Int(id.counter)
        if i >= 0 && (segments[i].agent, segments[i].start) > (id.agent, counter) { return false }
        return i + 1 == segments.count || (segments[i + 1].agent, segments[i + 1].start) > (id.agent, counter)
    }

    /// The index of the last segment starting at or before `id` (in (agent, counter) order), or -1.
    private func lastSegment(atOrBefore id: LocalID) -> Int {
        guard !keys.isEmpty || segments.isEmpty, id.agent < 1 << 31 else { return lastSegmentComparingPairs(atOrBefore: id) }
        let k = Self.key(id.agent, Int(id.counter))
        return keys.withUnsafeBufferPointer { keys in
            var lo = 0, hi = keys.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if keys[mid] <= k { lo = mid + 1 } else { hi = mid }
            }
            return lo - 1
        }
    }

    private func lastSegmentComparingPairs(atOrBefore id: LocalID) -> Int {
        var lo = 0, hi = segments.count
        let counter = Int(id.counter)
        while lo < hi {
            let mid = (lo + hi) / 2
            let s = segments[mid]
            if (s.agent, s.start) <= (id.agent, counter) { lo = mid + 1 } else { hi = mid }
        }
        return lo - 1
    }
}
