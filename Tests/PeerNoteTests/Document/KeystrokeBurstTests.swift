import Foundation
import Testing
@testable import PeerNote

/// Keystrokes that continue what the log and the list end with are gathered into a burst and
/// applied at once (`DocumentCore.Burst`). The log, the state and the saved bytes must be what
/// the same keystrokes give one at a time: each script here runs on two copies with the same
/// replica and clock, one with bursts and one without, and the two are compared throughout.
@Suite("Keystroke bursts")
struct KeystrokeBurstTests {
    /// A clock the script moves on; read by both copies.
    final class Ticker: @unchecked Sendable {
        var seconds: Double = 1_700_000_000
    }

    /// Two copies that differ only in gathering keystrokes.
    struct Pair {
        let buffered: Document
        let plain: Document
        let ticker = Ticker()

        init() {
            func make(_ buffers: Bool) -> Document {
                let d = Document(title: "bursts", author: "ana", id: UUID(uuidString: "B0257000-0000-4000-8000-0000000000B5") ?? UUID(),
                                 replica: ReplicaID(high: 0xB0, low: 0x57), time: Date(timeIntervalSince1970: 1_700_000_000))
                d.core.buffersKeystrokes = buffers
                return d
            }
            buffered = make(true)
            plain = make(false)
            let t = ticker
            buffered.clock = { Date(timeIntervalSince1970: t.seconds) }
            plain.clock = { Date(timeIntervalSince1970: t.seconds) }
        }

        /// Runs `edit` on both copies; both must succeed, or both fail with the same error.
        func both(_ edit: (Document) throws(PeerNoteError) -> Void, _ comment: @autoclosure () -> String) {
            var errors: [String?] = []
            for d in [buffered, plain] {
                do { try edit(d); errors.append(nil) } catch { errors.append(error.description) }
            }
            #expect(errors[0] == errors[1], "\(comment())")
        }

        /// The op logs, the notes and the compact bytes agree (reading them applies any burst).
        func expectSame(_ comment: @autoclosure () -> String) {
            let a = buffered, b = plain
            #expect(a.log.ops == b.log.ops, "ops: \(comment())")
            #expect(Array(a.log.changes) == Array(b.log.changes), "changes: \(comment())")
            #expect(a.log.text == b.log.text, "text: \(comment())")
            #expect(a.log.heads == b.log.heads, "heads: \(comment())")
            #expect(a.notebook == b.notebook, "notebook: \(comment())")
            #expect(a.save(.compact) == b.save(.compact), "bytes: \(comment())")
        }
    }

    @Test("Typing, backspacing and deleting forwards, with reads, transactions, clock ticks and other edits between, give the same log and bytes", arguments: 0 ..< 12)
    func randomScripts(seed: UInt64) throws {
        var rng = SeededRandom(state: 0xB0257 &+ seed)
        let pair = Pair()
        var notes = [pair.buffered.addNote(title: "one"), pair.buffered.addNote(title: "two")]
        _ = pair.plain.addNote(title: "one"); _ = pair.plain.addNote(title: "two")
        var note = notes[0]
        var cursor = 0
        var longestBurst = 0
        let alphabet = Array("etaoin shrdlu,.\n".unicodeScalars) + ["é", "\u{1F642}", "中"]
        func length() -> Int { pair.plain.note(note)?.body.unicodeScalars.count ?? 0 }

        for step in 0 ..< 1500 {
            let roll = Int.random(in: 0 ..< 100, using: &rng)
            let count = length()
            cursor = min(cursor, count)
            switch roll {
            case 0 ..< 45:
                let c = String(alphabet[Int.random(in: 0 ..< alphabet.count, using: &rng)])
                let text = Int.random(in: 0 ..< 10, using: &rng) == 0 ? c + c : (Int.random(in: 0 ..< 40, using: &rng) == 0 ? "" : c)
                let at = cursor
                pair.both({ d throws(PeerNoteError) in try d.insertText(note, at: at, text) }, "step \(step): type at \(at)")
                cursor += text.unicodeScalars.count
            case 45 ..< 62:
                guard cursor > 0 else { continue }
                let at = cursor - 1
                pair.both({ d throws(PeerNoteError) in try d.deleteText(note, range: at ..< at + 1) }, "step \(step): backspace at \(at)")
                cursor -= 1
            case 62 ..< 72:
                guard cursor < count else { continue }
                let at = cursor
                pair.both({ d throws(PeerNoteError) in try d.deleteText(note, range: at ..< at + 1) }, "step \(step): delete at \(at)")
            case 72 ..< 77:
                cursor = Int.random(in: 0 ... count, using: &rng)
            case 77 ..< 80:
                // Out of range, on purpose: both refuse it alike.
                let at = count + Int.random(in: 1 ... 3, using: &rng)
                pair.both({ d throws(PeerNoteError) in try d.insertText(note, at: at, "x") }, "step \(step): insert past the end")
                pair.both({ d throws(PeerNoteError) in try d.deleteText(note, range: count ..< count + 1) }, "step \(step): delete past the end")
            case 80 ..< 84:
                // One transaction holding a few keystrokes (one change), maybe with a message.
                let message = Int.random(in: 0 ..< 2, using: &rng) == 0 ? "" : "burst"
                let at = cursor
                let keys = Int.random(in: 1 ... 3, using: &rng)
                pair.both({ d throws(PeerNoteError) in
                    do {
                        try d.transaction(message: message) {
                            for k in 0 ..< keys { try d.insertText(note, at: at + k, "k") }
                            if at + keys > 0 { try d.deleteText(note, range: at + keys - 1 ..< at + keys) }
                        }
                    } catch let e as PeerNoteError { throw e } catch { Issue.record("unexpected \(error)") }
                }, "step \(step): transaction")
                cursor = at + keys - 1
            case 84 ..< 87:
                #expect(pair.buffered.note(note)?.body == pair.plain.note(note)?.body, "step \(step): read")
            case 87 ..< 89:
                pair.ticker.seconds += 1
            case 89 ..< 91:
                note = notes[Int.random(in: 0 ..< notes.count, using: &rng)]
                cursor = Int.random(in: 0 ... length(), using: &rng)
            case 91:
                let title = "n\(step)"
                let a = pair.buffered.addNote(title: title)
                let b = pair.plain.addNote(title: title)
                #expect(a == b)
                notes.append(a)
            case 92:
                let name = Int.random(in: 0 ..< 2, using: &rng) == 0 ? "ana" : "bo"
                pair.buffered.author = name
                pair.plain.author = name
            case 93:
                pair.both({ d throws(PeerNoteError) in try d.setNoteTitle(note, "title \(step)") }, "step \(step): title")
            case 94:
                // A bigger delete (several runs), and a paste.
                let lower = Int.random(in: 0 ... count, using: &rng)
                let upper = min(count, lower + Int.random(in: 0 ... 6, using: &rng))
                pair.both({ d throws(PeerNoteError) in try d.deleteText(note, range: lower ..< upper) }, "step \(step): cut")
                pair.both({ d throws(PeerNoteError) in try d.insertText(note, at: lower, "pasted") }, "step \(step): paste")
                cursor = lower + 6
            case 95:
                // Edits from another copy merged in (reading the log applies the burst first).
                let other = pair.plain.fork(author: "cy")
                try other.insertText(note, at: 0, "cy ")
                _ = try pair.buffered.merge(other)
                _ = try pair.plain.merge(other)
                cursor += 3
            case 96:
                let a = pair.buffered.save(.incremental), b = pair.plain.save(.incremental)
                #expect(a == b, "step \(step): incremental save")
            default:
                break
            }
            longestBurst = max(longestBurst, pair.buffered.core.burst.total)
            #expect(pair.plain.core.burst.isEmpty)
        }
        pair.expectSame("seed \(seed)")
        // The script did gather keystrokes (else it tests nothing).
        #expect(longestBurst >= 5, "longest burst \(longestBurst)")
        let reloaded = try Document.load(pair.buffered.save(.compact))
        #expect(reloaded.notebook == pair.plain.notebook)
    }

    @Test("Typing then backspacing then deleting forwards: each burst waits until something reads, then the document holds every keystroke")
    func burstsWaitForReads() throws {
        let pair = Pair()
        let note = pair.buffered.addNote(title: "n")
        _ = pair.plain.addNote(title: "n")
        let text = "the quick brown fox jumps over the lazy dog"
        for d in [pair.buffered, pair.plain] {
            for (k, c) in text.unicodeScalars.enumerated() { try d.insertText(note, at: k, String(c)) }
        }
        // The first letters are applied (they began the run of changes and the list's run); the
        // rest wait in the burst.
        #expect(pair.buffered.core.burst.kind == .typing)
        #expect(pair.buffered.core.burst.total >= text.unicodeScalars.count - 2)
        // Reads that look only at the state (the notes), not at the log, see every keystroke too.
        #expect(pair.buffered.notes.first(where: { $0.id == note })?.body == text)
        #expect(pair.buffered.note(note)?.body == text)
        #expect(pair.buffered.core.burst.isEmpty)
        for d in [pair.buffered, pair.plain] {
            for k in 0 ..< 4 { try d.deleteText(note, range: 42 - k ..< 43 - k) }      // backspace "dog"…
            for _ in 0 ..< 6 { try d.deleteText(note, range: 4 ..< 5) }                 // delete "quick "
        }
        #expect(pair.buffered.core.burst.kind == .deleting)
        #expect(pair.buffered.changeCount == pair.plain.changeCount)
        #expect(pair.buffered.note(note)?.body == "the brown fox jumps over the lazy")
        pair.expectSame("typing, backspace, delete")
    }

    @Test("An edit that does not continue the burst applies it first; an invalid one is refused with the burst's keystrokes counted")
    func breakingTheBurst() throws {
        let pair = Pair()
        let note = pair.buffered.addNote(title: "n")
        _ = pair.plain.addNote(title: "n")
        for d in [pair.buffered, pair.plain] {
            for (k, c) in "abcdef".unicodeScalars.enumerated() { try d.insertText(note, at: k, String(c)) }
        }
        // Past the end of the text as the burst leaves it: the error names that length.
        pair.both({ d throws(PeerNoteError) in try d.insertText(note, at: 8, "x") }, "insert past the end")
        pair.both({ d throws(PeerNoteError) in try d.deleteText(note, range: 6 ..< 7) }, "delete past the end")
        do {
            try pair.buffered.insertText(note, at: 7, "x")
            Issue.record("an insert past the end was accepted")
        } catch {
            #expect(error.description.contains("0...6"), "\(error.description)")
        }
        // Typing somewhere else, a title, a new author: each ends the burst and starts anew.
        pair.both({ d throws(PeerNoteError) in try d.insertText(note, at: 0, ">") }, "elsewhere")
        pair.both({ d throws(PeerNoteError) in try d.insertText(note, at: 1, ">") }, "typing on there")
        pair.both({ d throws(PeerNoteError) in try d.setNoteTitle(note, "renamed") }, "title")
        pair.buffered.author = "bo"
        pair.plain.author = "bo"
        pair.both({ d throws(PeerNoteError) in try d.insertText(note, at: 8, "!") }, "new author")
        pair.both({ d throws(PeerNoteError) in try d.insertText(note, at: 9, "!") }, "new author typing on")
        pair.expectSame("breaking the burst")
        #expect(pair.buffered.note(note)?.body == ">>abcdef!!")
    }

    @Test("A paste is applied at once, not gathered; a long burst's buffers are let go once it is applied")
    func pastesAndLongBursts() throws {
        let pair = Pair()
        let note = pair.buffered.addNote(title: "n")
        _ = pair.plain.addNote(title: "n")
        let paste = String(repeating: "pasted text ", count: 20)
        for d in [pair.buffered, pair.plain] {
            try d.insertText(note, at: 0, "a")
            try d.insertText(note, at: 1, "b")
            try d.insertText(note, at: 2, paste)
        }
        #expect(pair.buffered.core.burst.isEmpty, "a paste of \(paste.utf8.count) bytes was gathered")
        for d in [pair.buffered, pair.plain] {
            for k in 0 ..< 20_000 { try d.insertText(note, at: 2 + paste.utf8.count + k, "x") }
        }
        #expect(pair.buffered.core.burst.total >= 19_999)
        pair.expectSame("paste, then a long burst")
        #expect(pair.buffered.core.burst.scalars.capacity <= DocumentCore.Burst.keptCapacity)
        #expect(pair.buffered.core.burst.lengths.capacity <= DocumentCore.Burst.keptCapacity)
    }
}
