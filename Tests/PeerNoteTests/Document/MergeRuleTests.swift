import Foundation
import Testing
@testable import PeerNote

/// Two copies of one notebook, as if the file had been copied to two devices.
private func pair(_ setup: (Document) throws -> Void = { _ in }) rethrows -> (Document, Document) {
    let a = Document(title: "Notebook", author: "alice")
    try setup(a)
    let b = a.fork(author: "bob")
    return (a, b)
}

/// Merges both ways and checks both copies converge; returns the merged notebook.
private func converge(_ a: Document, _ b: Document) throws -> Notebook {
    let a2 = a.fork(), b2 = b.fork()
    try a2.merge(b)
    try b2.merge(a)
    #expect(a2.notebook == b2.notebook)
    return a2.notebook
}

/// Merges b into a copy of a and of a into b, a and b being copies of one note with `body`
/// edited by `editA` and `editB`; both must name the same places, which are returned.
private func overlaps(_ body: String, _ editA: (Document, NoteID) throws -> Void, _ editB: (Document, NoteID) throws -> Void,
                      sourceLocation: SourceLocation = #_sourceLocation) throws -> [TextOverlap] {
    var id: NoteID?
    let (a, b) = pair { id = $0.addNote(title: "N", body: body) }
    let n = try #require(id, sourceLocation: sourceLocation)
    try editA(a, n)
    try editB(b, n)
    let ab = a.fork(), ba = b.fork()
    let one = ab.textOverlaps(of: try ab.merge(b))
    let other = ba.textOverlaps(of: try ba.merge(a))
    #expect(one == other, sourceLocation: sourceLocation)
    #expect(ab.notebook == ba.notebook, sourceLocation: sourceLocation)
    return one
}

/// `overlaps` with both copies' bodies set whole (as `peernote edit --body` does).
private func overlaps(_ body: String, a: String, b: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [TextOverlap] {
    try overlaps(body, { try $0.setBody($1, a) }, { try $0.setBody($1, b) }, sourceLocation: sourceLocation)
}

@Suite("Merge rules (man/peernote.5)")
struct MergeRuleTests {
    @Test("Rule 1: two spelling fixes to one body both survive")
    func twoSpellingFixes() throws {
        var id: NoteID?
        let (a, b) = pair { id = $0.addNote(title: "Plan", body: "Teh quick brwn fox") }
        let n = try #require(id)
        try a.setBody(n, "The quick brwn fox")
        try b.setBody(n, "Teh quick brown fox")
        let merged = try converge(a, b)
        #expect(merged.notes.first?.body == "The quick brown fox")
    }

    @Test("Rule 1: a word replaced on one copy and a word typed before it on another stay whole")
    func wordReplacedWhileAnotherIsTyped() throws {
        var id: NoteID?
        let (a, b) = pair { id = $0.addNote(title: "List", body: "Bring: bread\npassport\ntoothbrush") }
        let n = try #require(id)
        try a.setBody(n, "Bring: fresh bread\npassport\n- toothbrush")
        try b.setBody(n, "Bring: cheese\npassport\nsunscreen")
        let body = try #require(try converge(a, b).notes.first?.body)
        // A minimal diff kept a letter of each old word and gave "cheesfresh e" and "s- unscreen".
        // The words typed at one place on the two copies come in the order of their replica
        // ids ("fresh cheese" or "cheesefresh "), but each stays whole.
        let lines = body.components(separatedBy: "\n")
        #expect(lines.count == 3 && lines[1] == "passport", "\(body)")
        #expect(["Bring: fresh cheese", "Bring: cheesefresh "].contains(lines.first ?? ""), "\(body)")
        #expect(["- sunscreen", "sunscreen- "].contains(lines.last ?? ""), "\(body)")
    }

    @Test("Rule 1: two edits inside one word, number or phrase on two copies both apply, letter by letter")
    func twoEditsInsideOneWord() throws {
        // A diff that replaced the whole word for one copy's edit put the other copy's edit
        // beside the word retyped ("Room 13BC", "call 12432134", a deleted character back):
        // the letters a new word shares with the old are kept, so both edits apply.
        for (base, one, other, merged) in [
            ("Room 12B is free", "Room 13B is free", "Room 12C is free", "Room 13C is free"),
            ("call 1234 now", "call 1243 now", "call 2134 now", "call 2143 now"),
            ("see the wrod here", "see the word here", "see the Wrod here", "see the Word here"),
            ("好，我明天去东京", "好，我后天去东京", "好，你明天去东京", "好，你后天去东京"),
        ] {
            var id: NoteID?
            let (a, b) = pair { id = $0.addNote(title: "N", body: base) }
            let n = try #require(id)
            try a.setBody(n, one)
            try b.setBody(n, other)
            #expect(try converge(a, b).notes.first?.body == merged, "\(base)")
        }
    }

    @Test("Rule 1: a large edit of every line does not move an edit made meanwhile to another line")
    func largeEditKeepsOtherCopysLine() throws {
        let lines = (1 ... 800).map { String(format: "line %04d some text here", $0) }
        var id: NoteID?
        let (a, b) = pair { id = $0.addNote(title: "Long", body: lines.joined(separator: "\n")) }
        let n = try #require(id)
        try a.setBody(n, lines.map { $0.replacingOccurrences(of: "some", with: "SOME").replacingOccurrences(of: "here", with: "HERE") }.joined(separator: "\n"))
        var bLines = lines
        bLines[399] += " (B was here)"
        try b.setBody(n, bLines.joined(separator: "\n"))
        let merged = try #require(try converge(a, b).notes.first?.body).components(separatedBy: "\n")
        #expect(merged.count == 800)
        #expect(merged[399] == "line 0400 SOME text HERE (B was here)")
        #expect(merged.filter { $0.contains("B was here") }.count == 1)
    }

    @Test("Rule 1: concurrent inserts at one place never interleave, typed forwards")
    func noInterleavingForward() throws {
        var id: NoteID?
        let (a, b) = pair { id = $0.addNote(title: "N", body: "[]") }
        let n = try #require(id)
        for (i, ch) in "hello".enumerated() { try a.insertText(n, at: 1 + i, String(ch)) }
        for (i, ch) in "world".enumerated() { try b.insertText(n, at: 1 + i, String(ch)) }
        let body = try converge(a, b).notes[0].body
        #expect(body == "[helloworld]" || body == "[worldhello]")
    }

    @Test("Rule 1: concurrent inserts at one place never interleave, typed backwards")
    func noInterleavingBackward() throws {
        var id: NoteID?
        let (a, b) = pair { id = $0.addNote(title: "N", body: "[]") }
        let n = try #require(id)
        for ch in "olleh" { try a.insertText(n, at: 1, String(ch)) }
        for ch in "dlrow" { try b.insertText(n, at: 1, String(ch)) }
        #expect(a.note(n)?.body == "[hello]")
        let body = try converge(a, b).notes[0].body
        #expect(body == "[helloworld]" || body == "[worldhello]")
    }

    @Test("Rule 1: text deleted on both copies is deleted once; inserts inside a deleted range survive")
    func deletes() throws {
        var id: NoteID?
        let (a, b) = pair { id = $0.addNote(title: "N", body: "abcdefgh") }
        let n = try #require(id)
        try a.deleteText(n, range: 2 ..< 6)   // ab gh
        try b.deleteText(n, range: 3 ..< 7)   // abc h
        #expect(try converge(a, b).notes[0].body == "abh")
        let (c, d) = pair { id = $0.addNote(title: "N", body: "abcdefgh") }
        let m = try #require(id)
        try c.deleteText(m, range: 1 ..< 7)
        try d.insertText(m, at: 4, "XY")
        #expect(try converge(c, d).notes[0].body == "aXYh")
    }

    @Test("Rule 2: concurrent title writes are a conflict with one deterministic winner")
    func registerConflict() throws {
        var id: NoteID?
        let (a, b) = pair { id = $0.addNote(title: "Groceries") }
        let n = try #require(id)
        try a.setNoteTitle(n, "Shopping")
        try b.setNoteTitle(n, "Groceries!")
        let merged = try converge(a, b)
        let conflict = try #require(merged.conflicts.first)
        guard case .noteTitle(let note, let values, let showing) = conflict else { Issue.record("wrong conflict \(conflict)"); return }
        #expect(note == n)
        #expect(Set(values.map(\.value)) == ["Shopping", "Groceries!"])
        #expect(showing == merged.notes[0].title)
        // A later write resolves it.
        try a.merge(b)
        try a.setNoteTitle(n, "Food")
        #expect(a.conflicts.isEmpty)
        #expect(a.notes[0].title == "Food")
    }

    @Test("Rule 2: copies that set the same value agree: no conflict, and the file still saves and loads")
    func sameValueIsNoConflict() throws {
        var id: NoteID?
        let (a, b) = pair { id = $0.addNote(title: "Groceries", body: "milk") }
        let n = try #require(id)
        for d in [a, b] {
            try d.setNoteTitle(n, "Shopping")
            try d.setPriority(n, .high)
            d.setTitle("Home")
        }
        try b.setBody(n, "milk, eggs")
        let merged = try converge(a, b)
        #expect(merged.conflicts.isEmpty, "\(merged.conflicts)")
        #expect(merged.title == "Home" && merged.notes[0].title == "Shopping" && merged.notes[0].priority == .high)
        // The registers still hold two entries each: the compact file shows them from the history
        // (no state section), and it loads back to the same notebook.
        try a.merge(b)
        #expect(a.concurrentValues.count == 3)
        let loaded = try Document.load(a.save(.compact))
        #expect(loaded.notebook == a.notebook)
        #expect(try Document.readNotebook(a.save(.compact)) == a.notebook)
        // One different value among equal ones is a conflict again.
        let c = a.fork(author: "chen")
        try c.setPriority(n, .low)
        try a.setPriority(n, .high)
        try a.merge(c)
        #expect(a.conflicts.count == 1)
    }

    @Test("A merge names the places where both copies' text edits met")
    func textOverlaps() throws {
        // The same typo fixed on both copies: both fixes are kept, "thehe".
        let fixed = try overlaps("I saw teh cat.", { try $0.setBody($1, "I saw the cat.") }, { try $0.setBody($1, "I saw the cat.") })
        #expect(fixed.map(\.kind) == [.sameText] && fixed.first?.line == 1 && fixed.first?.noteTitle == "N")
        var typo: NoteID?
        let (t1, t2) = pair { typo = $0.addNote(title: "T", body: "I saw teh cat.") }
        let tn = try #require(typo)
        try t1.setBody(tn, "I saw the cat.")
        try t2.setBody(tn, "I saw the cat.")
        #expect(try converge(t1, t2).notes.first?.body == "I saw thehe cat.")
        // A word replaced on one copy and a word typed before it on the other: the same kind
        // (the new word may come out around the typed one: "Meet on Frinext day").
        let typed = try overlaps("Meet on Monday", { try $0.setBody($1, "Meet on Friday") }, { try $0.setBody($1, "Meet on next Monday") })
        #expect(typed.map(\.kind) == [.sameText])
        // A clause added inside a paragraph the other copy deleted.
        let para = "Keep this.\n\nDrop this paragraph.\n\nEnd."
        let inside = try overlaps(para, { try $0.setBody($1, "Keep this.\n\nEnd.") },
                                  { try $0.setBody($1, "Keep this.\n\nDrop this paragraph, bob added a clause.\n\nEnd.") })
        #expect(inside.map(\.kind) == [.insideDeleted] && inside.first?.line == 3)
        // Not reported: two fixes in one word, two appends at the end, a word deleted on both
        // copies and retyped on one, and edits far apart.
        #expect(try overlaps("acommodaton", { try $0.setBody($1, "accommodaton") }, { try $0.setBody($1, "acommodation") }).isEmpty)
        #expect(try overlaps("list\n", { try $0.insertText($1, at: 5, "milk\n") }, { try $0.insertText($1, at: 5, "eggs\n") }).isEmpty)
        #expect(try overlaps("a foo b", { try $0.setBody($1, "a  b") }, { try $0.setBody($1, "a bar b") }).isEmpty)
        #expect(try overlaps("one two three", { try $0.setBody($1, "one 2 three") }, { try $0.setBody($1, "one two 3") }).isEmpty)
        // A merge that brings nothing, or only one side's edits, has none.
        let (c, _) = pair { _ = $0.addNote(title: "N", body: "x") }
        let d = c.fork()
        try d.setBody(d.notes[0].id, "xy")
        #expect(c.textOverlaps(of: try c.merge(d)).isEmpty)
        #expect(c.textOverlaps(of: try c.merge(d)).isEmpty)
    }

    @Test("Text added at the edge of a passage the other copy deleted is named; text typed next to another deletion is not")
    func insertsAtDeletedEdges() throws {
        func kinds(_ body: String, a: String, b: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [TextOverlap.Kind] {
            try overlaps(body, a: a, b: b, sourceLocation: sourceLocation).map(\.kind)
        }
        let paragraphs = "Para one.\n\nPara two is here.\n\nPara three."
        // Named: a prefix to a paragraph the other copy deleted (merged, it leads the next one)...
        let prefix = try overlaps(paragraphs, a: "Para one.\n\nSee: Para two is here.\n\nPara three.", b: "Para one.\n\nPara three.")
        #expect(prefix.map(\.kind) == [.insideDeleted] && prefix.first?.line == 3)
        // ... a sentence added after one the other deleted, at the end of the body or before more
        // text, whether the deletion took the space before it or not...
        #expect(try kinds("keep. delete this sentence.", a: "keep. delete this sentence. Added!", b: "keep.") == [.insideDeleted])
        #expect(try kinds("keep. delete this sentence.", a: "keep. delete this sentence. Added!", b: "keep. ") == [.insideDeleted])
        #expect(try kinds("keep. delete this sentence. more.", a: "keep. delete this sentence. Added! more.", b: "keep. more.") == [.insideDeleted])
        // ... words added to the end of a line, or the end of a word, the other deleted...
        #expect(try kinds("one\ntwo\nthree", a: "one\ntwo\nthree, four", b: "one\ntwo") == [.insideDeleted])
        #expect(try kinds("one\ntwo\nthree\n", a: "one\ntwo, too\nthree\n", b: "one\nthree\n") == [.insideDeleted])
        #expect(try kinds("the quick fox", a: "the quicker fox", b: "the fox") == [.insideDeleted])
        // ... and a change to a word whose start the other deleted.
        #expect(try kinds("cowboy", a: "cowsboy", b: "boy") == [.insideDeleted])
        // ... and words added inside a paragraph the other deleted, where that side also typed
        // next to the deletion: both sides' text is side by side, but the words inside are what
        // reads out of place (so the case is not named sameText).
        #expect(try kinds("Line one\nParagraph to delete\nwith two lines\nLast line",
                          a: "Line one!\nLast line", b: "Line one\nParagraph to delete (see note)\nwith two lines \u{2713}\nLast line") == [.insideDeleted])
        #expect(try kinds("Line one\nParagraph to delete\nwith two lines\nLast line",
                          a: "Line one\nParagraph to delete (see note)\nwith two lines \u{2713}\nLast line", b: "Line one!\nLast line") == [.insideDeleted])
        // Both ways round, and however the deletion was recorded: the same paragraph deleted
        // as "wo is here.\n\nPara t" merges the same, and is named the same.
        for (start, end) in [(11, 30), (17, 36), (7, 26)] {
            let shifted = try overlaps(paragraphs, { try $0.insertText($1, at: 11, "See: ") }, { try $0.deleteText($1, range: start ..< end) })
            #expect(shifted.map(\.kind) == [.insideDeleted], "deleted \(start)..<\(end)")
        }
        let appended = try overlaps(paragraphs, { try $0.deleteText($1, range: 17 ..< 36) }, { try $0.insertText($1, at: 28, " Really.") })
        #expect(appended.map(\.kind) == [.insideDeleted] && appended.first?.line == 3)

        // Not named: text typed at the start of the paragraph after a deleted one, or at the end
        // of the one before...
        #expect(try kinds(paragraphs, a: "Para one.\n\nPara two is here.\n\nSo: Para three.", b: "Para one.\n\nPara three.").isEmpty)
        #expect(try kinds(paragraphs, a: "Para one, more.\n\nPara two is here.\n\nPara three.", b: "Para one.\n\nPara three.").isEmpty)
        // ... however that deletion was recorded (where the merged text reads as meant)...
        for (start, end) in [(9, 28), (11, 30)] {
            #expect(try overlaps(paragraphs, { try $0.insertText($1, at: 30, "So: ") }, { try $0.deleteText($1, range: start ..< end) }).isEmpty)
            #expect(try overlaps(paragraphs, { try $0.insertText($1, at: 8, ", more") }, { try $0.deleteText($1, range: start ..< end) }).isEmpty)
        }
        // ... a new paragraph after a deleted one, text appended to a line next to a deleted
        // line (before it or after it), a word ended next to a deleted word...
        #expect(try kinds("Alpha.\n\nBeta.\n\nGamma.", a: "Alpha.\n\nBeta.\n\nNew.\n\nGamma.", b: "Alpha.\n\nGamma.").isEmpty)
        #expect(try kinds("one\ntwo\nthree\n", a: "one!\ntwo\nthree\n", b: "one\nthree\n").isEmpty)
        #expect(try kinds("one\ntwo\nthree\n", a: "one\ntwo\nthree!\n", b: "one\nthree\n").isEmpty)
        #expect(try kinds("one\ntwo\nthree", a: "one\ntwo!\nthree", b: "one\ntwo").isEmpty)
        #expect(try kinds("the quick brown fox", a: "the quickest brown fox", b: "the quick fox").isEmpty)
        #expect(try kinds("the quick brown fox", a: "the quick brown big fox", b: "the quick fox").isEmpty)
        #expect(try kinds("the cat cow", a: "the cat crow", b: "the cow").isEmpty)
        #expect(try overlaps("the cat cow", { try $0.insertText($1, at: 9, "r") }, { try $0.deleteText($1, range: 5 ..< 9) }).isEmpty)
        // ... a word changed before a deleted word, and edits in different paragraphs.
        #expect(try kinds("the quick brown fox", a: "the slow brown fox", b: "the quick fox").isEmpty)
        #expect(try kinds("First para ends.\n\nSecond has a stray word.", a: "First para ends here.\n\nSecond has a stray word.",
                          b: "First para ends.\n\nSecond has a word.").isEmpty)
        #expect(try kinds("line a\nline b\nline c", a: "line a, longer\nline b\nline c", b: "line a\nline b").isEmpty)
    }

    @Test("Edges of deletions far into long bodies are found, on the right line, however the body's runs fall")
    func insertsAtDeletedEdgesInLongBodies() throws {
        let filler = String(repeating: "Filler text goes on. ", count: 300)
        let body = filler + "\n\n" + filler + "\n\nPara two is here.\n\nPara three.\n\n" + filler
        func edited(_ middle: String) -> String { filler + "\n\n" + filler + middle + filler }
        let prefix = try overlaps(body, a: edited("\n\nSee: Para two is here.\n\nPara three.\n\n"), b: edited("\n\nPara three.\n\n"))
        #expect(prefix.map(\.kind) == [.insideDeleted] && prefix.first?.line == 5)
        #expect(try overlaps(body, a: edited("\n\nPara two is here.\n\nSo: Para three.\n\n"), b: edited("\n\nPara three.\n\n")).isEmpty)
        // The same text typed in many small runs (each chunk typed before the last), with an edit
        // far away on each side as well.
        let chunks = stride(from: 0, to: body.unicodeScalars.count, by: 7).map { start in
            String(String.UnicodeScalarView(body.unicodeScalars.dropFirst(start).prefix(7)))
        }
        let (a, b) = pair { d in
            let n = d.addNote(title: "N")
            for chunk in chunks.reversed() { try? d.insertText(n, at: 0, chunk) }
        }
        let n = a.notes[0].id
        #expect(a.notes[0].body == body)
        try a.setBody(n, "Start. " + edited("\n\nSee: Para two is here.\n\nPara three.\n\n"))
        try b.setBody(n, edited("\n\nPara three.\n\n") + "End.")
        let ab = a.fork(), ba = b.fork()
        let one = ab.textOverlaps(of: try ab.merge(b)), other = ba.textOverlaps(of: try ba.merge(a))
        #expect(one == other && one.map(\.kind) == [.insideDeleted] && one.first?.line == 5)
    }

    @Test("The edge check keeps the ends of long runs, with a barrier in untouched text, and one element of inserts it does not look at")
    func editedTextKeepsEnds() {
        var rng = SeededRandom(state: 7)
        for round in 0 ..< 300 {
            let w = Int.random(in: 1 ... 3, using: &rng)
            let mine = round % 3 != 1, theirs = round % 3 != 2
            var text = EditedText(mine: mine, theirs: theirs, context: w)
            // Everything appended that the text keeps: (scalar, mask, place), untouched text included.
            var all: [(Unicode.Scalar, UInt8, Int)] = []
            var place = 0
            for _ in 0 ..< Int.random(in: 0 ... 40, using: &rng) {
                let content = (0 ..< Int.random(in: 0 ... 8 * w, using: &rng)).map { _ in Unicode.Scalar(UInt8.random(in: 97 ... 122, using: &rng)) }
                let mask: UInt8 = [0, 0, 0, 1, 2, 4, 8, 12, 5, 10, 4, 4].randomElement(using: &rng)!
                let deleted = mask & 12 != 0 || (mask == 0 && Bool.random(using: &rng))
                text.append(scalarRun(content), mask: mask, deleted: deleted, place: place)
                if (mask == 0 && !deleted) || (mask != 0 && mask & 5 != 5 && mask & 10 != 10) {
                    all += content.map { ($0, mask, mask == 0 ? -1 : place) }
                }
                // Visible untouched text ends a place (as in `NoteEdits.overlaps`).
                if mask == 0 && !deleted && !content.isEmpty { place += 1 }
            }
            #expect(text.scalars.count == text.masks.count)
            #expect(text.runStarts == text.masks.indices.filter { $0 == 0 || text.masks[$0] != text.masks[$0 - 1] })
            // Cut both into runs of one mask (untouched text and barriers as one): kept whole; or
            // the first `keep` and at least the last `keep` elements of a longer run (around one
            // barrier in untouched text); or one element of the inserts of a side not looked at.
            var k = 0, j = 0
            while j < all.count {
                let mask = all[j].1
                var run: [Unicode.Scalar] = []
                let place = all[j].2
                while j < all.count && all[j].1 == mask { run.append(all[j].0); j += 1 }
                var kept: [Unicode.Scalar] = [], barriers = 0, head = 0
                while k < text.masks.count && (text.masks[k] == mask || (mask == 0 && text.masks[k] == EditedText.barrier)) {
                    if text.masks[k] == EditedText.barrier { barriers += 1; head = kept.count } else { kept.append(text.scalars[k]) }
                    #expect(text.place(of: k) == place)
                    k += 1
                }
                let keep = mask == 0 ? w : 3 * w + 3
                if (mask == 1 && !mine) || (mask == 2 && !theirs) {
                    #expect(kept == [run[0]])
                } else if kept.count == run.count {
                    #expect(kept == run && run.count <= 3 * keep && barriers == 0)
                } else {
                    if mask != 0 { head = keep }
                    #expect(barriers == (mask == 0 ? 1 : 0) && head == keep && run.count > kept.count && kept.count - head >= keep)
                    #expect(kept.prefix(head) == run.prefix(head) && kept.suffix(kept.count - head) == run.suffix(kept.count - head))
                }
            }
            #expect(k == text.masks.count)
        }
    }

    @Test("Keeping only the ends of long edited runs changes nothing the edge check finds")
    func editedTextEndsSuffice() {
        var rng = SeededRandom(state: 3)
        let alphabet: [Unicode.Scalar] = ["a", "b", " ", ".", "\n"]
        var found = 0
        for round in 0 ..< 400 {
            let w = Int.random(in: 1 ... 2, using: &rng)
            let mine = round % 3 != 1, theirs = round % 3 != 2
            var small = EditedText(mine: mine, theirs: theirs, context: w), large = EditedText(mine: mine, theirs: theirs)
            var place = 0
            for _ in 0 ..< Int.random(in: 1 ... 30, using: &rng) {
                // Untouched text no longer than `w` at a time (so that neither text cuts it), and
                // edited runs of any length.
                let untouched = Bool.random(using: &rng)
                let mask: UInt8 = untouched ? 0 : [1, 2, 4, 8, 12, 4, 8].randomElement(using: &rng)!
                let count = untouched ? Int.random(in: 1 ... w, using: &rng) : Int.random(in: 1 ... 12 * w, using: &rng)
                let content = (0 ..< count).map { _ in alphabet.randomElement(using: &rng)! }
                small.append(scalarRun(content), mask: mask, deleted: mask & 12 != 0, place: place)
                large.append(scalarRun(content), mask: mask, deleted: mask & 12 != 0, place: place)
                if untouched {
                    place += 1
                    // Another edit follows, so that untouched text stays short.
                    let next: UInt8 = [1, 2, 4, 8].randomElement(using: &rng)!
                    let edited = (0 ..< Int.random(in: 1 ... 12 * w, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! }
                    small.append(scalarRun(edited), mask: next, deleted: next & 12 != 0, place: place)
                    large.append(scalarRun(edited), mask: next, deleted: next & 12 != 0, place: place)
                }
            }
            let expected = Set(large.insertsAtDeletedEdges())
            #expect(Set(small.insertsAtDeletedEdges()) == expected, "round \(round)")
            found += expected.count
        }
        #expect(found > 100, "\(found) places found")
    }

    @Test("The edge check run on the clusters around the inserts it looks at finds what it finds on the whole body")
    func editedTextClusters() {
        var rng = SeededRandom(state: 5)
        let alphabet: [Unicode.Scalar] = ["a", "b", " ", ".", "\n"]
        var found = 0, cut = 0
        for round in 0 ..< 600 {
            let w = Int.random(in: 1 ... 3, using: &rng)
            let mine = round % 3 != 1, theirs = round % 3 != 2
            var whole = EditedText(mine: mine, theirs: theirs, context: w)
            var pieces: [EditedText.Piece] = []
            var place = 0
            for _ in 0 ..< Int.random(in: 1 ... 40, using: &rng) {
                // Untouched text, visible or deleted long ago, often long enough to get a barrier,
                // and edited runs of every kind (5 and 10: a side's own insert it deleted).
                let mask: UInt8 = [0, 0, 0, 0, 1, 2, 4, 8, 12, 5, 10, 1, 2].randomElement(using: &rng)!
                let deleted = mask & 12 != 0 || (mask == 0 && Int.random(in: 0 ..< 4, using: &rng) == 0)
                let count = Int.random(in: 0 ... (mask == 0 ? 5 * w : 4 * w), using: &rng)
                let content = (0 ..< count).map { _ in alphabet.randomElement(using: &rng)! }
                whole.append(scalarRun(content), mask: mask, deleted: deleted, place: place)
                pieces.append(.init(content: scalarRun(content), mask: mask, deleted: deleted, place: place))
                if mask == 0 && !deleted && count > 0 { place += 1 }
                if mask == 0 && !deleted && count > 3 * w { cut += 1 }
            }
            let expected = Set(whole.insertsAtDeletedEdges())
            let clustered = EditedText.insertsAtDeletedEdges(of: pieces, mine: mine, theirs: theirs, context: w)
            #expect(Set(clustered) == expected, "round \(round)")
            found += expected.count
        }
        #expect(found > 100 && cut > 500, "\(found) places found, \(cut) long stretches")
    }

    @Test("Random edits on two copies: both merge orders name the same places")
    func randomOverlapsAgree() throws {
        var rng = SeededRandom(state: 11)
        let alphabet: [String] = ["a", "b", " ", ".", "\n", "ab", "\n\n", "b. "]
        func text(_ count: Int) -> String { (0 ..< count).map { _ in alphabet.randomElement(using: &rng)! }.joined() }
        for _ in 0 ..< 300 {
            let body = text(Int.random(in: 0 ... 24, using: &rng))
            func edit(_ d: Document, _ n: NoteID) throws {
                for _ in 0 ..< Int.random(in: 1 ... 3, using: &rng) {
                    let length = d.notes[0].body.unicodeScalars.count
                    switch Int.random(in: 0 ... 2, using: &rng) {
                    case 0: try d.insertText(n, at: Int.random(in: 0 ... length, using: &rng), text(Int.random(in: 1 ... 3, using: &rng)))
                    case 1 where length > 0:
                        let start = Int.random(in: 0 ..< length, using: &rng)
                        try d.deleteText(n, range: start ..< Int.random(in: start + 1 ... length, using: &rng))
                    default: try d.setBody(n, text(Int.random(in: 0 ... 24, using: &rng)))
                    }
                }
            }
            let found = try overlaps(body, edit, edit)
            let lines = found.map(\.line)
            #expect(lines == lines.sorted() && lines.allSatisfy { $0 >= 1 })
        }
    }

    @Test("The overlap check's id segments say, for every id, exactly which lists hold it")
    func editSegments() {
        var rng = SeededRandom(state: 20)
        for round in 0 ..< 300 {
            // Up to four lists of runs over two agents' ids base..<base+40, overlapping and
            // touching (in some rounds agent numbers past 2^31, which take the slower sort; agent
            // numbers far past the number of runs, which take a comparison sort; ids whose runs
            // end at 2^32, past 32 bits, which do too).
            let agents: [UInt32] = round % 3 == 2 ? [0, 0x8000_0001, 2] : round % 5 == 4 ? [0, 70_000, 2] : [0, 1, 2]
            let base: UInt32 = round % 7 == 6 ? UInt32.max - 49 : 0
            let lists: [[IDRun]] = (0 ..< Int.random(in: 1 ... 4, using: &rng)).map { _ in
                (0 ..< Int.random(in: 0 ... 5, using: &rng)).map { _ in
                    let counter = base + UInt32.random(in: 0 ..< 40, using: &rng)
                    return IDRun(first: LocalID(agent: agents[Int.random(in: 0 ... 1, using: &rng)], counter: counter),
                                 count: base > 0 ? Int.random(in: 0 ... Int(UInt32.max - counter) + 1, using: &rng) : Int.random(in: 0 ... 8, using: &rng))
                }
            }
            let segments = EditSegments(lists)
            func expected(_ id: LocalID) -> UInt8 {
                var mask: UInt8 = 0
                for (k, list) in lists.enumerated() where list.contains(where: { $0.first.agent == id.agent
                    && id.counter >= $0.first.counter && Int(id.counter) < Int($0.first.counter) + $0.count }) {
                    mask |= 1 << UInt8(k)
                }
                return mask
            }
            var hint = -1
            for agent in agents {
                for counter in base ... base + 49 {
                    #expect(segments.mask(of: LocalID(agent: agent, counter: counter)) == expected(LocalID(agent: agent, counter: counter)))
                }
                // Pieces cover the run in order, each of one membership, cut only where it
                // changes, whatever the hint the last call left.
                for _ in 0 ..< 4 {
                    let first = LocalID(agent: agent, counter: base + UInt32.random(in: 0 ..< 45, using: &rng))
                    let length = Int.random(in: 1 ... min(12, Int(UInt32.max - first.counter) + 1), using: &rng)
                    var next = 0
                    var lastMask: UInt8?
                    segments.forEachPiece(first, length, hint: &hint) { from, to, mask in
                        #expect(from == next && to > from)
                        #expect(mask != lastMask)
                        for k in from ..< to { #expect(expected(first.advanced(by: k)) == mask) }
                        next = to
                        lastMask = mask
                    }
                    #expect(next == length)
                }
            }
        }
    }

    @Test("Rule 3: tags are add-wins")
    func addWinsTags() throws {
        var id: NoteID?
        let (a, b) = pair { id = $0.addNote(title: "N", tags: ["urgent", "home"]) }
        let n = try #require(id)
        try a.removeTag(n, "urgent")
        try b.removeTag(n, "urgent")
        try b.addTag(n, "urgent")
        try a.removeTag(n, "home")
        #expect(try converge(a, b).notes[0].tags == ["urgent"])
    }

    @Test("Rule 4: concurrent moves of one note never duplicate or lose it; moves of different notes both apply")
    func moves() throws {
        var ids: [NoteID] = []
        let (a, b) = pair { d in ids = ["1", "2", "3", "4"].map { d.addNote(title: $0) } }
        try a.moveNote(ids[0], to: 3)
        try b.moveNote(ids[0], to: 1)
        let merged = try converge(a, b)
        #expect(merged.notes.count == 4)
        #expect(Set(merged.notes.map(\.id)) == Set(ids))
        let (c, d) = pair { doc in ids = ["1", "2", "3", "4"].map { doc.addNote(title: $0) } }
        try c.moveNote(ids[0], to: 3)   // 2 3 4 1
        try d.moveNote(ids[3], to: 0)   // 4 1 2 3
        let m2 = try converge(c, d)
        #expect(m2.notes.map(\.title) == ["4", "2", "3", "1"])
    }

    @Test("Rule 4: concurrent moves that show the note at one place agree (no conflict); a live note between the places makes them a conflict")
    func movesToOnePlace() throws {
        var ids: [NoteID] = []
        // Two copies, then a third, move Plan to the end: adjacent places, one reading.
        let (a, b) = pair { d in ids = ["Plan", "Other", "Third"].map { d.addNote(title: $0) } }
        let c = a.fork(author: "chen")
        for d in [a, b, c] { try d.moveNote(ids[0], to: 2) }
        let merged = try converge(a, b)
        #expect(merged.notes.map(\.title) == ["Other", "Third", "Plan"])
        #expect(merged.conflicts.isEmpty, "\(merged.conflicts)")
        try a.merge(b)
        try a.merge(c)
        #expect(a.conflicts.isEmpty, "\(a.conflicts)")
        // The register still holds every move: no state section, and the file loads to the same notebook.
        #expect(a.concurrentValues.count == 1)
        #expect(try Document.load(a.save(.compact)).notebook == a.notebook)

        // Moves to different places are a conflict, while a live note shows between them.
        let (d, e) = pair { doc in ids = ["Plan", "Other", "Third"].map { doc.addNote(title: $0) } }
        try d.moveNote(ids[0], to: 2)   // Other Third Plan
        try e.moveNote(ids[0], to: 1)   // Other Plan Third
        try d.merge(e)
        #expect(d.conflicts.count == 1, "\(d.conflicts)")
        // With Third deleted nothing shows between the two places: either reads Other, Plan.
        try d.deleteNote(ids[2])
        #expect(d.conflicts.isEmpty, "\(d.conflicts)")
        #expect(d.notes.map(\.title) == ["Other", "Plan"])
        // Restored, it shows between them again: a conflict again, the same on the other copy.
        try d.restoreNote(ids[2])
        #expect(d.conflicts.count == 1, "\(d.conflicts)")
        try e.merge(d)
        #expect(e.notebook == d.notebook)
    }

    @Test("Rule 4: a note moved on one copy and edited on another keeps both")
    func moveAndEdit() throws {
        var ids: [NoteID] = []
        let (a, b) = pair { d in ids = ["1", "2", "3"].map { d.addNote(title: $0, body: "x") } }
        try a.moveNote(ids[0], to: 2)
        try b.insertText(ids[0], at: 1, "yz")
        let merged = try converge(a, b)
        #expect(merged.notes.map(\.title) == ["2", "3", "1"])
        #expect(merged.notes[2].body == "xyz")
    }

    @Test("Rule 5: delete vs concurrent edit: stays deleted, edit kept, conflict reported, restore brings the edit")
    func deleteVersusEdit() throws {
        var id: NoteID?
        let (a, b) = pair { id = $0.addNote(title: "Doomed", body: "abc") }
        let n = try #require(id)
        try a.deleteNote(n)
        try b.insertText(n, at: 3, "def")
        let merged = try converge(a, b)
        #expect(merged.notes.isEmpty)
        let conflict = try #require(merged.conflicts.first)
        guard case .deletedWhileEdited(let note, _, let deletedBy, let editedBy) = conflict else { Issue.record("wrong conflict"); return }
        #expect(note == n)
        #expect(deletedBy.map(\.author) == ["alice"])
        #expect(editedBy.map(\.author) == ["bob"])
        try a.merge(b)
        try a.restoreNote(n)
        #expect(a.notes.first?.body == "abcdef")
        #expect(a.conflicts.isEmpty)
    }

    @Test("Rule 5: deleting the note again accepts the deletion: the conflict closes on every copy, the edits stay in the history")
    func acceptDeletion() throws {
        var id: NoteID?
        let (a, b) = pair { id = $0.addNote(title: "Doomed", body: "abc") }
        let n = try #require(id)
        try a.deleteNote(n)
        try b.insertText(n, at: 3, "def")
        try a.merge(b)
        #expect(a.conflicts.count == 1)
        // A deleted note with no such conflict: deleting it again records nothing.
        let other = a.addNote(title: "Other")
        try a.deleteNote(other)
        let before = a.changeCount
        try a.deleteNote(other)
        #expect(a.changeCount == before)

        try a.deleteNote(n)
        #expect(a.changeCount == before + 1)
        #expect(a.conflicts.isEmpty)
        #expect(a.notes.isEmpty)
        // Another copy that takes the acceptance agrees; restoring still brings the edits back.
        try b.merge(a)
        #expect(b.conflicts.isEmpty && b.notebook == a.notebook)
        try b.restoreNote(n)
        #expect(b.notes.first { $0.id == n }?.body == "abcdef")
    }

    @Test("Rule 6: merging is commutative, associative and idempotent")
    func algebra() throws {
        var id: NoteID?
        let a = Document(title: "T", author: "a")
        id = a.addNote(title: "N", body: "base")
        let n = try #require(id)
        let b = a.fork(author: "b"), c = a.fork(author: "c")
        try a.insertText(n, at: 0, "A")
        try b.insertText(n, at: 4, "B")
        try c.setNoteTitle(n, "C")
        let ab_c = a.fork(); try ab_c.merge(b); try ab_c.merge(c)
        let bc = b.fork(); try bc.merge(c)
        let a_bc = a.fork(); try a_bc.merge(bc)
        #expect(ab_c.notebook == a_bc.notebook)
        let again = ab_c.fork(); let summary = try again.merge(a_bc)
        #expect(summary.isUpToDate)
        #expect(again.notebook == ab_c.notebook)
    }

    @Test("Copies of different documents are refused, changing nothing")
    func unrelated() throws {
        let a = Document(title: "A"), b = Document(title: "B")
        let before = a.notebook
        #expect(throws: PeerNoteError.self) { try a.merge(b) }
        #expect(a.notebook == before)
        if case .differentDocuments = a.relation(to: b) {} else { Issue.record("expected differentDocuments") }
    }

    @Test("History and past states")
    func history() throws {
        let a = Document(title: "T", author: "alice")
        let n = a.addNote(title: "N", body: "one")
        let mark = try #require(a.heads.first)
        try a.insertText(n, at: 3, " two")
        #expect(a.history.count == 3)
        #expect(a.history.last?.summary.contains("edited") == true)
        #expect(try a.notebook(at: mark).notes[0].body == "one")
        #expect(a.notes[0].body == "one two")
    }
}

extension MergeRuleTests {
    /// A transaction's change grows until the transaction ends. Merged in from the other copy,
    /// or with the other copy's changes appended after it, it would end up different in the
    /// two copies, and they would never merge again: both merges are refused, changing nothing,
    /// and the copies merge once the transaction is over.
    @Test("Merging while a transaction is open on either copy is refused")
    func mergeInsideTransactionRefused() throws {
        var id: NoteID?
        let (a, b) = pair { id = $0.addNote(title: "Plan", body: "abc") }
        let n = try #require(id)
        try b.insertText(n, at: 3, "B")
        let (aBytes, bBytes) = (a.save(), b.save())
        try a.transaction {
            try a.insertText(n, at: 0, "x")
            #expect(throws: PeerNoteError.self) { try a.merge(b) }
            #expect(throws: PeerNoteError.self) { try b.merge(a) }
            try a.insertText(n, at: 1, "y")
        }
        #expect(b.save() == bBytes)
        #expect(a.save() != aBytes)
        let merged = try converge(a, b)
        #expect(merged.notes.first?.body == "xyabcB")
        try a.merge(b)
        try b.merge(a)
        #expect(a.relation(to: b) == .shared && a.notebook == b.notebook)
    }
}

/// `scalars` as a run of a note body's arena (one byte a scalar when they all fit).
private func scalarRun(_ scalars: [Unicode.Scalar]) -> ScalarRun { ScalarStore(scalars)[scalars.indices] }
