/// Each copy's change count per agent of this log, taken before a merge (see `MergeSummary`).
struct MergeSides: Sendable, Equatable {
    var mine: AgentCounts
    var theirs: AgentCounts
}

/// How many changes of each agent (by this log's agent numbers) a copy holds: its changes of
/// an agent are always that agent's first ones.
struct AgentCounts: Sendable, Equatable {
    var counts: [Int]
    var isEmpty: Bool { counts.allSatisfy { $0 == 0 } }
    func count(of agent: Int) -> Int { agent < counts.count ? counts[agent] : 0 }
}
