import Foundation
import Testing
@testable @_spi(Diagnostics) import PeerNote

/// Histories no honest writer makes but a file can hold (`ArbitraryHistory`): every copy of one
/// must read alike whatever order the copies are merged in, and keep its bytes through compaction.
@Suite("Arbitrary legal histories")
struct ArbitraryHistoryTests {
    /// Every order of `xs`.
    static func permutations<T>(_ xs: [T]) -> [[T]] {
        guard xs.count > 1 else { return [xs] }
        return xs.indices.flatMap { i in
            permutations(Array(xs[..<i] + xs[(i + 1)...])).map { [xs[i]] + $0 }
        }
    }

    @Test("Copies of an arbitrary legal history merge alike in every order and keep their bytes through compaction", arguments: 1 ... 30)
    func convergesInEveryOrder(seed: UInt64) throws {
        var rng = SeededRandom(state: seed)
        let copies = try ArbitraryHistory.simulate(replicas: 4, steps: 40, using: &rng)
        // Each copy as a file: refused with one clear line, or read (here every one is legal).
        var files: [[UInt8]] = []
        for copy in copies {
            let bytes = copy.save(.compact)
            do {
                let loaded = try Document.load(bytes)
                #expect(loaded.notebook == copy.notebook, "seed \(seed): a copy reads back as it was")
                files.append(bytes)
            } catch {
                #expect(!error.description.contains("\n"), "seed \(seed): one line")
                Issue.record("seed \(seed): a legal copy was refused: \(error.description)")
            }
        }
        #expect(files.count == copies.count)
        // Merged in every order, the copies show one notebook and compact to one file.
        var results: [(notebook: Notebook, bytes: [UInt8])] = []
        for order in Self.permutations(Array(files.indices)) {
            let merged = try Document.load(files[order[0]])
            for k in order.dropFirst() { try merged.merge(try Document.load(files[k])) }
            results.append((merged.notebook, merged.save(.compact)))
        }
        let first = try #require(results.first)
        #expect(results.allSatisfy { $0.notebook == first.notebook }, "seed \(seed): merge order changes the notebook")
        #expect(results.allSatisfy { $0.bytes == first.bytes }, "seed \(seed): merge order changes the compact file")
        // Pairwise, both ways, through `merged(with:)` (built from the longer history).
        for a in files.indices {
            for b in files.indices where b > a {
                let x = try Document.load(files[a]), y = try Document.load(files[b])
                let xy = try x.merged(with: y).document, yx = try y.merged(with: x).document
                #expect(xy.notebook == yx.notebook, "seed \(seed): copies \(a) and \(b) merge differently by direction")
                #expect(xy.save(.compact) == yx.save(.compact), "seed \(seed): copies \(a) and \(b) compact differently by direction")
            }
        }
        // Compact, load, compact: the same bytes, the same notebook.
        let reloaded = try Document.load(first.bytes)
        #expect(reloaded.notebook == first.notebook, "seed \(seed): the compact file reads differently")
        #expect(reloaded.save(.compact) == first.bytes, "seed \(seed): compaction changes the history's bytes")
        // Format version 3: loads, reads alike, and converts back to the same version 2 bytes.
        let v3 = reloaded.save(.compact, writeStructures: true)
        let fromV3 = try Document.load(v3)
        #expect(fromV3.notebook == first.notebook, "seed \(seed): the version 3 file reads differently")
        #expect(fromV3.save(.compact) == first.bytes, "seed \(seed): version 3 does not convert back")
        #expect(fromV3.save(.compact, writeStructures: true) == v3, "seed \(seed): version 3 compaction is not stable")
        // Appended blocks (rows out of canonical order): read as the compact file reads.
        let appended = try Document.load(files[0])
        for k in files.indices.dropFirst() {
            try appended.merge(try Document.load(files[k]))
            let bytes = appended.save(.incremental)
            let read = try Document.load(bytes)
            #expect(read.notebook == appended.notebook, "seed \(seed): a file with appended blocks reads differently")
        }
        #expect(try Document.load(appended.save(.incremental)).save(.compact) == first.bytes, "seed \(seed): appended blocks compact differently")
    }
}
