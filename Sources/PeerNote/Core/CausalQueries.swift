extension OpLog {
    /// One question for `pastContains(_:)`: is change `seq` of `agent` in the causal past of
    /// change `root` (itself included)?
    struct PastQuery: Sendable {
        var root: Int
        var agent: UInt32
        var seq: UInt32
    }

    /// The answers to `queries`, in their order, in memory linear in the log (no version
    /// vector per change or per root: with thousands of replicas those need replicas x roots).
    ///
    /// A change counts as having its replica's earlier changes in its past, whether or not its
    /// dependencies reach them (peernote(5) requires it to follow them; a crafted file may make it
    /// follow them by Lamport timestamp alone): the answers are those of `versionVector(of:)`.
    ///
    /// Each query is answered by one of two batch strategies, whichever walks fewer changes for
    /// the whole batch: a forward pass per queried agent over the changes from that agent's
    /// earliest queried change to the last root (the highest seq of the agent in each change's
    /// past), or a backward walk per root over its past, cut off below its earliest queried
    /// change (nothing earlier in a causal order can have it in its past).
    ///
    /// - Complexity: O(min(A, R) x C + Q) for A queried agents, R roots, C changes
    ///   spanned and Q queries; O(C + Q) memory.
    func pastContains(_ queries: [PastQuery]) -> [Bool] {
        var answers = [Bool](repeating: false, count: queries.count)
        // The change each query asks about; a query whose change lies after its root (or does
        // not exist) is answered false at once.
        var target = [Int](repeating: -1, count: queries.count)
        var open: [Int] = []
        for (k, q) in queries.enumerated() {
            guard let c = changes.index(agent: q.agent, seq: q.seq), c <= q.root else { continue }
            if c == q.root || changes.agent(q.root) == q.agent {
                answers[k] = q.seq <= changes.seq(q.root)
                continue
            }
            target[k] = c
            open.append(k)
        }
        guard !open.isEmpty else { return answers }
        // The queries grouped by agent and by root (groups in arrays, found by number, so that
        // appending to one copies nothing), and the changes each strategy would visit.
        var agentGroup: [UInt32: Int] = [:], rootGroup: [Int: Int] = [:]
        var byAgent: [(agent: UInt32, lo: Int, hi: Int, queries: [Int])] = []
        var byRoot: [(root: Int, lo: Int, queries: [Int])] = []
        for k in open {
            let q = queries[k]
            if let g = agentGroup[q.agent] {
                byAgent[g].lo = min(byAgent[g].lo, target[k])
                byAgent[g].hi = max(byAgent[g].hi, q.root)
                byAgent[g].queries.append(k)
            } else {
                agentGroup[q.agent] = byAgent.count
                byAgent.append((q.agent, target[k], q.root, [k]))
            }
            if let g = rootGroup[q.root] {
                byRoot[g].lo = min(byRoot[g].lo, target[k])
                byRoot[g].queries.append(k)
            } else {
                rootGroup[q.root] = byRoot.count
                byRoot.append((q.root, target[k], [k]))
            }
        }
        let forwardCost = byAgent.reduce(0) { $0 + ($1.hi - $1.lo + 1) }
        let backwardCost = byRoot.reduce(0) { $0 + ($1.root - $1.lo + 1) }
        if forwardCost <= backwardCost {
            var highest: [UInt32] = []
            for group in byAgent {
                let agent = group.agent
                // highest[x - lo]: the highest seq of `agent` in the past of change x (0: none
                // from its change `lo` on, which is all that the queries can ask about).
                let lo = group.lo, count = group.hi - lo + 1
                highest.removeAll(keepingCapacity: true)
                highest.reserveCapacity(count)
                for x in lo ... group.hi {
                    var v: UInt32 = changes.agent(x) == agent ? changes.seq(x) : 0
                    for d in deps(of: x) where d >= lo { v = max(v, highest[d - lo]) }
                    if let p = previousOfReplica(x), p >= lo { v = max(v, highest[p - lo]) }
                    highest.append(v)
                }
                for k in group.queries { answers[k] = highest[queries[k].root - lo] >= queries[k].seq }
            }
        } else {
            // Visited marks, stamped with the walk's number (one array for every walk).
            var stamp = [Int32](repeating: -1, count: changes.count)
            var walk: Int32 = 0
            var stack: [Int] = []
            for group in byRoot {
                let root = group.root
                let lo = group.lo
                var highest: [UInt32: UInt32] = [:]
                for k in group.queries { highest[queries[k].agent] = 0 }
                stack.removeAll(keepingCapacity: true)
                stack.append(root)
                stamp[root] = walk
                while let x = stack.popLast() {
                    let a = changes.agent(x)
                    if let h = highest[a], changes.seq(x) > h { highest[a] = changes.seq(x) }
                    for d in deps(of: x) where d >= lo && stamp[d] != walk {
                        stamp[d] = walk
                        stack.append(d)
                    }
                    if let p = previousOfReplica(x), p >= lo && stamp[p] != walk {
                        stamp[p] = walk
                        stack.append(p)
                    }
                }
                for k in group.queries { answers[k] = (highest[queries[k].agent] ?? 0) >= queries[k].seq }
                walk += 1
            }
        }
        return answers
    }

    /// The change its replica made before change `x`, if any: the one before it in its run, or
    /// found by seq at a run's start.
    @inline(__always) private func previousOfReplica(_ x: Int) -> Int? {
        if x != changes.runStart(of: x) { return x - 1 }
        let seq = changes.seq(x)
        return seq > 1 ? changes.index(agent: changes.agent(x), seq: seq - 1) : nil
    }
}
