import Foundation
import Testing
@testable import PeerNote

/// `MergeSource`: a copy reduced to what a merge takes in. Merging one takes in what merging the
/// document it came from takes in, with the same summary, report baseline and refusals.
extension ConvergenceTests {
    @Test("Merging a MergeSource gives what merging its document gives, at random", arguments: [51, 52, 53])
    func mergeSourceMatchesDocument(seed: UInt64) throws {
        var merges = (inPlace: 0, fromLongerTheirs: 0)
        try forEachRandomPair(seed: seed) { round, mineBytes, theirsBytes in
            let source = try MergeSource.load(theirsBytes)
            let theirs = try Document.load(theirsBytes)
            #expect(source.id == theirs.id && source.genesis == theirs.genesis && source.changeCount == theirs.changeCount)

            // merge(_:)
            let mine = try Document.load(mineBytes), reference = try Document.load(mineBytes)
            #expect(mine.relation(to: source) == reference.relation(to: theirs))
            let baseline = mine.mergeBaseline(for: [source]), expectedBaseline = reference.mergeBaseline(for: [theirs])
            #expect(baseline.namedNotes == expectedBaseline.namedNotes && baseline.isWhole == expectedBaseline.isWhole, "round \(round)")
            let summary = try mine.merge(source), expected = try reference.merge(theirs)
            #expect(mine.save(.incremental) == reference.save(.incremental), "round \(round)")
            #expect(mine.save() == reference.save() && mine.notebook == reference.notebook && mine.conflicts == reference.conflicts)
            #expect(mine.unknownFields == reference.unknownFields)
            #expect(summary.changesByAuthor.map(\.author) == expected.changesByAuthor.map(\.author))
            #expect(summary.changesByAuthor.map(\.count) == expected.changesByAuthor.map(\.count))
            #expect(summary.fieldsAdded == expected.fieldsAdded)
            #expect(NotebookDiff(from: baseline, to: mine) == NotebookDiff(from: expectedBaseline, to: reference), "round \(round)")

            // mergedInPlace(with:): MINE is the result whichever history is longer.
            for keepingFile in [true, false] {
                let into = try Document.load(mineBytes), referenceMine = try Document.load(mineBytes)
                let (result, expected) = try referenceMine.merged(with: try Document.load(theirsBytes), keepingFile: keepingFile)
                if theirs.log.lvCount > into.log.lvCount { merges.fromLongerTheirs += 1 } else { merges.inPlace += 1 }
                let summary = try into.mergedInPlace(with: try MergeSource.load(theirsBytes), keepingFile: keepingFile)
                #expect(into.save(.incremental) == result.save(.incremental), "round \(round), keepingFile \(keepingFile)")
                #expect(into.save() == result.save() && into.notebook == result.notebook && into.conflicts == result.conflicts)
                #expect(summary.changesByAuthor.map(\.count) == expected.changesByAuthor.map(\.count))
                #expect(summary.fieldsAdded == expected.fieldsAdded)
                #expect(into.textOverlaps(of: summary) == result.textOverlaps(of: expected), "round \(round)")
            }
        }
        #expect(merges.inPlace > 0 && merges.fromLongerTheirs > 0, "both lengths met: \(merges)")
    }

    @Test("A MergeSource is refused where its document is: another notebook, a field of a newer version, a transaction open, a changed change")
    func mergeSourceRefusals() throws {
        let a = Document(title: "A", author: "a"), b = Document(title: "B", author: "b")
        _ = a.addNote(title: "one", body: "text of a")
        _ = b.addNote(title: "two", body: "text of b")
        let aBytes = a.save()
        let mine = try Document.load(aBytes)
        let other = try MergeSource.load(b.save())
        #expect(mine.identityRelation(to: other) == mine.identityRelation(to: b))
        #expect(throws: PeerNoteError.self) { try mine.merge(other) }
        #expect(throws: PeerNoteError.self) { try mine.mergedInPlace(with: other, keepingFile: true) }
        #expect(mine.save(.incremental) == aBytes, "unchanged")

        // One field of a newer version with two values.
        let x = try Document.load(aBytes), y = try Document.load(aBytes)
        x.unknownFields = [[0x18, 42, 0x61, 0x78]]
        y.unknownFields = [[0x18, 42, 0x61, 0x79]]
        let ySource = try MergeSource.load(y.save())
        let xBytes = x.save()
        #expect(throws: PeerNoteError.fieldConflict(key: 42)) { try x.merge(ySource) }
        #expect(x.save(.incremental) == xBytes, "unchanged")

        // A transaction open on this copy, or on the copy a source was taken from (for good:
        // its open change was still growing).
        let open = try Document.load(aBytes)
        open.transaction {
            #expect(throws: PeerNoteError.self) { try open.merge(try MergeSource.load(aBytes)) }
        }
        let into = try Document.load(aBytes), growing = try Document.load(aBytes)
        var taken: MergeSource?
        try growing.transaction {
            try growing.setBody(try #require(growing.notes.first).id, "typed so far")
            taken = growing.mergeSource
        }
        let source = try #require(taken)
        #expect(throws: PeerNoteError.self) { try into.merge(source) }
        #expect(throws: PeerNoteError.self) { try into.mergedInPlace(with: source, keepingFile: true) }
        #expect(into.save(.incremental) == aBytes, "unchanged")
        #expect(try into.merge(growing.mergeSource).changeCount == 1, "taken once the transaction closed")

        // One change id with different content in the two copies (two sessions that wrongly
        // share a replica id), named as merging the document names it.
        let (one, two, reused) = try LibraryGuardTests.copiesWithChangedChange()
        let changed = PeerNoteError.unrelated(.conflictingChange(ChangeID(replica: reused, seq: 1)))
        #expect(one.relation(to: two.mergeSource) == .conflictingChange(ChangeID(replica: reused, seq: 1)))
        #expect(throws: changed) { try one.merge(try MergeSource.load(two.save())) }
    }

    @Test("MergeSource.load refuses what Document.load refuses, with the same error")
    func mergeSourceLoadRefusals() throws {
        let d = Document(title: "T", author: "a")
        _ = d.addNote(title: "n", body: "some text")
        var bytes = d.save()
        bytes[bytes.count / 2] ^= 0x5A
        var documentError: PeerNoteError?, sourceError: PeerNoteError?
        do { _ = try Document.load(bytes) } catch { documentError = error }
        do { _ = try MergeSource.load(bytes) } catch { sourceError = error }
        #expect(documentError != nil)
        #expect(sourceError.map { "\($0)" } == documentError.map { "\($0)" })
    }
}

/// `MergeSource.keepingHistory(of:sharingFileWith:)`: a source that lets go of the content of
/// the changes the file it is merged into shares byte for byte. Merging it takes in what merging
/// the whole source takes in; merged into any other copy, it is refused.
extension ConvergenceTests {
    @Test("A source trimmed against the other copy's file merges as the whole source does, at random", arguments: [61, 62, 63])
    func trimmedSourceMatchesWhole(seed: UInt64) throws {
        var rng = SeededRandom(state: seed)
        let origin = Document(title: "Shared", author: "r0")
        for k in 0 ..< 4 { origin.addNote(title: "note \(k)", body: "body \(k) ✓") }
        let start = origin.save()
        // Each copy edits its own file by appending saves; now and then one takes in another,
        // or is replaced by a copy of another's file (a sync): files then share more blocks.
        var copies = try (0 ..< 3).map { k -> Document in
            let d = try Document.load(start)
            d.author = "r\(k)"
            return d
        }
        var files = Array(repeating: start, count: copies.count)
        var trimmedMerges = 0
        for round in 0 ..< 12 {
            for (k, d) in copies.enumerated() {
                for _ in 0 ..< Int.random(in: 1 ... 6, using: &rng) { try randomEdit(d, &rng) }
                if Int.random(in: 0 ..< 4, using: &rng) == 0 {
                    try d.merge(copies[(k + 1) % copies.count])
                }
                files[k] = d.save(.incremental)
            }
            if Int.random(in: 0 ..< 3, using: &rng) == 0 {
                let from = Int.random(in: 0 ..< copies.count, using: &rng), to = (from + 1) % copies.count
                copies[to] = try Document.load(files[from])
                copies[to].author = "r\(to)"
                files[to] = files[from]
            }
            for a in copies.indices {
                for b in copies.indices where a != b {
                    let (mineBytes, theirsBytes) = (files[a], files[b])
                    let trimmed = MergeSource.keepingHistory(of: try Document.load(theirsBytes), sharingFileWith: mineBytes)
                    let whole = try MergeSource.load(theirsBytes)
                    #expect(trimmed.log.changesWithoutContent > 0, "round \(round): every file starts with the first one's block")
                    #expect(trimmed.changeCount == whole.changeCount)
                    if trimmed.log.changesWithoutContent > 0 { trimmedMerges += 1 }

                    let mine = try Document.load(mineBytes), reference = try Document.load(mineBytes)
                    #expect(mine.relation(to: trimmed) == reference.relation(to: whole))
                    let baseline = mine.mergeBaseline(for: [trimmed]), expectedBaseline = reference.mergeBaseline(for: [whole])
                    #expect(baseline.namedNotes == expectedBaseline.namedNotes && baseline.isWhole == expectedBaseline.isWhole)
                    let summary = try mine.mergedInPlace(with: trimmed, keepingFile: true)
                    let expected = try reference.mergedInPlace(with: whole, keepingFile: true)
                    #expect(mine.save(.incremental) == reference.save(.incremental), "round \(round), \(a) ← \(b)")
                    #expect(mine.save() == reference.save() && mine.notebook == reference.notebook && mine.conflicts == reference.conflicts)
                    #expect(summary.changesByAuthor.map(\.author) == expected.changesByAuthor.map(\.author))
                    #expect(summary.changesByAuthor.map(\.count) == expected.changesByAuthor.map(\.count))
                    #expect(mine.textOverlaps(of: summary) == reference.textOverlaps(of: expected))
                }
            }
        }
        #expect(trimmedMerges > 0)
    }

    @Test("A trimmed source: a typing run cut where the shared blocks end, refused by a copy read from another file, taken whole again for it")
    func trimmedSourceEdges() throws {
        // One session types on across an appending save: the log joins its typing into one op
        // that runs past the shared block's end.
        let d = Document(title: "T", author: "a")
        let n = d.addNote(title: "n", body: "abc")
        let shared = d.save()
        try d.insertText(n, at: 3, "def")
        let theirsBytes = d.save(.incremental)
        let m = try Document.load(shared)
        m.author = "m"
        try m.setNoteTitle(n, "retitled")
        let mineBytes = m.save(.incremental)

        let theirs = try Document.load(theirsBytes)
        let cut = theirs.log.changes.lvEnd(theirs.log.changes.count - 2)
        #expect(theirs.log.ops.contains { $0.lv < cut && $0.lv + $0.length > cut }, "the typing is one op across the blocks")
        let trimmed = MergeSource.keepingHistory(of: theirs, sharingFileWith: mineBytes)
        #expect(trimmed.log.changesWithoutContent == theirs.log.changes.count - 1)
        #expect(trimmed.log.ops.allSatisfy { $0.lv >= cut } && trimmed.log.textView.count == theirs.log.textView.count)
        let mine = try Document.load(mineBytes)
        try mine.merge(trimmed)
        #expect(mine.notes.map(\.body) == ["abcdef"] && mine.notes.map(\.title) == ["retitled"])

        // A copy read from other bytes (the same changes, saved compact) does not hold the file
        // the source was trimmed against: refused, unchanged; the source taken whole merges.
        let elsewhere = try Document.load(try Document.load(mineBytes).save())
        let before = elsewhere.save()
        let refused = MergeSource.keepingHistory(of: try Document.load(theirsBytes), sharingFileWith: mineBytes)
        #expect(throws: PeerNoteError.self) { try elsewhere.merge(refused) }
        #expect(throws: PeerNoteError.self) { try elsewhere.mergedInPlace(with: refused, keepingFile: true) }
        #expect(elsewhere.save() == before)
        let retaken = try refused.takenWhole(for: elsewhere)
        #expect(retaken.log.changesWithoutContent == 0)
        try elsewhere.merge(retaken)
        #expect(elsewhere.notebook == mine.notebook)
        #expect(try refused.takenWhole(for: try Document.load(mineBytes)) === refused, "kept for the copy it was trimmed against")

        // Files that share no whole block (one saved compact since): nothing is let go.
        let untrimmed = MergeSource.keepingHistory(of: try Document.load(theirsBytes), sharingFileWith: before)
        #expect(untrimmed.log.changesWithoutContent == 0 && untrimmed.sharedFile == nil)
    }

    @Test("A trimmed source still finds a change both copies hold with different content, after the shared blocks")
    func trimmedSourceFindsChangedChange() throws {
        // Two sessions that wrongly share a replica id, each appending to one shared file.
        let base = Document(title: "Base", author: "b")
        base.addNote(title: "kept", body: "shared text")
        let start = base.save()
        let loaded = try Document.load(start)
        let reused = ReplicaID(high: 7, low: 7)
        func session(_ author: String) -> Document {
            let d = Document(id: loaded.id, genesis: loaded.genesis, log: loaded.log, state: loaded.state, replica: reused, author: author)
            d.persisted = loaded.persisted
            return d
        }
        let x = session("x"), y = session("y")
        try x.setNoteTitle(try #require(x.notes.first).id, "from x")
        try y.setNoteTitle(try #require(y.notes.first).id, "from y")
        let (xBytes, yBytes) = (x.save(.incremental), y.save(.incremental))
        #expect(Array(xBytes.prefix(start.count)) == start && Array(yBytes.prefix(start.count)) == start)
        let trimmed = MergeSource.keepingHistory(of: try Document.load(yBytes), sharingFileWith: xBytes)
        #expect(trimmed.log.changesWithoutContent > 0)
        let into = try Document.load(xBytes)
        #expect(throws: PeerNoteError.unrelated(.conflictingChange(ChangeID(replica: reused, seq: 1)))) { try into.merge(trimmed) }
        #expect(into.save(.incremental) == xBytes)
    }
}
