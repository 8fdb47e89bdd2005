import Foundation
import Testing
@testable import PeerNote

/// `OpLog.dropContent(ofChangesBelow:)`: a log keeps every change's entry and the ops and text
/// of the changes from the cut on, where they were (local versions, text positions).
@Suite("Dropping the content of a log's first changes")
struct DropContentTests {
    /// A log of typing runs across changes, deletes, retitles and tags, in every width of text.
    static func history() throws -> Document {
        let d = try sampleDocument()
        var rng = SeededRandom(state: 5)
        let words = ["a", "bc", "é", "日本", "😀", "\n", "xyz"]
        for round in 0 ..< 30 {
            guard let note = d.notes.randomElement(using: &rng) else { break }
            let length = note.body.unicodeScalars.count
            switch round % 5 {
            case 0, 1, 2: try d.insertText(note.id, at: Int.random(in: 0 ... length, using: &rng), words.randomElement(using: &rng) ?? "a")
            case 3 where length > 2: try d.deleteText(note.id, range: 1 ..< 2)
            default: try d.setNoteTitle(note.id, "t\(round)")
            }
        }
        return d
    }

    /// What a change's ops say, their inserted text included.
    static func content(_ log: OpLog, _ ci: Int) -> [String] {
        log.ops(ofChange: ci).map { op in
            if case .insertText(let n, let l, let r, let s) = op.body {
                return "\(op.lv) \(op.length) insert \(n) \(l) \(r) \(String(String.UnicodeScalarView(log.textView[s ..< s + op.length])))"
            }
            return "\(op.lv) \(op.length) \(op.body)"
        }
    }

    @Test("Each cut keeps the later changes' ops and text as they were, and every change's entry", arguments: [false, true])
    func eachCut(loaded: Bool) throws {
        let d = try Self.history()
        // Loaded, the text is read in the notes' arenas (deferred); built here, the log holds it.
        let original = loaded ? try Document.load(d.save()).log : d.log
        #expect(original.textIsDeferred == loaded)
        for cut in 0 ... original.changes.count {
            var log = original
            log.dropContent(ofChangesBelow: cut)
            #expect(log.changesWithoutContent == cut)
            #expect(log.changes.count == original.changes.count && log.lvCount == original.lvCount && log.textCount == original.textCount)
            #expect((cut ..< original.changes.count).map { original.changeID($0) } == (cut ..< log.changes.count).map { log.changeID($0) })
            let first = cut == original.changes.count ? original.lvCount : original.changes.lvStart(cut)
            #expect(log.ops.allSatisfy { $0.lv >= first }, "cut \(cut)")
            // (A cut at 0 lets nothing go, and leaves the log as it was.)
            let deferred = log.textIsDeferred
            #expect(deferred == (loaded && cut == 0), "cut \(cut)")
            for ci in cut ..< original.changes.count {
                #expect(Self.content(log, ci) == Self.content(original, ci), "cut \(cut), change \(ci)")
            }
        }
    }
}
