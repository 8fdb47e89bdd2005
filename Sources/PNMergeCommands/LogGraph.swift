/// Orders a change DAG for display and draws it as `git log --graph` does:
/// one lane per line of work, `*` for a change, `|` for a lane passing by,
/// `\` where a change with several dependencies fans out into lanes, and `/`
/// (with `_` when it has to pass other lanes) where lanes join again at a change
/// that several later changes depend on.
///
/// Nodes are indices `0 ..< parents.count`; `parents[i]` are the nodes node `i`
/// depends on (its dependencies, older than it).
struct LogGraph {
    /// One line of the drawing.
    struct Row: Equatable {
        /// What a row shows.
        enum Kind: Equatable {
            /// Lanes joining before `node` is drawn.
            case join
            /// The `*` row of a node.
            case node(Int)
            /// Lanes fanning out to a node's dependencies, or shifting left after the first change.
            case handOff
        }
        var graph: String
        var kind: Kind
        /// Lanes open once this row is drawn.
        var lanes: Int
        /// Whether folded lines of work are open once this row is drawn (see `rows(order:)`).
        var folded = false
    }

    let parents: [[Int]]
    /// The most lanes drawn side by side (see `rows(order:)`).
    let laneLimit: Int

    /// The lane limit pnmerge(1) documents for `pnmerge log --graph`.
    static let defaultLaneLimit = 32

    init(parents: [[Int]], laneLimit: Int = LogGraph.defaultLaneLimit) {
        self.parents = parents
        self.laneLimit = max(laneLimit, 1)
    }

    /// Children before parents, newest first among the changes free to show: `rank[i]` gives the
    /// preference (lower shows earlier). Like `git log --date-order`.
    func dateOrder(rank: [Int]) -> [Int] {
        var pending = childCounts()
        var heap = MinHeap<Int>(by: rank)
        for i in parents.indices where pending[i] == 0 { heap.push(i) }
        var out: [Int] = []
        out.reserveCapacity(parents.count)
        while let n = heap.pop() {
            out.append(n)
            for p in parents[n] {
                pending[p] -= 1
                if pending[p] == 0 { heap.push(p) }
            }
        }
        return out
    }

    /// Children before parents, each line of work kept together: after a change comes its first
    /// parent when nothing else still needs to come before it. Like `git log --topo-order`.
    /// `parents[i]` should list the first parent first; `rank` orders the heads.
    func topoOrder(rank: [Int]) -> [Int] {
        var pending = childCounts()
        var stack = parents.indices.filter { pending[$0] == 0 }.sorted { rank[$0] > rank[$1] }
        var out: [Int] = []
        out.reserveCapacity(parents.count)
        while let n = stack.popLast() {
            out.append(n)
            for p in parents[n].reversed() {
                pending[p] -= 1
                if pending[p] == 0 { stack.append(p) }
            }
        }
        return out
    }

    private func childCounts() -> [Int] {
        var counts = [Int](repeating: 0, count: parents.count)
        for ps in parents { for p in ps { counts[p] += 1 } }
        return counts
    }

    /// The graph rows for nodes shown in `order` (children before parents).
    ///
    /// At most `laneLimit` lanes are drawn: a line of work that would open a lane past them is
    /// folded into one column at the right (after the last lane's place), drawn `:` while any
    /// folded line is open and `*` for a change on one; lines that join or leave it are not drawn.
    /// So every row is at most about `2 * laneLimit` characters wide, however many branches run
    /// side by side (thousands of devices editing offline would otherwise draw lines thousands
    /// of characters wide, one per change).
    ///
    /// - Complexity: O(N x laneLimit + E) for N nodes and E dependencies.
    func rows(order: [Int]) -> [Row] {
        var lanes: [Int] = []   // the node each lane is waiting for
        var rows: [Row] = []
        // Folded lines of work: how many wait for each node, and in all.
        var folded: [Int: Int] = [:]
        var foldedOpen = 0
        let foldColumn = 2 * laneLimit

        func blank(_ width: Int) -> [Character] { [Character](repeating: " ", count: max(width, 0)) }
        func text(_ chars: [Character], fold: Character?) -> String {
            var chars = chars
            if let fold {
                if chars.count < foldColumn + 1 { chars += blank(foldColumn + 1 - chars.count) }
                chars[foldColumn] = fold
            }
            var s = String(chars)
            while s.last == " " { s.removeLast() }
            return s
        }
        func fold(_ p: Int) {
            folded[p, default: 0] += 1
            foldedOpen += 1
        }
        /// Takes the folded lines waiting for `n` out of the fold; whether there were any.
        func unfold(_ n: Int) -> Bool {
            guard let k = folded.removeValue(forKey: n) else { return false }
            foldedOpen -= k
            return true
        }

        for n in order {
            let wasFolded = unfold(n)
            let ps = parents[n]
            // A change on a folded line (or a new line with every lane taken) is drawn in the fold.
            if lanes.firstIndex(of: n) == nil && (wasFolded || lanes.count >= laneLimit) {
                var row = blank(2 * lanes.count)
                for p in lanes.indices { row[2 * p] = "|" }
                for p in ps { fold(p) }
                rows.append(Row(graph: text(row, fold: "*"), kind: .node(n), lanes: lanes.count, folded: foldedOpen > 0))
                continue
            }
            let foldMark: Character? = foldedOpen > 0 ? ":" : nil
            // The lane(s) waiting for n; lanes that converge on n join the leftmost, one row each.
            var col: Int
            if let first = lanes.firstIndex(of: n) {
                col = first
                while let h = lanes.indices.dropFirst(col + 1).first(where: { lanes[$0] == n }) {
                    var row = blank(2 * lanes.count)
                    for p in 0 ..< h { row[2 * p] = "|" }
                    for p in col ..< h - 1 { row[2 * p + 1] = "_" }
                    row[2 * h - 1] = "/"
                    for p in (h + 1) ..< lanes.count { row[2 * p - 1] = "/" }
                    lanes.remove(at: h)
                    rows.append(Row(graph: text(row, fold: foldMark), kind: .join, lanes: lanes.count, folded: foldedOpen > 0))
                }
            } else {
                lanes.append(n)
                col = lanes.count - 1
            }

            // Parents past the lanes left go to the fold.
            let room = laneLimit - lanes.count
            let shown = ps.isEmpty ? 0 : 1 + min(ps.count - 1, max(room, 0))
            for p in ps.dropFirst(shown) { fold(p) }
            let rowFold: Character? = foldedOpen > 0 ? ":" : nil
            // The change itself; an octopus (3+ parents) widens its row with "-." so each parent gets a lane.
            let extra = max(shown - 2, 0)
            var row = blank(2 * (lanes.count + extra))
            for p in lanes.indices {
                if p < col { row[2 * p] = "|" } else if p == col { row[2 * p] = "*" } else { row[2 * (p + extra)] = "|" }
            }
            if extra > 0 {
                for c in (2 * col + 1) ..< (2 * (col + extra)) { row[c] = "-" }
                row[2 * (col + extra)] = "."
            }
            let nodeRow = rows.count
            rows.append(Row(graph: text(row, fold: rowFold), kind: .node(n), lanes: 0, folded: false))

            // Hand the lane on to the parents.
            if ps.isEmpty {
                lanes.remove(at: col)
                if col < lanes.count {
                    var shift = blank(2 * (lanes.count + 1))
                    for p in 0 ..< col { shift[2 * p] = "|" }
                    for p in (col + 1) ... lanes.count { shift[2 * p - 1] = "/" }
                    rows.append(Row(graph: text(shift, fold: rowFold), kind: .handOff, lanes: lanes.count, folded: foldedOpen > 0))
                }
            } else {
                let before = lanes.count
                lanes[col] = ps[0]
                lanes.insert(contentsOf: ps.dropFirst().prefix(shown - 1), at: col + 1)
                if shown > 1 {
                    var fan = blank(2 * lanes.count)
                    for p in 0 ... col { fan[2 * p] = "|" }
                    for i in 1 ..< shown { fan[2 * (col + i) - 1] = "\\" }
                    for p in (col + 1) ..< before { fan[2 * (p + extra) + 1] = "\\" }
                    rows.append(Row(graph: text(fan, fold: rowFold), kind: .handOff, lanes: lanes.count, folded: foldedOpen > 0))
                }
            }
            rows[nodeRow].lanes = lanes.count
            rows[nodeRow].folded = foldedOpen > 0
        }
        return rows
    }

    /// Graph rows merged with each node's text lines: the first line beside the node's `*`, further
    /// lines beside the rows that follow it (fan-out rows first, then `|` rows as needed).
    func render(order: [Int], lines: (Int) -> [String]) -> [String] {
        renderCountingFolds(order: order, lines: lines).lines
    }

    /// `render(order:lines:)`, and how many changes were drawn in the fold column (see `rows`).
    func renderCountingFolds(order: [Int], lines: (Int) -> [String]) -> (lines: [String], folded: Int) {
        var out: [String] = []
        var text: [String] = []
        var open = 0, openFold = false, foldedNodes = 0
        let foldColumn = 2 * laneLimit
        func flush() {
            for line in text {
                var lanes = String(repeating: "| ", count: open)
                if openFold { lanes = lanes.padded(toLength: foldColumn) + ":" }
                out.append(Self.join(lanes.trimmingSuffixSpaces(), line))
            }
            text = []
        }
        for row in rows(order: order) {
            switch row.kind {
            case .join:
                flush()
                out.append(row.graph)
            case .node(let n):
                flush()
                text = lines(n)
                if row.graph.count > foldColumn && row.graph.last == "*" { foldedNodes += 1 }
                out.append(Self.join(row.graph, text.isEmpty ? "" : text.removeFirst()))
            case .handOff:
                out.append(Self.join(row.graph, text.isEmpty ? "" : text.removeFirst()))
            }
            open = row.lanes
            openFold = row.folded
        }
        flush()
        return (out, foldedNodes)
    }

    private static func join(_ graph: String, _ text: String) -> String {
        text.isEmpty ? graph : graph.padded(toLength: max(graph.count, 1)) + " " + text
    }
}

extension String {
    fileprivate func trimmingSuffixSpaces() -> String {
        var s = self
        while s.last == " " { s.removeLast() }
        return s
    }
}

/// A binary min-heap of node indices ordered by a rank table.
struct MinHeap<Element: BinaryInteger> {
    private var items: [Element] = []
    private let rank: [Int]

    init(by rank: [Int]) { self.rank = rank }

    private func less(_ a: Element, _ b: Element) -> Bool { rank[Int(a)] < rank[Int(b)] }

    mutating func push(_ x: Element) {
        items.append(x)
        var i = items.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard less(items[i], items[parent]) else { break }
            items.swapAt(i, parent)
            i = parent
        }
    }

    mutating func pop() -> Element? {
        guard let top = items.first else { return nil }
        let last = items.removeLast()
        if !items.isEmpty {
            items[0] = last
            var i = 0
            while true {
                let l = 2 * i + 1, r = l + 1
                var m = i
                if l < items.count && less(items[l], items[m]) { m = l }
                if r < items.count && less(items[r], items[m]) { m = r }
                if m == i { break }
                items.swapAt(i, m)
                i = m
            }
        }
        return top
    }
}
