import Foundation
import Testing
@testable import PeerNote

/// Loading appends a stretch of keystroke changes at once when the file stores their ops as one
/// op (typing and deleting): the result must be what change-by-change replay
/// gives, and a damaged stretch must be refused as it was.
@Suite("Load shortcuts")
struct LoadShortcutTests {
    /// A note typed, then erased one keystroke per change: backspaces (a reversed delete run),
    /// forward deletes (a forward run), and a run that changes direction.
    static func keystrokes(savingTypingFirst: Bool = false) throws -> (Document, NoteID) {
        let doc = Document(title: "keys", author: "kim", id: UUID(uuidString: "5E0C7B1A-0000-4000-8000-00000000D0C5") ?? UUID(),
                           replica: ReplicaID(high: 0x5E, low: 0xC7), time: Date(timeIntervalSince1970: 1_700_000_000))
        doc.clock = { Date(timeIntervalSince1970: 1_700_000_100) }
        let note = doc.addNote(title: "n")
        let text = Array("the quick brown fox jumps over the lazy dog, again and again".unicodeScalars)
        for (k, c) in text.enumerated() { try doc.insertText(note, at: k, String(c)) }
        if savingTypingFirst { _ = doc.save(.compact) }
        var length = text.count
        for _ in 0 ..< 12 { try doc.deleteText(note, range: length - 1 ..< length); length -= 1 }   // backspace
        for _ in 0 ..< 9 { try doc.deleteText(note, range: 4 ..< 5); length -= 1 }                 // forward delete
        for _ in 0 ..< 3 { try doc.deleteText(note, range: 10 ..< 11); length -= 1 }
        for _ in 0 ..< 3 { try doc.deleteText(note, range: 9 ..< 10); length -= 1 }                 // then backspace there
        return (doc, note)
    }

    @Test("A file of deleting keystrokes loads to the same op log, state and bytes as the document that wrote it")
    func roundTrip() throws {
        let (doc, note) = try Self.keystrokes()
        let bytes = doc.save(.compact)
        let loaded = try Document.load(bytes)
        #expect(loaded.note(note)?.body == doc.note(note)?.body)
        #expect(loaded.save(.compact) == bytes)
        #expect(loaded.log.ops.map(\.length) == doc.log.ops.map(\.length))
        #expect(loaded.log.ops.map(\.body) == doc.log.ops.map(\.body))
        #expect(loaded.log.changes.count == doc.log.changes.count)
        #expect(loaded.relation(to: doc) == .shared)
    }

    @Test("The same keystrokes in an incremental file (the delete runs in an appended block) load to the same document")
    func incremental() throws {
        let (doc, note) = try Self.keystrokes(savingTypingFirst: true)
        let bytes = doc.save(.incremental)
        let loaded = try Document.load(bytes)
        #expect(loaded.note(note)?.body == doc.note(note)?.body)
        #expect(loaded.log.ops.map(\.body) == doc.log.ops.map(\.body))
        #expect(loaded.save(.compact) == doc.save(.compact))
    }

    /// (The shortcut's own reference check is conservative: it passes only when every change's
    /// would. Disabling it leaves these cases refused by the state, which applies each op after
    /// its block is read; the check keeps the refusal where the per-change path makes it.)
    @Test("A delete run whose targets reach past what exists, or into the future, is refused with the per-change message")
    func damagedRuns() throws {
        let (doc, _) = try Self.keystrokes()
        let file = doc.save(.compact)
        let (_, block) = try FixtureFactory.singleBlock(file)
        let deletes = block.ops.indices.filter { if case .deleteText = block.ops[$0].body { block.ops[$0].length > 2 } else { false } }
        try #require(deletes.count >= 2, "the document has delete runs")
        for k in deletes {
            guard case .deleteText(let n, let t, let rev) = block.ops[k].body else { continue }
            for target in [LocalID(agent: t.agent, counter: rev ? UInt32(block.ops[k].length - 2) : 5_000),   // past the end, or below 0 half-way
                           LocalID(agent: t.agent, counter: 200)] {                                               // units not yet made
                var bad = block
                bad.ops[k].body = .deleteText(note: n, target: target, reversed: rev)
                let damaged = FixtureFactory.envelope(payload: WireCodec.encodePayload(bad))
                #expect(throws: PeerNoteError.self, "op \(k) target \(target.counter)") { try Document.load(damaged) }
                do {
                    _ = try Document.load(damaged)
                } catch {
                    let text = "\(error)"
                    #expect(text.contains("refers to") || text.contains("counts down past") || text.contains("does not exist"), "\(text)")
                }
            }
        }
    }

    @Test("Finding the change that holds a unit from a hint agrees with the plain search, for every unit and many hints")
    func changeIndexFromHint() throws {
        let (typed, note) = try Self.keystrokes()
        // Another copy's changes merged in (other runs, other agents), multi-unit inserts, a pasted
        // paragraph, and changes without units (an empty transaction), so that runs hold changes
        // of several lengths and some changes start where others do.
        let other = typed.fork(author: "lee")
        try other.insertText(note, at: 0, "pasted paragraph ")
        for k in 0 ..< 5 { try other.insertText(note, at: k, "ab") }
        try typed.insertText(note, at: 3, "xyz")
        try typed.merge(other)
        // Changes without units, as a file may hold them: two on top of the heads, then a change
        // with a unit that starts where they do, then one more without.
        var withEmpty = typed.log
        for _ in 0 ..< 2 { _ = withEmpty.beginChange(agent: 0, time: 1_700_000_200, author: "kim", message: "empty") }
        _ = withEmpty.beginChange(agent: 0, time: 1_700_000_300, author: "kim", message: "")
        withEmpty.append(.setNotebookTitle("t", preds: []), length: 1, scalars: [])
        // One run (one author, message and time, each change on the one before) of changes of 1,
        // 0, 0, 1, 2 and 0 units.
        for units in [1, 0, 0, 1, 2, 0] {
            _ = withEmpty.beginChange(agent: 0, time: 1_700_000_400, author: "kim", message: "run")
            for _ in 0 ..< units { withEmpty.append(.setNotebookTitle("t", preds: []), length: 1, scalars: []) }
        }
        let lengths = (0 ..< withEmpty.changes.count).map { withEmpty.changes.length($0) }
        #expect(lengths.contains(0) && lengths.contains { $0 > 1 } && withEmpty.changes.runCount > 3, "\(lengths)")
        for log in [try Self.keystrokes().0.log, typed.log, withEmpty] {
            var changeStarts: [Int] = []
            for c in 0 ..< log.changes.count { changeStarts.append(log.changes.lvStart(c)) }
            for lv in 0 ..< log.lvCount {
                // The plain definition: the last change that starts at or before `lv`.
                let expected = try #require(changeStarts.lastIndex { $0 <= lv })
                #expect(log.changeIndex(containingLV: lv) == expected, "lv \(lv)")
                for hint in [0, expected, Swift.max(0, expected - 1), Swift.max(0, expected - 17), log.changes.count - 1, expected + 1, -1] {
                    #expect(log.changeIndex(containingLV: lv, from: hint) == expected, "lv \(lv) hint \(hint)")
                }
            }
        }
    }
}
