import Foundation
import Testing
@testable import PeerNote

/// The two diffs behind recorded edits and reports: `TextDiff` (a new body as character
/// inserts and deletes) and `NotebookDiff` (which notes a report calls moved). Both are
/// checked against the textbook quadratic algorithms or the plain definition on small random inputs.
@Suite struct DiffAlgorithmTests {
    /// The length of a longest common subsequence, by the O(nm) table.
    static func lcsLength<E: Equatable>(_ x: [E], _ y: [E]) -> Int {
        guard !x.isEmpty, !y.isEmpty else { return 0 }
        var previous = [Int](repeating: 0, count: y.count + 1)
        for i in x.indices {
            var row = [Int](repeating: 0, count: y.count + 1)
            for j in y.indices { row[j + 1] = x[i] == y[j] ? previous[j] + 1 : max(previous[j + 1], row[j]) }
            previous = row
        }
        return previous[y.count]
    }

    /// Applies edits (sorted, non-overlapping offsets into `a`) and checks their shape.
    static func apply<E: Equatable>(_ edits: [TextDiff.Edit<E>], to a: [E]) -> [E]? {
        var out: [E] = []
        var at = 0
        for e in edits {
            guard e.offset >= at, e.offset + e.deleteCount <= a.count, e.deleteCount > 0 || !e.insert.isEmpty else { return nil }
            out += a[at ..< e.offset]
            out += e.insert
            at = e.offset + e.deleteCount
        }
        return out + a[at...]
    }

    /// A random sequence over a small alphabet, and a copy edited in a few places.
    static func pair(_ rng: inout SeededRandom, alphabet: Int, length: Int, edits: Int) -> ([Character], [Character]) {
        let letters = Array("abcdefghijklmnopqrstuvwxyz".prefix(alphabet))
        let a = (0 ..< length).map { _ in letters.randomElement(using: &rng) ?? "a" }
        var b = a
        for _ in 0 ..< edits {
            let at = Int.random(in: 0 ... b.count, using: &rng)
            if Bool.random(using: &rng), at < b.count {
                b.removeSubrange(at ..< min(b.count, at + Int.random(in: 1 ... 4, using: &rng)))
            } else {
                b.insert(contentsOf: (0 ..< Int.random(in: 1 ... 4, using: &rng)).map { _ in letters.randomElement(using: &rng) ?? "a" }, at: at)
            }
        }
        return (a, b)
    }

    @Test func textEditsAreMinimalAndTurnOneIntoTheOther() {
        var rng = SeededRandom(state: 0x7E57)
        for round in 0 ..< 600 {
            // Unrelated texts, texts edited in a few places, and everything between.
            let (a, b): ([Character], [Character])
            if round % 3 == 0 {
                a = Self.pair(&rng, alphabet: 1 + round % 5, length: Int.random(in: 0 ... 40, using: &rng), edits: 0).0
                b = Self.pair(&rng, alphabet: 1 + round % 5, length: Int.random(in: 0 ... 40, using: &rng), edits: 0).0
            } else {
                (a, b) = Self.pair(&rng, alphabet: 2 + round % 20, length: Int.random(in: 0 ... 120, using: &rng), edits: Int.random(in: 0 ... 12, using: &rng))
            }
            let edits = TextDiff.edits(from: a, to: b)
            #expect(Self.apply(edits, to: a) == b, "round \(round): \(String(a)) -> \(String(b))")
            let changed = edits.reduce(0) { $0 + $1.deleteCount + $1.insert.count }
            #expect(changed == a.count + b.count - 2 * Self.lcsLength(a, b), "round \(round): not minimal")
            // Grouped: no edit begins where the one before it ends.
            #expect(zip(edits, edits.dropFirst()).allSatisfy { $0.offset + $0.deleteCount < $1.offset })
        }
    }

    @Test func unrelatedLongTextsAreReplacedWholesale() {
        var rng = SeededRandom(state: 42)
        let letters: [Character] = Array("abcdefghij \n")
        let a: [Character] = (0 ..< 30_000).map { _ in letters.randomElement(using: &rng) ?? "a" }
        let b: [Character] = (0 ..< 30_000).map { _ in letters.randomElement(using: &rng) ?? "a" }
        let edits = TextDiff.edits(from: a, to: b)
        #expect(Self.apply(edits, to: a) == b)
        // More than maxDifferences apart: one edit over the differing middle.
        #expect(edits.count == 1)
    }

    @Test func aLongTextEditedInPlacesGivesThosePlaces() {
        var rng = SeededRandom(state: 7)
        let letters: [Character] = Array("abcdefghijklmnopqrstuvwxyz ")
        let a: [Character] = (0 ..< 50_000).map { _ in letters.randomElement(using: &rng) ?? "a" }
        var b = a
        b.replaceSubrange(40_000 ..< 40_010, with: Array("0123456789AB"))
        b.removeSubrange(20_000 ..< 20_500)
        b.insert(contentsOf: Array("inserted"), at: 100)
        let edits = TextDiff.edits(from: a, to: b)
        #expect(Self.apply(edits, to: a) == b)
        let changed = edits.reduce(0) { $0 + $1.deleteCount + $1.insert.count }
        #expect(changed <= 10 + 12 + 500 + 8)
    }

    static func ids(_ numbers: [Int]) -> [NoteID] { numbers.map { NoteID(replica: ReplicaID(high: 9, low: 9), counter: UInt32($0)) } }

    /// A notebook of notes numbered `numbers`, in that order, and where each was placed:
    /// `place(n)` is a number standing for the op that last placed note n.
    static func notebook(_ numbers: [Int], place: (Int) -> Int) -> (Notebook, [NoteID: NotePlace]) {
        let notes = numbers.map { Note(id: ids([$0])[0], title: "\($0)", body: "", tags: [], priority: .normal, created: .distantPast) }
        let places = Dictionary(uniqueKeysWithValues: numbers.map { (ids([$0])[0], NotePlace(replica: ReplicaID(high: 9, low: 9), counter: UInt32(place($0)))) })
        return (Notebook(id: UUID(), title: "T", notes: notes), places)
    }

    static func moved(_ diff: NotebookDiff) -> [Int] {
        diff.changes.compactMap { if case .moved(let n, _, _) = $0 { Int(n.title) } else { nil } }
    }

    @Test func movedNotesArePlacedAnewWithOtherNotesBeforeThem() {
        var rng = SeededRandom(state: 0x0DE5)
        for round in 0 ..< 400 {
            let n = Int.random(in: 0 ... 30, using: &rng)
            let x = Array(0 ..< n)
            var y = x.shuffled(using: &rng)
            if round % 2 == 0 {
                // Mostly small moves: take a few notes out and put them back elsewhere.
                y = x
                for _ in 0 ..< Int.random(in: 0 ... 3, using: &rng) where !y.isEmpty {
                    let v = y.remove(at: Int.random(in: 0 ..< y.count, using: &rng))
                    y.insert(v, at: Int.random(in: 0 ... y.count, using: &rng))
                }
            }
            // Some notes deleted, some added, some placed anew.
            let deleted = Set(x.filter { _ in Int.random(in: 0 ..< 8, using: &rng) == 0 })
            y = y.filter { !deleted.contains($0) }
            for k in 0 ..< Int.random(in: 0 ... 2, using: &rng) { y.insert(100 + k, at: Int.random(in: 0 ... y.count, using: &rng)) }
            let placedAnew = Set(x.filter { _ in Bool.random(using: &rng) })
            let (a, placesA) = Self.notebook(x) { $0 }
            let (b, placesB) = Self.notebook(y) { placedAnew.contains($0) ? 1000 + $0 : $0 }
            // By the definition: placed anew, and other notes (of those both show) before it.
            let common = Set(x).intersection(y)
            let expected = y.filter { v in
                guard common.contains(v), placedAnew.contains(v) else { return false }
                let beforeA = Set(x.prefix { $0 != v }).intersection(common)
                let beforeB = Set(y.prefix { $0 != v }).intersection(common)
                return beforeA != beforeB
            }
            let diff = NotebookDiff(from: a, placed: placesA, to: b, placed: placesB)
            #expect(Self.moved(diff) == expected, "round \(round)")
            for case .moved(let note, let from, let to) in diff.changes {
                #expect(x[from] == Int(note.title) && y[to] == Int(note.title), "round \(round)")
            }
        }
    }

    /// `NotebookDiff` takes a shortcut when no id repeats (every notebook): the same changes as
    /// the general way, in the same order, with edits, adds, deletes and moves mixed.
    @Test func theShortcutForUniqueIdsGivesTheGeneralWaysChanges() throws {
        var rng = SeededRandom(state: 0x5107)
        func note(_ v: Int, _ variant: Int) -> Note {
            Note(id: Self.ids([v])[0], title: variant & 1 == 0 ? "\(v)" : "\(v)!", body: variant & 2 == 0 ? "" : "b",
                 tags: variant & 4 == 0 ? [] : ["t"], priority: variant & 8 == 0 ? .normal : .high, created: .distantPast)
        }
        var seen = 0
        for round in 0 ..< 300 {
            let x = Array(0 ..< Int.random(in: 0 ... 25, using: &rng))
            var y = x.filter { _ in Int.random(in: 0 ..< 6, using: &rng) != 0 }
            for _ in 0 ..< Int.random(in: 0 ... 3, using: &rng) where !y.isEmpty {
                let v = y.remove(at: Int.random(in: 0 ..< y.count, using: &rng))
                y.insert(v, at: Int.random(in: 0 ... y.count, using: &rng))
            }
            for k in 0 ..< Int.random(in: 0 ... 2, using: &rng) { y.insert(100 + k, at: Int.random(in: 0 ... y.count, using: &rng)) }
            let a = x.map { note($0, 0) }, b = y.map { note($0, Int.random(in: 0 ..< 16, using: &rng) & (Bool.random(using: &rng) ? 0 : 15)) }
            let place = { (v: Int, anew: Bool) in NotePlace(replica: ReplicaID(high: 9, low: 9), counter: UInt32(anew ? 1000 + v : v)) }
            let placesA = Dictionary(uniqueKeysWithValues: x.map { (Self.ids([$0])[0], place($0, false)) })
            let placesB = Dictionary(uniqueKeysWithValues: y.filter { _ in Int.random(in: 0 ..< 10, using: &rng) != 0 }.map { (Self.ids([$0])[0], place($0, Bool.random(using: &rng))) })
            let fast = try #require(NotebookDiff.changes(uniqueFrom: a, placed: placesA, to: b, placed: placesB), "round \(round)")
            #expect(fast == NotebookDiff.changes(from: a, placed: placesA, to: b, placed: placesB), "round \(round)")
            seen += fast.count
            // An id that repeats, in either list: the general way (the first note with it counts).
            if let first = a.first {
                #expect(NotebookDiff.changes(uniqueFrom: a + [first], placed: placesA, to: b, placed: placesB) == nil)
                #expect(NotebookDiff.changes(uniqueFrom: a, placed: placesA, to: [first] + b + [first], placed: placesB) == nil)
                let diff = NotebookDiff(from: Notebook(id: UUID(), title: "T", notes: a + [first]), placed: placesA, to: Notebook(id: UUID(), title: "T", notes: b), placed: placesB)
                #expect(diff.changes == NotebookDiff.changes(from: a + [first], placed: placesA, to: b, placed: placesB))
            }
        }
        #expect(seen > 1_000, "the rounds made changes of every kind to compare")
    }

    @Test func manyNotesMoved() {
        // 20,000 notes, the last thousand moved to the front: only those are moved.
        let x = Array(0 ..< 20_000)
        let y = Array(19_000 ..< 20_000) + Array(0 ..< 19_000)
        let (a, placesA) = Self.notebook(x) { $0 }
        let (b, placesB) = Self.notebook(y) { $0 >= 19_000 ? 100_000 + $0 : $0 }
        let diff = NotebookDiff(from: a, placed: placesA, to: b, placed: placesB)
        #expect(Self.moved(diff) == Array(19_000 ..< 20_000))
    }
}

/// `TextDiff.bodyEdits`, the diff that records a new body: correct on any input, and shaped for
/// people and merging (whole words, boundaries, lines kept by a large edit).
@Suite struct BodyDiffTests {
    static func scalars(_ s: String) -> [Unicode.Scalar] { Array(s.unicodeScalars) }
    static func text(_ s: [Unicode.Scalar]) -> String { String(String.UnicodeScalarView(s)) }

    @Test func bodyEditsTurnOneBodyIntoTheOther() {
        var rng = SeededRandom(state: 0xB0D7)
        let words = ["the", "cat", "sat", "on", "a", "mat", "bread", "cheese", "\n", "\n\n", ".", ",", "é", "🙂", "  "]
        func body(_ n: Int) -> [Unicode.Scalar] {
            Self.scalars((0 ..< n).map { _ in words.randomElement(using: &rng) ?? "a" }.joined(separator: " "))
        }
        for round in 0 ..< 500 {
            let a = body(Int.random(in: 0 ... 60, using: &rng))
            var b = a
            if round % 4 == 0 {
                b = body(Int.random(in: 0 ... 60, using: &rng))
            } else {
                for _ in 0 ..< Int.random(in: 0 ... 6, using: &rng) {
                    let at = Int.random(in: 0 ... b.count, using: &rng)
                    if Bool.random(using: &rng), at < b.count {
                        b.removeSubrange(at ..< min(b.count, at + Int.random(in: 1 ... 8, using: &rng)))
                    } else {
                        b.insert(contentsOf: body(Int.random(in: 1 ... 3, using: &rng)), at: at)
                    }
                }
            }
            let edits = TextDiff.bodyEdits(from: a, to: b)
            #expect(DiffAlgorithmTests.apply(edits, to: a) == b, "round \(round): \(Self.text(a)) -> \(Self.text(b))")
            #expect(zip(edits, edits.dropFirst()).allSatisfy { $0.offset + $0.deleteCount < $1.offset }, "round \(round): not grouped")
            if a == b { #expect(edits.isEmpty) }
        }
    }

    @Test func aWordChangedIntoAnotherIsReplacedWhole() {
        // A minimal diff keeps the "e" of "bread" in "cheese".
        let edits = TextDiff.bodyEdits(from: Self.scalars("Bring: bread"), to: Self.scalars("Bring: cheese"))
        #expect(edits == [TextDiff.Edit(offset: 7, deleteCount: 5, insert: Self.scalars("cheese"))])
        let t = TextDiff.bodyEdits(from: Self.scalars("passport\ntoothbrush"), to: Self.scalars("passport\nsunscreen"))
        #expect(t == [TextDiff.Edit(offset: 9, deleteCount: 10, insert: Self.scalars("sunscreen"))])
    }

    @Test func aSpellingFixStaysSmall() {
        let edits = TextDiff.bodyEdits(from: Self.scalars("the quikc brown fox"), to: Self.scalars("the quick brown fox"))
        #expect(edits.reduce(0) { $0 + $1.deleteCount + $1.insert.count } <= 4)
        #expect(edits.allSatisfy { $0.offset >= 4 && $0.offset + $0.deleteCount <= 9 })
    }

    @Test func anInsertIsSlidToAWordBoundary() {
        // The common prefix "The c" would put the insert inside the word: "The c[at c]ame".
        let edits = TextDiff.bodyEdits(from: Self.scalars("The came."), to: Self.scalars("The cat came."))
        #expect(edits == [TextDiff.Edit(offset: 4, deleteCount: 0, insert: Self.scalars("cat "))])
        let lines = TextDiff.bodyEdits(from: Self.scalars("a\nb\n"), to: Self.scalars("a\nx\nb\n"))
        #expect(lines == [TextDiff.Edit(offset: 2, deleteCount: 0, insert: Self.scalars("x\n"))])
    }

    @Test func aLargeEditOfEveryLineKeepsEachLineItsOwn() {
        // 800 lines, each with two words upper-cased: 12,800 characters differ, more than a
        // character diff will look for; by lines, each line is compared with its new self.
        let lines = (1 ... 800).map { String(format: "line %04d some text here", $0) }
        let a = Self.scalars(lines.joined(separator: "\n"))
        let b = Self.scalars(lines.map { $0.replacingOccurrences(of: "some", with: "SOME").replacingOccurrences(of: "here", with: "HERE") }.joined(separator: "\n"))
        let edits = TextDiff.bodyEdits(from: a, to: b)
        #expect(DiffAlgorithmTests.apply(edits, to: a) == b)
        #expect(edits.count == 1_600)
        #expect(edits.allSatisfy { $0.deleteCount == 4 && $0.insert.count == 4 && !$0.insert.contains("\n") })
    }

    /// Where each scalar of the old text is in the new one after `edits`; nil where deleted.
    static func kept(_ edits: [TextDiff.Edit<Unicode.Scalar>], count: Int) -> [Int?] {
        var out: [Int?] = []
        var at = 0, shift = 0
        for e in edits {
            while at < e.offset { out.append(at + shift); at += 1 }
            for _ in 0 ..< e.deleteCount { out.append(nil); at += 1 }
            shift += e.insert.count - e.deleteCount
        }
        while at < count { out.append(at + shift); at += 1 }
        return out
    }

    /// The positions of the line breaks of `text`.
    static func breaks(_ text: [Unicode.Scalar]) -> [Int] { text.indices.filter { text[$0] == "\n" } }

    @Test func everyLineOfALongBodyChangedIsEditedLineByLine() {
        // 6,000 lines differ: more than a line script looks for (it once became one replacement).
        let a = Self.scalars((1 ... 3_000).map { "line \($0)\n" }.joined())
        let b = Self.scalars((1 ... 3_000).map { "LINE \($0)\n" }.joined())
        let edits = TextDiff.bodyEdits(from: a, to: b)
        #expect(DiffAlgorithmTests.apply(edits, to: a) == b)
        #expect(edits.count == 3_000)
        #expect(edits.allSatisfy { $0.deleteCount == 4 && $0.insert == Self.scalars("LINE") })
    }

    @Test func anInsertMadeMeanwhileInALongBodyEditedEverywhereStaysInItsLine() throws {
        let v1 = (1 ... 3_000).map { "line \($0)" }
        let original = Document(title: "Notes", author: "me")
        let note = original.addNote(title: "Long", body: v1.joined(separator: "\n") + "\n")
        let saved = original.save(.compact)
        let laptop = try Document.load(saved), phone = try Document.load(saved)
        laptop.author = "laptop"
        phone.author = "phone"
        try laptop.setBody(note, v1.map { $0.replacingOccurrences(of: "line", with: "LINE") }.joined(separator: "\n") + "\n")
        // The phone types at the end of line 1500.
        let end = v1.prefix(1_500).reduce(0) { $0 + $1.unicodeScalars.count + 1 } - 1
        try phone.insertText(note, at: end, " PHONE")
        let laptopAlone = try Document.load(laptop.save(.compact))
        _ = try laptop.merge(phone)
        _ = try phone.merge(laptopAlone)
        let body = laptop.notebook.notes[0].body
        #expect(phone.notebook.notes[0].body == body)
        let lines = body.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 3_001)
        #expect(lines[1_499] == "LINE 1500 PHONE")
        #expect(lines.filter { $0.contains("PHONE") }.count == 1)
    }

    @Test("Lines added or deleted in a stretch of lines that all changed are one block, the other lines paired with their new selves",
          arguments: [(0, 40), (1_700, 40), (1_700, -40), (2_960, -40)])
    func linesAddedToLinesThatAllChanged(at: Int, count: Int) {
        let old = (1 ... 3_000).map { "item \($0) to do\n" }
        var new = old.map { $0.replacingOccurrences(of: "to do", with: "DONE") }
        if count > 0 {
            new.insert(contentsOf: (1 ... count).map { "new \($0)\n" }, at: at)
        } else {
            new.removeSubrange(at ..< at - count)
        }
        let a = Self.scalars(old.joined()), b = Self.scalars(new.joined())
        let edits = TextDiff.bodyEdits(from: a, to: b)
        #expect(DiffAlgorithmTests.apply(edits, to: a) == b)
        // Each old line break that stays is the break of the same line in the new text.
        let kept = Self.kept(edits, count: a.count)
        let breaksA = Self.breaks(a), breaksB = Self.breaks(b)
        let moved = breaksA.indices.filter { i in
            if count < 0 && i >= at && i < at - count { return false }
            let j = i < at ? i : i + count
            return kept[breaksA[i]] != breaksB[j]
        }
        #expect(moved.isEmpty, "\(moved.count) lines not kept in place, the first \(moved.first ?? -1)")
        // The lines changed each in itself: "to do" replaced by "DONE", the block apart.
        let changes = edits.filter { $0.deleteCount == 5 && $0.insert == Self.scalars("DONE") }
        #expect(changes.count == (count > 0 ? 3_000 : 3_000 + count))
        #expect(edits.count - changes.count == 1)
    }

    @Test("Unique and repeated lines: paragraphs whose every line of text changed, one deleted and one added, keep their lines in place",
          arguments: [false, true])
    func uniqueAndRepeatedLines(headingsChange: Bool) {
        // Lines by paragraph and role, the role's text, or nil for a repeated line.
        func paragraph(_ p: Int, revised: Bool) -> [(key: String, text: String)] {
            var lines = [("h\(p)", revised && headingsChange ? "## SECTION \(p)" : "## Section \(p)"),
                         ("t\(p)", revised ? "Text of section \(p), revised." : "Text of section \(p)."),
                         ("b\(p)", "")]
            if p % 3 == 0 { lines.append(("todo\(p)", "TODO")) }
            lines.append(("r\(p)", "---"))
            return lines
        }
        let oldLines = (1 ... 2_500).flatMap { paragraph($0, revised: false) }
        // With the headings changing, nothing is unique to both: one block of lines may come or go.
        let deleted = headingsChange ? -1 : 1_200
        let newLines = (1 ... 2_500).filter { $0 != deleted }.flatMap { p in
            p == 2_000 ? paragraph(p, revised: true) + [("n", "A new paragraph."), ("nb", "")] : paragraph(p, revised: true)
        }
        let a = Self.scalars(oldLines.map { $0.text + "\n" }.joined()), b = Self.scalars(newLines.map { $0.text + "\n" }.joined())
        let edits = TextDiff.bodyEdits(from: a, to: b)
        #expect(DiffAlgorithmTests.apply(edits, to: a) == b)
        let kept = Self.kept(edits, count: a.count)
        let breaksA = Self.breaks(a), breaksB = Self.breaks(b)
        let newIndex = Dictionary(uniqueKeysWithValues: newLines.enumerated().map { ($1.key, $0) })
        let moved = oldLines.indices.filter { i in
            // The "---" before the deleted paragraph and the one ending it are alike: either may go.
            guard let j = newIndex[oldLines[i].key], oldLines[i].key != "r\(deleted - 1)" else { return false }
            return kept[breaksA[i]] != breaksB[j]
        }
        #expect(moved.isEmpty, "\(moved.count) lines not kept in place, the first \(moved.first.map { oldLines[$0].key } ?? "")")
        let changed = edits.reduce(0) { $0 + $1.deleteCount + $1.insert.count }
        #expect(changed < (a.count + b.count) / 4, "\(changed) of \(a.count + b.count) changed")
    }

    @Test func largeRandomEditsOfLinesTurnOneBodyIntoTheOtherAndStayLocal() {
        var rng = SeededRandom(state: 0x1A4E)
        let repeated = ["", "---", "TODO", "}", "  - item", "\t"]
        let words = ["alpha", "beta", "gamma", "delta", "é", "🙂", "x", "", "the cat", "1"]
        func word() -> String { words.randomElement(using: &rng) ?? "" }
        func line(_ i: Int) -> String {
            Int.random(in: 0 ..< 4, using: &rng) == 0 ? repeated.randomElement(using: &rng) ?? "" : "line \(i) \(word()) \(word())"
        }
        for round in 0 ..< 40 {
            let large = round % 2 == 0
            let n = large ? Int.random(in: 3_000 ... 5_000, using: &rng) : Int.random(in: 1 ... 600, using: &rng)
            let old = (0 ..< n).map { line($0) }
            // Touched: scalars of old lines changed or deleted and of new lines changed or added.
            var touched = 0
            let p = large ? Double.random(in: 0.6 ... 0.9, using: &rng) : Double.random(in: 0 ... 1, using: &rng)
            var new = old.map { l -> String in
                guard Double.random(in: 0 ..< 1, using: &rng) < p else { return l }
                let changed = Bool.random(using: &rng) ? l.uppercased() : l + " " + word()
                touched += l.unicodeScalars.count + changed.unicodeScalars.count + 2
                return changed
            }
            for _ in 0 ..< Int.random(in: 0 ... 4, using: &rng) {
                let at = Int.random(in: 0 ... new.count, using: &rng), k = Int.random(in: 1 ... 60, using: &rng)
                if Bool.random(using: &rng), at < new.count {
                    let gone = new[at ..< min(new.count, at + k)]
                    touched += gone.reduce(0) { $0 + $1.unicodeScalars.count + 1 }
                    new.removeSubrange(at ..< min(new.count, at + k))
                } else {
                    let came = (0 ..< k).map { _ in line(-1) }
                    touched += came.reduce(0) { $0 + $1.unicodeScalars.count + 1 }
                    new.insert(contentsOf: came, at: at)
                }
            }
            let a = Self.scalars(old.joined(separator: "\n")), b = Self.scalars(new.joined(separator: "\n"))
            let edits = TextDiff.bodyEdits(from: a, to: b)
            #expect(DiffAlgorithmTests.apply(edits, to: a) == b, "round \(round)")
            #expect(zip(edits, edits.dropFirst()).allSatisfy { $0.offset + $0.deleteCount < $1.offset }, "round \(round): not grouped")
            let changed = edits.reduce(0) { $0 + $1.deleteCount + $1.insert.count }
            #expect(changed <= touched, "round \(round): \(changed) scalars changed, \(touched) touched, of \(a.count + b.count)")
        }
    }

    @Test func unrelatedLongBodiesAreStillReplacedWholesale() {
        var rng = SeededRandom(state: 99)
        let letters = Self.scalars("abcdefghij ")
        let a = (0 ..< 30_000).map { _ in letters.randomElement(using: &rng) ?? "a" }
        let b = (0 ..< 30_000).map { _ in letters.randomElement(using: &rng) ?? "a" }
        let edits = TextDiff.bodyEdits(from: a, to: b)
        #expect(DiffAlgorithmTests.apply(edits, to: a) == b)
        #expect(edits.count == 1)
    }
}
