import Foundation
import PeerNote
@testable import PNMergeCommands
import Testing

/// `SharedTitle.newlyShared(baseline:diff:after:)`, which looks up only the titles a merge gave
/// notes, finds what comparing every title before and after the merge finds.
@Suite struct SharedTitleTests {
    /// A small deterministic generator (SplitMix64), so that a failing round can be replayed.
    struct Mix: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    @Test("The titles a merge newly shares are found from the notes it named")
    func namedNotesGiveTheSameSharedTitles() throws {
        var rng = Mix(state: 0x5EED)
        let titles = ["Same", "Other", "caf\u{e9}", "cafe\u{301}", ""]
        var found = 0
        for round in 0 ..< 300 {
            let base = Document(title: "Base", author: "a")
            var ids = (0 ..< Int.random(in: 1 ... 10, using: &rng)).map { base.addNote(title: titles.randomElement(using: &rng) ?? "", body: "b\($0)") }
            let mine = try Document.load(base.save()), theirs = try Document.load(base.save())
            for doc in [mine, theirs] {
                for _ in 0 ..< Int.random(in: 0 ... 5, using: &rng) {
                    let id = ids[Int.random(in: 0 ..< ids.count, using: &rng)]
                    let title = titles.randomElement(using: &rng) ?? ""
                    do {
                        switch Int.random(in: 0 ..< 5, using: &rng) {
                        case 0: try doc.setNoteTitle(id, title)
                        case 1: ids.append(doc.addNote(title: title))
                        case 2: try doc.deleteNote(id)
                        case 3: try doc.restoreNote(id)
                        default: try doc.setBody(id, "edited")
                        }
                    } catch {
                        continue  // an edit of a deleted note, a restore of a live one: skipped
                    }
                }
            }
            let before = mine.notebook
            let baseline = mine.mergeBaseline(for: [theirs])
            try mine.merge(theirs)
            let expected = SharedTitle.newlyShared(before: before, after: mine.notebook)
            let diff = NotebookDiff(from: baseline, to: mine)
            #expect(SharedTitle.newlyShared(baseline: baseline, diff: diff, after: mine) == expected, "round \(round)")
            if !expected.isEmpty { found += 1 }
        }
        #expect(found > 30, "\(found) rounds shared a title anew")
    }
}
