import Testing
@testable import PNMergeCommands

@Suite("log --graph lane assignment")
struct LogGraphTests {
    /// 0 root; 1 A1, 3 A2 on one branch; 2 B1, 4 B2 on another; 5 depends on both heads; 6 after it.
    let branches = LogGraph(parents: [[], [0], [0], [1], [2], [3, 4], [5]])
    let newestFirst = [6, 5, 4, 3, 2, 1, 0]   // rank of node i

    @Test("Two concurrent branches and the change that joins them")
    func twoBranches() {
        let order = branches.topoOrder(rank: newestFirst)
        #expect(order == [6, 5, 3, 1, 4, 2, 0], "a branch is shown whole before the other")
        #expect(branches.rows(order: order).map(\.graph) == ["*", "*", "|\\", "* |", "* |", "| *", "| *", "|/", "*"])
        #expect(branches.render(order: order) { ["n\($0)"] } ==
            ["* n6", "* n5", "|\\", "* | n3", "* | n1", "| * n4", "| * n2", "|/", "* n0"])
    }

    @Test("Further text lines go beside the fan-out row, then beside lanes that continue")
    func continuationLines() {
        let order = branches.topoOrder(rank: newestFirst)
        let out = branches.render(order: order) { ["n\($0)", "more \($0)"] }
        #expect(out == [
            "* n6", "| more 6",
            "* n5", "|\\ more 5",
            "* | n3", "| | more 3",
            "* | n1", "| | more 1",
            "| * n4", "| | more 4",
            "| * n2", "| | more 2",
            "|/",
            "* n0", "  more 0",
        ])
    }

    @Test("Date order: newest first, but never a change before one that depends on it")
    func dateOrder() {
        #expect(branches.dateOrder(rank: newestFirst) == [6, 5, 4, 3, 2, 1, 0])
        // Clock skew: the root claims to be newer than the change made on top of it.
        let skewed = LogGraph(parents: [[], [0]])
        #expect(skewed.dateOrder(rank: [0, 1]) == [1, 0])
        #expect(skewed.topoOrder(rank: [0, 1]) == [1, 0])
    }

    @Test("Lanes that join across another lane pass under it with '_'")
    func crossing() {
        // 0 R; 1 X, 2 Y on R; heads 3 (on X), 4 (on Y), 5 (on X).
        let g = LogGraph(parents: [[], [0], [0], [1], [2], [1]])
        let rows = g.rows(order: [3, 4, 5, 1, 2, 0]).map(\.graph)
        #expect(rows == ["*", "| *", "| | *", "|_|/", "* |", "| *", "|/", "*"])
    }

    @Test("A change with three dependencies fans out into three lanes beside an open lane")
    func octopus() {
        // 0 R; 1 A, 2 B, 3 C on R; 4 depends on A, B, C; 5 on 4; 6 another head on R.
        let g = LogGraph(parents: [[], [0], [0], [0], [1, 2, 3], [4], [0]])
        let rows = g.rows(order: [5, 6, 4, 1, 2, 3, 0]).map(\.graph)
        #expect(rows == ["*", "| *", "*-. |", "|\\ \\ \\", "* | | |", "| * | |", "| | * |", "|/ / /", "|/ /", "|/", "*"])
    }

    @Test("Every node gets exactly one '*' row, in the order given")
    func oneStarPerNode() {
        let g = LogGraph(parents: [[], [0], [0], [0], [1, 2, 3], [4], [0]])
        let order = g.topoOrder(rank: [6, 5, 4, 3, 2, 0, 1])
        #expect(order.count == 7 && Set(order).count == 7)
        let nodes = g.rows(order: order).compactMap { row -> Int? in if case .node(let n) = row.kind { n } else { nil } }
        #expect(nodes == order)
        #expect(g.rows(order: order).filter { $0.graph.contains("*") }.count == 7)
    }

    @Test("Thousands of concurrent branches draw no row wider than the lane limit allows, and every change still gets its row")
    func manyBranchesAreFolded() {
        let n = 5_000
        // 0 the root; 1 ... n each on top of it; n + 1 merges them all.
        let g = LogGraph(parents: [[]] + Array(repeating: [0], count: n) + [Array(1 ... n)])
        let order = g.topoOrder(rank: Array((0 ... n + 1).reversed()))
        let rows = g.rows(order: order)
        let widest = rows.map(\.graph.count).max() ?? 0
        #expect(widest <= 2 * LogGraph.defaultLaneLimit + 1)
        let nodes = rows.compactMap { row -> Int? in if case .node(let k) = row.kind { k } else { nil } }
        #expect(nodes == order)
        let (lines, folded) = g.renderCountingFolds(order: order) { ["change \($0)"] }
        #expect(folded > n - 2 * LogGraph.defaultLaneLimit && folded < n)
        #expect(lines.count < 2 * (n + 2))
        // Below the limit nothing is folded.
        let few = LogGraph(parents: [[]] + Array(repeating: [0], count: 20) + [Array(1 ... 20)])
        #expect(few.renderCountingFolds(order: few.topoOrder(rank: Array((0 ... 21).reversed()))) { ["\($0)"] }.folded == 0)
    }

    @Test("A lane limit of 2 folds the third branch into the column after the lanes")
    func foldColumn() {
        let g = LogGraph(parents: [[], [0], [0], [0]], laneLimit: 2)
        let rows = g.rows(order: [3, 2, 1, 0]).map(\.graph)
        #expect(rows == ["*", "| *", "| | *", "|/", "*"])
    }
}
