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
