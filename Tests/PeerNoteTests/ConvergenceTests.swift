import Foundation
import Testing
@testable import PeerNote

/// SplitMix64: a small, seeded generator so "random" tests reproduce. Shared by the tests of this target.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite("Convergence")
struct ConvergenceTests {
    /// The B-tree list and the flat reference list, fed the same local and remote inserts and
    /// deletes in the same order, hold the same sequence (enough runs to split leaves many times).
    @Test("B-tree list matches the flat reference implementation", arguments: [1, 2, 3])
    func treeMatchesReference(seed: UInt64) throws {
        var rng = SeededRandom(state: seed)
        var tree = ListCRDT<Unicode.Scalar>()
        var ref = ReferenceList<Unicode.Scalar>()
        let agents: [UInt32] = [0, 1, 2]
        var counters: [UInt32] = [0, 0, 0]
        let less: (UInt32, UInt32) -> Bool = { $0 < $1 }
        var ids: [LocalID] = []
        var budget = Int.max
        for step in 0 ..< 2_000 {
            let agent = agents[Int.random(in: 0 ..< 3, using: &rng)]
            let choice = Int.random(in: 0 ..< 10, using: &rng)
            if choice < 6 || tree.visibleCount == 0 {
                // Insert: either at a visible position (local style) or with origins around a random known element (remote style).
                let len = Int.random(in: 1 ... 4, using: &rng)
                let (left, right): (LocalID, LocalID)
                if choice < 4 || ids.isEmpty {
                    let pos = Int.random(in: 0 ... tree.visibleCount, using: &rng)
                    (left, right) = tree.originsForInsert(atVisible: pos)
                    // The local-edit search (from the leaf the last one found) finds the same place.
                    let local = tree.originsForLocalInsert(atVisible: pos)
                    #expect(local.left == left && local.right == right, "step \(step): insert at \(pos)")
                } else {
                    let anchor = ids[Int.random(in: 0 ..< ids.count, using: &rng)]
                    (left, right) = ref.originsForInsert(after: anchor)
                }
                let id = LocalID(agent: agent, counter: counters[Int(agent)])
                counters[Int(agent)] += UInt32(len)
                let scalars = (0 ..< len).map { k in Unicode.Scalar(UInt8(97 + (step + k) % 26)) }
                try tree.integrate(id: id, originLeft: left, originRight: right, elements: scalars, budget: &budget, replicaLess: less)
                try ref.integrate(id: id, originLeft: left, originRight: right, elements: scalars, replicaLess: less)
                for k in 0 ..< len { ids.append(id.advanced(by: k)) }
            } else {
                let lo = Int.random(in: 0 ..< tree.visibleCount, using: &rng)
                let hi = min(tree.visibleCount, lo + Int.random(in: 1 ... 5, using: &rng))
                let spans = tree.visibleIDSpans(lo ..< hi)
                let first = tree.firstVisibleIDSpan(at: lo, maxLength: hi - lo)
                #expect(first.map { [$0.0.agent, $0.0.counter, UInt32($0.1)] } == spans.first.map { [$0.0.agent, $0.0.counter, UInt32($0.1)] })
                let firstLocal = tree.firstVisibleIDSpanForEdit(at: lo, maxLength: hi - lo)
                #expect(firstLocal.map { [$0.0.agent, $0.0.counter, UInt32($0.1)] } == spans.first.map { [$0.0.agent, $0.0.counter, UInt32($0.1)] }, "step \(step): delete at \(lo)")
                #expect(spans.map { [$0.0.agent, $0.0.counter, UInt32($0.1)] } == ref.visibleIDSpans(lo ..< hi).map { [$0.0.agent, $0.0.counter, UInt32($0.1)] })
                for (start, n) in spans {
                    let reversed = n > 1 && Bool.random(using: &rng)
                    let target = reversed ? start.advanced(by: n - 1) : start
                    try tree.delete(target: target, length: n, reversed: reversed)
                    try ref.delete(target: target, length: n, reversed: reversed)
                }
            }
            if step % 250 == 0 {
                #expect(String(String.UnicodeScalarView(tree.visibleElements)) == String(String.UnicodeScalarView(ref.visibleElements)))
                #expect(tree.visibleText == String(String.UnicodeScalarView(ref.visibleElements)))
            }
        }
        var treeAll: [LocalID] = [], refAll: [LocalID] = []
        tree.forEachElement { id, _, _ in treeAll.append(id) }
        ref.forEachElement { id, _, _ in refAll.append(id) }
        #expect(treeAll == refAll)
        #expect(tree.visibleCount == ref.visibleCount)
        for id in ids.shuffled(using: &rng).prefix(200) {
            #expect(tree.visibleIndex(of: id) == ref.visibleIndex(of: id))
        }
    }

    /// Typing runs, backspaces and jumps (local edits, whose search starts where the last one
    /// found its place), mixed with other replicas' inserts and deletes anywhere: every local
    /// search finds what a search from the root finds, and the text is the plain model's.
    @Test("Local edit searches from the last place match searches from the root", arguments: [5, 6])
    func localEditSearch(seed: UInt64) throws {
        var rng = SeededRandom(state: seed)
        var tree = ListCRDT<Unicode.Scalar>()
        var model: [Unicode.Scalar] = []
        var counters: [UInt32] = [0, 0]
        var budget = Int.max
        var pos = 0
        for step in 0 ..< 6_000 {
            let choice = Int.random(in: 0 ..< 100, using: &rng)
            let scalar = Unicode.Scalar(UInt8(97 + step % 26))
            if choice < 8 { pos = Int.random(in: 0 ... model.count, using: &rng) }
            if choice < 70 || model.isEmpty {
                // Agent 0 types at `pos`.
                let expected = tree.originsForInsert(atVisible: pos)
                let (left, right) = tree.originsForLocalInsert(atVisible: pos)
                #expect(left == expected.left && right == expected.right, "step \(step): typing at \(pos)")
                try tree.integrate(id: LocalID(agent: 0, counter: counters[0]), originLeft: left, originRight: right,
                                   elements: CollectionOfOne(scalar), budget: &budget, replicaLess: { $0 < $1 })
                counters[0] += 1
                model.insert(scalar, at: pos)
                pos += 1
            } else if choice < 85 {
                // Agent 0 deletes backwards (backspace) or forwards, one or a few characters.
                let n = min(Int.random(in: 1 ... 3, using: &rng), model.count)
                let from = pos >= n ? pos - n : min(pos, model.count - n)
                var remaining = n
                while remaining > 0 {
                    let expected = tree.firstVisibleIDSpan(at: from, maxLength: remaining)
                    let span = tree.firstVisibleIDSpanForEdit(at: from, maxLength: remaining)
                    #expect(span?.0 == expected?.0 && span?.1 == expected?.1, "step \(step): delete at \(from)")
                    guard let (start, length) = span else { break }
                    try tree.delete(target: start, length: length, reversed: false)
                    remaining -= length
                }
                model.removeSubrange(from ..< from + n)
                pos = from
            } else {
                // Agent 1 inserts or deletes somewhere else.
                let at = Int.random(in: 0 ... model.count, using: &rng)
                if Bool.random(using: &rng) || model.isEmpty {
                    let (left, right) = tree.originsForInsert(atVisible: at)
                    try tree.integrate(id: LocalID(agent: 1, counter: counters[1]), originLeft: left, originRight: right,
                                       elements: CollectionOfOne(scalar), budget: &budget, replicaLess: { $0 < $1 })
                    counters[1] += 1
                    model.insert(scalar, at: at)
                    if at < pos { pos += 1 }
                } else {
                    let x = min(at, model.count - 1)
                    let (start, _) = try #require(tree.firstVisibleIDSpan(at: x, maxLength: 1))
                    try tree.delete(target: start, length: 1, reversed: false)
                    model.remove(at: x)
                    if x < pos { pos -= 1 }
                }
            }
            pos = min(pos, model.count)
        }
        #expect(tree.visibleElements == model)
    }

    /// Typing on (`continueTyping`, which extends the run the last local edit found without
    /// finding origins or integrating), mixed with backspaces, jumps and another replica's
    /// edits: whenever it takes an insert it gives the origins a search from the root gives,
    /// and the list holds the same elements, ids and tombstones, in the same order, as a list
    /// that integrated every insert.
    @Test("Typing on a run gives what finding origins and integrating gives", arguments: [7, 8])
    func typingOnMatchesIntegrating(seed: UInt64) throws {
        var rng = SeededRandom(state: seed)
        var fast = ListCRDT<Unicode.Scalar>()
        var slow = ListCRDT<Unicode.Scalar>()
        var counters: [UInt32] = [0, 0]
        var budget = Int.max
        var pos = 0
        // Where agent 0 last stopped typing (kept in place as the text around it changes), so
        // that it can come back there after editing elsewhere.
        var mark = 0
        var taken = 0
        func same(_ a: ListCRDT<Unicode.Scalar>, _ b: ListCRDT<Unicode.Scalar>) -> Bool {
            var x: [String] = [], y: [String] = []
            a.forEachElement { id, e, d in x.append("\(id.agent).\(id.counter)\(e)\(d)") }
            b.forEachElement { id, e, d in y.append("\(id.agent).\(id.counter)\(e)\(d)") }
            return x == y
        }
        for step in 0 ..< 8_000 {
            let choice = Int.random(in: 0 ..< 100, using: &rng)
            let scalars = (0 ..< Int.random(in: 1 ... 2, using: &rng)).map { Unicode.Scalar(UInt8(97 + (step + $0) % 26)) }
            if choice < 6 {
                if Bool.random(using: &rng) {
                    pos = Int.random(in: 0 ... slow.visibleCount, using: &rng)
                } else {
                    // Back to where it stopped typing; its editor first asks where typing there
                    // goes, which finds the run it typed (its delete ops elsewhere took ids since).
                    pos = min(mark, slow.visibleCount)
                    _ = fast.originsForLocalInsert(atVisible: pos)
                }
            } else if choice < 72 || slow.visibleCount == 0 {
                // Agent 0 types at `pos`.
                let id = LocalID(agent: 0, counter: counters[0])
                let expected = slow.originsForInsert(atVisible: pos)
                try slow.integrate(id: id, originLeft: expected.left, originRight: expected.right, elements: scalars, budget: &budget, replicaLess: { $0 < $1 })
                if let right = fast.continueTyping(atVisible: pos, id: id, elements: scalars) {
                    taken += 1
                    #expect(id.advanced(by: -1) == expected.left && right == expected.right, "step \(step): typing at \(pos)")
                } else {
                    let (left, right) = fast.originsForLocalInsert(atVisible: pos)
                    try fast.integrate(id: id, originLeft: left, originRight: right, elements: scalars, budget: &budget, replicaLess: { $0 < $1 })
                }
                counters[0] += UInt32(scalars.count)
                pos += scalars.count
                mark = pos
            } else if choice < 86 {
                // Agent 0 deletes backwards (backspace) or forwards. Its delete ops take ids
                // too, so the next insert's ids do not continue the run it typed.
                let n = min(Int.random(in: 1 ... 3, using: &rng), slow.visibleCount)
                counters[0] += UInt32(n)
                let from = pos >= n ? pos - n : min(pos, slow.visibleCount - n)
                for tree in [0, 1] {
                    var remaining = n
                    while remaining > 0 {
                        let span = tree == 0 ? fast.firstVisibleIDSpanForEdit(at: from, maxLength: remaining) : slow.firstVisibleIDSpan(at: from, maxLength: remaining)
                        guard let (start, length) = span else { break }
                        if tree == 0 { try fast.delete(target: start, length: length, reversed: false) } else { try slow.delete(target: start, length: length, reversed: false) }
                        remaining -= length
                    }
                }
                pos = from
                if from + n <= mark { mark -= n } else if from < mark { mark = from }
            } else if choice < 90 {
                // Agent 0's editor asks where typing at the caret would go: the search finds the
                // run agent 0 typed, which other inserts may have followed since.
                _ = fast.originsForLocalInsert(atVisible: pos)
            } else {
                // Agent 1 inserts (often right where agent 0 types) or deletes somewhere.
                let at = Bool.random(using: &rng) ? pos : Int.random(in: 0 ... slow.visibleCount, using: &rng)
                if Bool.random(using: &rng) || slow.visibleCount == 0 {
                    let (left, right) = slow.originsForInsert(atVisible: at)
                    let id = LocalID(agent: 1, counter: counters[1])
                    try slow.integrate(id: id, originLeft: left, originRight: right, elements: scalars, budget: &budget, replicaLess: { $0 < $1 })
                    try fast.integrate(id: id, originLeft: left, originRight: right, elements: scalars, budget: &budget, replicaLess: { $0 < $1 })
                    counters[1] += UInt32(scalars.count)
                    if at < pos { pos += scalars.count }
                    if at < mark { mark += scalars.count }
                } else {
                    let x = min(at, slow.visibleCount - 1)
                    let (start, _) = try #require(slow.firstVisibleIDSpan(at: x, maxLength: 1))
                    try slow.delete(target: start, length: 1, reversed: false)
                    try fast.delete(target: start, length: 1, reversed: false)
                    if x < pos { pos -= 1 }
                    if x < mark { mark -= 1 }
                }
            }
            pos = min(pos, slow.visibleCount)
            if step % 500 == 0 {
                let equal = same(fast, slow)
                #expect(equal, "step \(step)")
            }
        }
        let equal = same(fast, slow)
        #expect(equal)
        #expect(fast.visibleElements == slow.visibleElements)
        // Most keystrokes type on; the others (after a jump, a delete or the other agent's
        // insert at the cursor) must integrate.
        #expect(taken > 2_000 && taken < 5_800, "typing on took \(taken) of the inserts")
    }

    /// Random edits on several replicas, merged in random orders over many rounds: all end in
    /// the same state and the same compact bytes.
    @Test("Replicas making random edits and merging in random orders converge", arguments: [11, 22, 33])
    func randomReplicasConverge(seed: UInt64) throws {
        var rng = SeededRandom(state: seed)
        let origin = Document(title: "Shared", author: "r0")
        let replicas = (0 ..< 4).map { origin.fork(author: "r\($0)") }
        for _ in 0 ..< 12 {
            for doc in replicas {
                for _ in 0 ..< Int.random(in: 1 ... 6, using: &rng) { try randomEdit(doc, &rng) }
            }
            for _ in 0 ..< 3 {
                let a = replicas[Int.random(in: 0 ..< replicas.count, using: &rng)]
                let b = replicas[Int.random(in: 0 ..< replicas.count, using: &rng)]
                try a.merge(b)
            }
            // Every copy, conflicts and deleted notes and all, saves to bytes that load as it.
            for doc in replicas {
                let loaded = try Document.load(doc.save())
                #expect(loaded.notebook == doc.notebook && loaded.conflicts == doc.conflicts && loaded.deletedNotes == doc.deletedNotes)
            }
        }
        // Everyone merges everyone, in a random order per replica.
        for doc in replicas {
            for other in replicas.shuffled(using: &rng) { try doc.merge(other) }
        }
        for doc in replicas {
            for other in replicas { try doc.merge(other) }
        }
        let reference = replicas[0].notebook
        let bytes = replicas[0].save()
        for doc in replicas.dropFirst() {
            #expect(doc.notebook == reference)
            #expect(doc.save() == bytes)
        }
        // Loading the merged bytes gives the same state again.
        #expect(try Document.load(bytes).notebook == reference)
    }

    /// `merged(with:)` builds its result from the copy with the longer history, which is either
    /// copy; whichever it takes, it gives what forking the first copy and merging the second into
    /// it gives (notebook, conflicts, compact bytes, summary, places both sides edited), and
    /// leaves both copies as they were.
    @Test("mergedInPlace(with:) gives what merged(with:) gives, from whichever copy is longer, and leaves the other as it was", arguments: [44, 45, 46])
    func mergedInPlaceMatchesMerged(seed: UInt64) throws {
        var built = (fromMine: 0, fromTheirs: 0)
        try forEachRandomPair(seed: seed) { round, mineBytes, theirsBytes in
            for keepingFile in [true, false] {
                let mine = try Document.load(mineBytes), theirs = try Document.load(theirsBytes)
                mine.author = "me"
                let referenceMine = try Document.load(mineBytes)
                referenceMine.author = "me"
                let (reference, expected) = try referenceMine.merged(with: try Document.load(theirsBytes), keepingFile: keepingFile)
                let longer = theirs.log.lvCount > mine.log.lvCount
                if longer { built.fromTheirs += 1 } else { built.fromMine += 1 }
                let (result, summary) = try mine.mergedInPlace(with: theirs, keepingFile: keepingFile)
                #expect(result === (longer ? theirs : mine), "round \(round): the longer copy is the result")
                let untouched = longer ? mine : theirs
                #expect(untouched.save(.incremental) == (longer ? mineBytes : theirsBytes), "round \(round): the other copy as it was")
                // (The incremental saves first: a save records what it wrote, and a later
                // incremental save appends to that.)
                #expect(result.save(.incremental) == reference.save(.incremental), "round \(round), keepingFile \(keepingFile)")
                #expect(result.notebook == reference.notebook, "round \(round)")
                #expect(result.conflicts == reference.conflicts)
                #expect(result.save() == reference.save())
                #expect(result.unknownFields == reference.unknownFields)
                #expect(result.author == "me")
                #expect(summary.fieldsAdded == expected.fieldsAdded)
                #expect(summary.changesByAuthor.map(\.author) == expected.changesByAuthor.map(\.author))
                #expect(summary.changesByAuthor.map(\.count) == expected.changesByAuthor.map(\.count))
                #expect(result.textOverlaps(of: summary) == reference.textOverlaps(of: expected), "round \(round)")
            }
        }
        #expect(built.fromMine > 0 && built.fromTheirs > 0, "both ways taken: \(built)")
    }

    /// Ten rounds of `editRound` on three forks of one notebook, and after each, three times,
    /// two copies picked at random (not the same one) as a tool has them: saved, for `body` to load.
    func forEachRandomPair(seed: UInt64, _ body: (_ round: Int, _ mine: [UInt8], _ theirs: [UInt8]) throws -> Void) throws {
        var rng = SeededRandom(state: seed)
        let origin = Document(title: "Shared", author: "r0")
        let replicas = (0 ..< 3).map { origin.fork(author: "r\($0)") }
        for round in 0 ..< 10 {
            try editRound(round, replicas, &rng)
            for _ in 0 ..< 3 {
                let a = Int.random(in: 0 ..< replicas.count, using: &rng), b = Int.random(in: 0 ..< replicas.count, using: &rng)
                guard a != b else { continue }
                try body(round, replicas[a].save(), replicas[b].save())
            }
        }
    }

    @Test("mergedInPlace(with:) refuses unrelated copies and copies with a transaction open, changing neither")
    func mergedInPlaceRefusals() throws {
        let a = Document(title: "A", author: "a"), b = Document(title: "B", author: "b")
        _ = a.addNote(title: "one", body: "text of a")
        _ = b.addNote(title: "two", body: "text of b, longer than a's")
        let (aBytes, bBytes) = (a.save(), b.save())
        let mine = try Document.load(aBytes), theirs = try Document.load(bBytes)
        #expect(throws: PeerNoteError.self) { try mine.mergedInPlace(with: theirs, keepingFile: true) }
        #expect(mine.save(.incremental) == aBytes && theirs.save(.incremental) == bBytes, "neither copy changed")
        // A copy of one notebook with a transaction open on the longer one.
        let base = try Document.load(aBytes), longer = try Document.load(aBytes)
        try longer.setBody(try #require(longer.notes.first).id, "text of a, edited at length")
        let longerBytes = longer.save()
        longer.transaction {
            #expect(throws: PeerNoteError.self) { try base.mergedInPlace(with: longer, keepingFile: true) }
        }
        #expect(base.save(.incremental) == aBytes && longer.save(.incremental) == longerBytes, "neither copy changed")
    }

    @Test("merged(with:) gives what merge gives, built from either copy, and changes neither", arguments: [41, 42, 43])
    func mergedWithMatchesMerge(seed: UInt64) throws {
        var rng = SeededRandom(state: seed)
        let origin = Document(title: "Shared", author: "r0")
        let replicas = (0 ..< 3).map { origin.fork(author: "r\($0)") }
        var built = (fromMine: 0, fromTheirs: 0), overlapsFound = 0
        for round in 0 ..< 10 {
            try editRound(round, replicas, &rng)
            for _ in 0 ..< 3 {
                let mine = replicas[Int.random(in: 0 ..< replicas.count, using: &rng)]
                let theirs = replicas[Int.random(in: 0 ..< replicas.count, using: &rng)]
                let (mineBytes, theirsBytes) = (mine.save(), theirs.save())
                let (mineUnits, theirsUnits) = (mine.log.lvCount, theirs.log.lvCount)
                let (result, summary) = try mine.merged(with: theirs)
                let reference = mine.fork()
                let expected = try reference.merge(theirs)
                // Its incremental save appends to MINE's file what MINE's own would after a merge.
                let loaded = try Document.load(mineBytes)
                try loaded.merge(theirs)
                let appended = result.save(.incremental)
                #expect(appended == loaded.save(.incremental), "round \(round)")
                #expect(try Document.load(appended).notebook == reference.notebook)
                if theirsUnits > mineUnits { built.fromTheirs += 1 } else { built.fromMine += 1 }
                #expect(result.notebook == reference.notebook, "round \(round)")
                #expect(result.conflicts == reference.conflicts)
                #expect(result.save() == reference.save())
                #expect(result.unknownFields == reference.unknownFields)
                #expect(summary == expected && summary.fieldsAdded == expected.fieldsAdded)
                #expect(summary.changesByAuthor.map(\.author) == expected.changesByAuthor.map(\.author))
                let overlaps = result.textOverlaps(of: summary)
                #expect(overlaps == reference.textOverlaps(of: expected))
                overlapsFound += overlaps.count
                #expect(result.author == mine.author && result.replica != mine.replica && result.replica != theirs.replica)
                #expect(mine.save() == mineBytes && theirs.save() == theirsBytes, "neither copy changed")
                // The result goes on like any copy: an edit on it merges back into both.
                if let note = result.notes.first {
                    try result.insertText(note.id, at: 0, "m")
                    try mine.merge(result)
                    try theirs.merge(result)
                    #expect(mine.notebook == result.notebook && theirs.notebook == result.notebook)
                }
            }
        }
        #expect(built.fromMine > 0 && built.fromTheirs > 0, "both ways taken: \(built)")
        // A copy with edits its file does not hold yet, merged with a longer one: the result's
        // incremental save appends those edits too, and a later one only what came after.
        let (short, long) = (replicas[0].fork(author: "s"), replicas[1].fork(author: "l"))
        for _ in 0 ..< 30 { try randomEdit(long, &rng) }
        let shortFile = short.save()
        short.setTitle("unsaved")
        let (result, _) = try short.merged(with: long)
        let everything = short.fork()
        try everything.merge(long)
        #expect(result.changeCount == everything.changeCount && result.notebook == everything.notebook)
        let once = result.save(.incremental)
        #expect(Array(once.prefix(shortFile.count)) == shortFile)
        // Byte for byte what the copy's own merge appends: its unsaved edit first, then the rest.
        try short.merge(long)
        #expect(short.save(.incremental) == once)
        let reloaded = try Document.load(once)
        #expect(reloaded.notebook == result.notebook && reloaded.changeCount == result.changeCount)
        if let note = result.notes.first { try result.insertText(note.id, at: 0, "later") }
        let twice = result.save(.incremental)
        #expect(Array(twice.prefix(once.count)) == once)
        // Chained (as pnmerge merges several THEIRS): each result appends what merging each in
        // turn into MINE would, whichever copy each step was built from.
        for _ in 0 ..< 6 {
            let others = replicas.shuffled(using: &rng)
            let longer = others[0].fork(author: "f")
            for _ in 0 ..< Int.random(in: 0 ... 40, using: &rng) { try randomEdit(longer, &rng) }
            let file = others[1].save()
            let mine = try Document.load(file)
            if Bool.random(using: &rng) { try randomEdit(mine, &rng) }   // an edit its file lacks
            let reference = mine.fork()
            reference.persisted = mine.persisted
            var chained = mine
            for theirs in [others[2], longer].shuffled(using: &rng) {
                (chained, _) = try chained.merged(with: theirs)
                try reference.merge(theirs)
            }
            let bytes = chained.save(.incremental)
            #expect(bytes == reference.save(.incremental))
            #expect(Array(bytes.prefix(file.count)) == file)
            #expect(try Document.load(bytes).notebook == reference.notebook)
        }
        #expect(try Document.load(twice).notebook == result.notebook)
        #expect(overlapsFound > 0, "places both sides edited were compared")
    }

    /// Save encodes a run of changes that continue each other (one per keystroke) a run at a
    /// time; a block decoded from the file is encoded one change at a time. Both must give the
    /// same bytes, for compact saves of merged replicas (changes in an order that interleaves
    /// the replicas' runs) and for the blocks incremental saves append.
    @Test("Save's run-at-a-time encoding writes what change-at-a-time encoding does", arguments: [3, 4])
    func runEncodingMatchesPerChange(seed: UInt64) throws {
        var rng = SeededRandom(state: seed)
        let origin = Document(title: "Runs", author: "r0")
        let note = origin.addNote(title: "n", body: "")
        let replicas = (0 ..< 3).map { origin.fork(author: "r\($0)") }
        var files = replicas.map { $0.save(.incremental) }
        for _ in 0 ..< 6 {
            for (k, doc) in replicas.enumerated() {
                for _ in 0 ..< Int.random(in: 0 ... 2, using: &rng) { try randomEdit(doc, &rng) }
                // Keystrokes: one change each.
                let count = doc.notebook.notes.first { $0.id == note }?.body.unicodeScalars.count ?? 0
                var at = Int.random(in: 0 ... count, using: &rng)
                for _ in 0 ..< Int.random(in: 0 ... 30, using: &rng) where doc.notebook.notes.contains(where: { $0.id == note }) {
                    try doc.insertText(note, at: at, "k")
                    at += 1
                }
                files[k] = doc.save(.incremental)
            }
            let a = replicas[Int.random(in: 0 ..< replicas.count, using: &rng)]
            try a.merge(replicas[Int.random(in: 0 ..< replicas.count, using: &rng)])
        }
        for (k, doc) in replicas.enumerated() {
            for bytes in [files[k], doc.save(.compact)] {
                let raws = try BlockCodec.decode(bytes)
                let blocks = try WireCodec.decodePayloads(raws, fileSize: bytes.count)
                for (raw, block) in zip(raws, blocks) {
                    #expect(block.generatedChanges == nil)
                    #expect(WireCodec.encodePayload(block) == raw.payload, "replica \(k), block at \(raw.offset)")
                }
            }
        }
    }

    /// Merge takes a run of keystrokes from the other copy as one stretch (the way loading
    /// does) when the run continues the change it imported just before. Merging after every
    /// keystroke imports one change at a time instead; both must give the same notebook and the
    /// same bytes, with typing and deleting in both directions, concurrent edits at the same
    /// place, and copies that already hold part of a run.
    @Test("Merging keystrokes a stretch at a time gives what merging them one at a time gives", arguments: [5, 6, 7])
    func stretchImportMatchesOneByOne(seed: UInt64) throws {
        var rng = SeededRandom(state: seed)
        let origin = Document(title: "Stretch", author: "o")
        let note = origin.addNote(title: "n", body: "seed text")
        let writer = origin.fork(author: "w"), other = origin.fork(author: "x")
        let stepwise = origin.fork(author: "s"), atOnce = origin.fork(author: "a")
        func length(_ d: Document) -> Int { d.notebook.notes.first { $0.id == note }?.body.unicodeScalars.count ?? 0 }
        for round in 0 ..< 8 {
            // The writer types or deletes a run, one change per keystroke; `stepwise` merges
            // after each keystroke, `atOnce` after the run (and now and then halfway).
            var at = Int.random(in: 0 ... length(writer), using: &rng)
            let backwards = Bool.random(using: &rng)
            for key in 0 ..< Int.random(in: 1 ... 40, using: &rng) {
                switch Int.random(in: 0 ..< 3, using: &rng) {
                case 0 where length(writer) > 0:
                    if backwards && at > 0 { at -= 1 } else { at = min(at, length(writer) - 1) }
                    try writer.deleteText(note, range: at ..< at + 1)
                default:
                    try writer.insertText(note, at: min(at, length(writer)), "\(key % 10)")
                    at = min(at, length(writer) - 1) + 1
                }
                try stepwise.merge(writer)
                if key == 17 && round % 2 == 0 { try atOnce.merge(writer) }
            }
            // Someone else edits the same place concurrently, and both copies take it.
            if round % 3 == 1 {
                try other.insertText(note, at: min(at, length(other)), "xyz")
                try writer.merge(other)
            }
            try atOnce.merge(writer)
            try stepwise.merge(other)
            try atOnce.merge(other)
            #expect(atOnce.notebook == stepwise.notebook, "round \(round)")
        }
        #expect(atOnce.save() == stepwise.save())
        #expect(try Document.load(atOnce.save()).notebook == writer.notebook)
        #expect(writer.notebook == stepwise.notebook)
    }

    /// A file's base block replayed on two threads (`BlockReplayer.replayBase`: the log on one,
    /// the state from the block alone on the other) gives what one thread gives: the same lists
    /// element by element (ids, characters, tombstones, order), registers, notebook, conflicts,
    /// heads and saves, or the same error.
    static func expectSameLoad(_ bytes: [UInt8], _ what: String) {
        let one = Result { () throws(PeerNoteError) in try Document.load(bytes, concurrentFrom: .max) }
        let two = Result { () throws(PeerNoteError) in try Document.load(bytes, concurrentFrom: 0) }
        switch (one, two) {
        case (.failure(let a), .failure(let b)):
            #expect(a == b, "\(what): \(a) against \(b)")
        case (.success(let a), .success(let b)):
            // What an appending save is checked from (before a save, which uses it up): the same
            // work spent and the same totals.
            let va = a.persisted?.verified, vb = b.persisted?.verified
            #expect(va?.workSpent == vb?.workSpent && va?.totals == vb?.totals && va?.rows == vb?.rows, "\(what): the verified file")
            // What the next appended block's limits are counted from.
            #expect(a.persisted?.opRows == b.persisted?.opRows && a.persisted?.predecessors == b.persisted?.predecessors, "\(what): the file's rows")
            #expect(a.notebook == b.notebook, "\(what)")
            #expect(a.conflicts == b.conflicts, "\(what)")
            #expect(a.heads == b.heads && a.changeCount == b.changeCount, "\(what)")
            #expect(a.save(.compact) == b.save(.compact), "\(what)")
            #expect(a.save(.incremental) == b.save(.incremental), "\(what)")
            func elements<E>(_ list: ListCRDT<E>) -> [String] {
                var out: [String] = []
                list.forEachElement { id, e, deleted in out.append("\(id.agent).\(id.counter) \(e) \(deleted)") }
                return out
            }
            func entries<V>(_ r: MVRegister<V>) -> [String] { r.sortedEntries(replicas: a.log.replicas).map { "\($0.id.agent).\($0.id.counter) \($0.lamport) \($0.value)" } }
            let x = a.state, y = b.state
            #expect(elements(x.order) == elements(y.order), "\(what): the order of notes")
            #expect(entries(x.title) == entries(y.title), "\(what)")
            #expect(x.noteStates.count == y.noteStates.count, "\(what)")
            for (m, n) in zip(x.noteStates, y.noteStates) {
                #expect(m.id == n.id && m.created == n.created, "\(what)")
                #expect(elements(m.body) == elements(n.body), "\(what): the body of note \(m.id)")
                #expect(entries(m.title) == entries(n.title) && entries(m.priority) == entries(n.priority)
                        && entries(m.deleted) == entries(n.deleted) && entries(m.position) == entries(n.position), "\(what): note \(m.id)")
                #expect(m.tags == n.tags, "\(what): note \(m.id)")
            }
        default:
            Issue.record("\(what): one thread gives \(one), two give \(two)")
        }
    }

    @Test("A base block replayed on two threads gives what one thread gives: random histories of several copies, typing, merges, appended blocks",
          arguments: [61, 62, 63])
    func concurrentLoadMatches(seed: UInt64) throws {
        var rng = SeededRandom(state: seed)
        let origin = Document(title: "Shared", author: "r0")
        let replicas = (0 ..< 3).map { origin.fork(author: "r\($0)") }
        var files = 0
        for round in 0 ..< 8 {
            for doc in replicas {
                for _ in 0 ..< Int.random(in: 1 ... 8, using: &rng) { try randomEdit(doc, &rng) }
                // Keystrokes: changes stored as continuing the one before.
                if let n = doc.notes.randomElement(using: &rng) {
                    var at = Int.random(in: 0 ... n.body.unicodeScalars.count, using: &rng)
                    for c in "typed".unicodeScalars { try doc.insertText(n.id, at: at, String(c)); at += 1 }
                    for _ in 0 ..< Int.random(in: 0 ... 3, using: &rng) { try doc.deleteText(n.id, range: at - 1 ..< at); at -= 1 }
                }
            }
            let a = replicas[Int.random(in: 0 ..< replicas.count, using: &rng)]
            try a.merge(replicas[Int.random(in: 0 ..< replicas.count, using: &rng)])
            for (k, doc) in replicas.enumerated() {
                Self.expectSameLoad(doc.save(.compact), "seed \(seed), round \(round), copy \(k), compact")
                // A loaded copy edited and saved incrementally: its base block, then appended ones.
                let loaded = try Document.load(doc.save(.compact))
                try randomEdit(loaded, &rng)
                Self.expectSameLoad(loaded.save(.incremental), "seed \(seed), round \(round), copy \(k), appended")
                files += 2
            }
        }
        let (keys, _) = try LoadShortcutTests.keystrokes()
        Self.expectSameLoad(keys.save(.compact), "keystrokes")
        #expect(files == 48)
    }

    @Test("A base block replayed on two threads gives what one thread gives: every fixture, damaged and fuzz files included")
    func concurrentLoadMatchesOnFixtures() throws {
        let root = FixtureCatalog.directory.path
        var names: [String] = []
        for folder in ["", "damaged/", "fuzz/"] {
            let entries = try FileManager.default.contentsOfDirectory(atPath: root + "/" + folder)
            names += entries.filter { $0.hasSuffix(".peernote") }.map { folder + $0 }
        }
        #expect(names.count >= 30, "\(names.count) fixtures")
        // fuzz/many-blocks.peernote is 2.4 MB of appended blocks (replayed on one thread either
        // way) after a small base block, and takes seconds to load twice in a debug build.
        for name in names where name != "fuzz/many-blocks.peernote" { Self.expectSameLoad(try FixtureCatalog.bytes(name), name) }
    }

    /// One random edit of any kind (shared with `DerivedOriginsTests`).
    /// One round of the `merged(with:)` tests: random edits on every copy, and in rounds 3 and 6
    /// fields a newer version wrote, on one copy or the other.
    func editRound(_ round: Int, _ replicas: [Document], _ rng: inout SeededRandom) throws {
        for doc in replicas {
            for _ in 0 ..< Int.random(in: 1 ... 8, using: &rng) { try randomEdit(doc, &rng) }
        }
        if round == 3 { replicas[1].unknownFields = [[0x15, 0x61, 0x63]] }
        if round == 6 { replicas[2].unknownFields = [[0x16, 0x61, 0x64]] }
    }

    func randomEdit(_ doc: Document, _ rng: inout SeededRandom) throws {
        let notes = doc.notes
        let words = ["milk", "eggs", "plan", "todo", "fix", "draft", "ok", "日本", "✓", "\n"]
        switch Int.random(in: 0 ..< 14, using: &rng) {
        case 0, 1:
            doc.addNote(title: words.randomElement(using: &rng) ?? "n", body: words.randomElement(using: &rng) ?? "",
                        at: Int.random(in: 0 ... notes.count, using: &rng))
        case 2 where !notes.isEmpty:
            try doc.deleteNote(notes.randomElement(using: &rng)!.id)
        case 3 where !doc.deletedNotes.isEmpty:
            try doc.restoreNote(doc.deletedNotes.randomElement(using: &rng)!.id)
        case 4 where notes.count > 1:
            try doc.moveNote(notes.randomElement(using: &rng)!.id, to: Int.random(in: 0 ..< notes.count, using: &rng))
        case 5 where !notes.isEmpty:
            try doc.setNoteTitle(notes.randomElement(using: &rng)!.id, words.randomElement(using: &rng) ?? "t")
        case 6 where !notes.isEmpty:
            try doc.setPriority(notes.randomElement(using: &rng)!.id, Priority.allCases.randomElement(using: &rng) ?? .low)
        case 7 where !notes.isEmpty:
            try doc.addTag(notes.randomElement(using: &rng)!.id, ["a", "b", "c"].randomElement(using: &rng) ?? "a")
        case 8 where !notes.isEmpty:
            let n = notes.randomElement(using: &rng)!
            if let t = n.tags.randomElement(using: &rng) { try doc.removeTag(n.id, t) }
        case 9:
            doc.setTitle(words.randomElement(using: &rng) ?? "T")
        case 10 where !notes.isEmpty, 11 where !notes.isEmpty:
            let n = notes.randomElement(using: &rng)!
            let count = n.body.unicodeScalars.count
            try doc.insertText(n.id, at: Int.random(in: 0 ... count, using: &rng), words.randomElement(using: &rng) ?? "x")
        case 12 where !notes.isEmpty:
            let n = notes.randomElement(using: &rng)!
            let count = n.body.unicodeScalars.count
            if count > 0 {
                let lo = Int.random(in: 0 ..< count, using: &rng)
                try doc.deleteText(n.id, range: lo ..< min(count, lo + Int.random(in: 1 ... 4, using: &rng)))
            }
        case 13 where !notes.isEmpty:
            let n = notes.randomElement(using: &rng)!
            var body = n.body
            body = body.replacingOccurrences(of: "o", with: "0")
            try doc.setBody(n.id, body + "!")
        default:
            break
        }
    }
}
