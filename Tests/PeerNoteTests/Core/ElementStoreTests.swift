import Testing
@testable import PeerNote

/// A number as a list's element, for tests of the list's structure alone.
struct Numbered: ListElement, Equatable {
    typealias Store = ArrayStore<Numbered>
    var value: Int
    init(_ value: Int) { self.value = value }
}

@Suite("ScalarStore: bodies and the log's text, one byte a scalar until one is past U+00FF")
struct ElementStoreTests {
    /// Scalars of every width: ASCII, Latin-1, the rest of the BMP, and past it.
    static let pool: [Unicode.Scalar] = ["a", "z", "\n", "\u{0}", "\u{7F}", "\u{80}", "é", "\u{FF}",
                                        "\u{100}", "’", "中", "\u{FFFD}", "😀", "\u{10FFFF}"]

    /// Runs random appends, single and in runs, and overwrites on a store and on a plain array,
    /// and checks that the store reads back the array, element by element, by range and whole.
    @Test("Random appends, placeholders, roll-backs and overwrites read back as a plain array of scalars holds them",
          arguments: [1, 2, 3, 4, 5, 6])
    func againstArray(seed: UInt64) {
        var rng = SeededRandom(state: seed)
        // Narrow scalars only, or now and then a wide one: stores that stay narrow and that widen.
        let widthLimit = seed % 2 == 0 ? 8 : Self.pool.count
        func scalar() -> Unicode.Scalar {
            Int.random(in: 0 ..< 20, using: &rng) == 0 ? Self.pool[Int.random(in: 0 ..< widthLimit, using: &rng)]
                : Unicode.Scalar(UInt8.random(in: 32 ... 126, using: &rng))
        }
        // The store starts empty, reading a stretch of other bytes in place (which its writes
        // must leave alone), or as placeholders counted and not stored (a load's body).
        var store = ScalarStore()
        var expected: [Unicode.Scalar] = []
        let source = Array("<<borrowed text, read in place>>".utf8)
        switch seed % 3 {
        case 1:
            store = ScalarStore(borrowing: source[2 ..< source.count - 2])
            expected = source[2 ..< source.count - 2].map { Unicode.Scalar($0) }
            #expect(store.readsInPlace)
        case 2:
            store.append(contentsOf: PlaceholderRun(0 ..< 25))
            expected = Array(repeating: .placeholder, count: 25)
            #expect(store.isUnwritten)
        default:
            break
        }
        for _ in 0 ..< 400 {
            switch Int.random(in: 0 ..< 6, using: &rng) {
            case 4:
                // Placeholders, counted until the next write; or a roll-back of the last scalars.
                if Bool.random(using: &rng) {
                    let n = Int.random(in: 0 ... 20, using: &rng)
                    store.append(contentsOf: PlaceholderRun(0 ..< n))
                    expected.append(contentsOf: repeatElement(.placeholder, count: n))
                } else {
                    let n = Int.random(in: 0 ... min(10, expected.count), using: &rng)
                    store.removeLast(n)
                    expected.removeLast(n)
                }
            case 5:
                // Reads between writes: unwritten placeholders and borrowed bytes read as stored ones.
                let a = Int.random(in: 0 ... expected.count, using: &rng), b = Int.random(in: a ... expected.count, using: &rng)
                #expect(Array(store[a ..< b]) == Array(expected[a ..< b]))
                #expect(store.elements == expected)
                if a < b { #expect(store[a] == expected[a]) }
                var utf8: [UInt8] = []
                store.appendUTF8(a ..< b, to: &utf8)
                var string = String.UnicodeScalarView()
                string.append(contentsOf: expected[a ..< b])
                #expect(utf8 == Array(String(string).utf8))
                #expect(store == ScalarStore(expected))
            case 0:
                let s = scalar()
                store.append(s)
                expected.append(s)
            case 1, 2:
                let run = (0 ..< Int.random(in: 0 ... 40, using: &rng)).map { _ in scalar() }
                // From an array slice (contiguous) or a lazy collection (not).
                if Bool.random(using: &rng) { store.append(contentsOf: run[...]) } else { store.append(contentsOf: run.lazy.map { $0 }) }
                expected.append(contentsOf: run)
            default:
                guard !expected.isEmpty else { continue }
                let start = Int.random(in: 0 ..< expected.count, using: &rng)
                let run = (0 ..< Int.random(in: 0 ... min(30, expected.count - start), using: &rng)).map { _ in scalar() }
                // From an array slice, from Latin-1 bytes, or from a stretch of another store
                // (narrow or wide, as the run makes it), as loading writes a body's text in.
                switch Int.random(in: 0 ..< 3, using: &rng) {
                case 1 where run.allSatisfy({ $0.value <= 0xFF }):
                    let bytes = run.map { UInt8(truncatingIfNeeded: $0.value) }
                    bytes.withUnsafeBufferPointer { store.overwrite(from: start, latin1: $0) }
                case 2:
                    var other = ScalarStore()
                    other.append(contentsOf: ["<"] + run + [">"])
                    store.overwrite(from: start, with: other, 1 ..< 1 + run.count)
                default:
                    store.overwrite(from: start, with: run[...])
                }
                expected.replaceSubrange(start ..< start + run.count, with: run)
            }
            #expect(store.count == expected.count)
        }
        #expect(source == Array("<<borrowed text, read in place>>".utf8))
        #expect(store.elements == expected)
        #expect(store.isWide == expected.contains { $0.value > 0xFF })
        #expect((0 ..< expected.count).allSatisfy { store[$0] == expected[$0] })
        for _ in 0 ..< 200 {
            let a = Int.random(in: 0 ... expected.count, using: &rng), b = Int.random(in: a ... expected.count, using: &rng)
            let run = store[a ..< b]
            #expect(run.startIndex == a && run.endIndex == b)
            #expect(Array(run) == Array(expected[a ..< b]))
            var out: [Unicode.Scalar] = ["x"]
            store.append(a ..< b, to: &out)
            #expect(out == ["x"] + expected[a ..< b])
            let copied = [Unicode.Scalar](unsafeUninitializedCapacity: b - a) { buffer, count in
                run.copy(into: buffer)
                count = b - a
            }
            #expect(copied == Array(expected[a ..< b]))
            // A slice of a run is the run of the same stretch.
            if b - a >= 2 {
                let inner = run[(a + 1) ..< (b - 1)]
                #expect(Array(inner) == Array(expected[(a + 1) ..< (b - 1)]))
            }
        }
    }

    @Test("inPlaceRange finds a store's bytes within the buffer it reads in place, and only there")
    func inPlaceRangeWithinItsBuffer() {
        let section = Array("{title}hello, world{next}".utf8)
        let same = section   // the same buffer, another array value
        let equal = section.map { $0 }   // equal bytes in a buffer of their own
        var store = ScalarStore(borrowing: section[7 ..< 19])
        #expect(store.inPlaceRange(within: section) == 7 ..< 19)
        #expect(store.inPlaceRange(within: same) == 7 ..< 19)
        #expect(store.inPlaceRange(within: equal) == nil)
        #expect(ScalarStore(borrowing: section[...]).inPlaceRange(within: section) == 0 ..< section.count)
        #expect(ScalarStore(borrowing: section[0 ..< 0]).inPlaceRange(within: section).map(\.isEmpty) ?? true)
        // Not reading in place: its own bytes, placeholders, a wide store, a store written since.
        #expect(ScalarStore(Array("hello".unicodeScalars)).inPlaceRange(within: section) == nil)
        var placeholders = ScalarStore(borrowing: section[7 ..< 12])
        placeholders.append(contentsOf: PlaceholderRun(0 ..< 3))
        #expect(placeholders.inPlaceRange(within: section) == nil)
        #expect(ScalarStore(Array("\u{1F600}".unicodeScalars)).inPlaceRange(within: section) == nil)
        store.append(contentsOf: ["!"])
        #expect(store.inPlaceRange(within: section) == nil)
    }

    @Test("read(inPlace:) leaves a store, whatever it held, as init(borrowing:) makes it")
    func readInPlaceOverAnything() {
        let bytes = Array("[title]hello, world[next]".utf8)
        let stretch = bytes[7 ..< 19]
        var placeholders = ScalarStore()
        placeholders.append(contentsOf: PlaceholderRun(0 ..< 12))
        let stores = [ScalarStore(), ScalarStore(Array("narrow".unicodeScalars)), ScalarStore(Array("wide \u{1F600}".unicodeScalars)),
                      placeholders, ScalarStore(borrowing: bytes[0 ..< 7])]
        let expected = ScalarStore(borrowing: stretch)
        for var store in stores {
            store.read(inPlace: stretch)
            #expect(store.readsInPlace && !store.isWide && !store.isUnwritten && store.count == 12)
            #expect(store.elements == expected.elements && store == expected)
            // Its first write copies the bytes, as a store made by init(borrowing:) does.
            store.append(contentsOf: ["!"])
            #expect(!store.readsInPlace && String(String.UnicodeScalarView(store.elements)) == "hello, world!")
        }
        #expect(String(decoding: bytes, as: UTF8.self) == "[title]hello, world[next]")
    }

    @Test("A store reads other bytes in place until its first write, which copies them and leaves them as they were")
    func readInPlace() {
        let bytes = Array("[title]hello, world[next]".utf8)
        let stretch = bytes[7 ..< 19]
        let store = ScalarStore(borrowing: stretch)
        #expect(store.readsInPlace && !store.isWide && store.count == 12)
        #expect(store.elements == Array("hello, world".unicodeScalars))
        #expect(store[0] == "h" && store[11] == "d")
        // A run's indices are the store's offsets, not the indices of the bytes it reads.
        let run = store[7 ..< 12]
        #expect(run.startIndex == 7 && run.endIndex == 12 && String(String.UnicodeScalarView(run)) == "world")
        #expect(String(String.UnicodeScalarView(run[8 ..< 10])) == "or")
        var out: [UInt8] = []
        store.appendUTF8(0 ..< 5, to: &out)
        #expect(out == Array("hello".utf8))
        #expect(store == ScalarStore(Array("hello, world".unicodeScalars)))
        var appended = store, overwritten = store, rolledBack = store, widened = store
        appended.append("!")
        Array("HELLO".utf8).withUnsafeBufferPointer { overwritten.overwrite(from: 0, latin1: $0) }
        rolledBack.removeLast(7)
        widened.append("😀")
        #expect(appended.elements == Array("hello, world!".unicodeScalars) && !appended.readsInPlace)
        #expect(overwritten.elements == Array("HELLO, world".unicodeScalars) && !overwritten.readsInPlace)
        #expect(rolledBack.elements == Array("hello".unicodeScalars) && !rolledBack.readsInPlace)
        #expect(widened.isWide && widened.elements == Array("hello, world😀".unicodeScalars))
        #expect(store.readsInPlace && store.elements == Array("hello, world".unicodeScalars))
        #expect(bytes == Array("[title]hello, world[next]".utf8))
    }

    @Test("Placeholders appended to a narrow store are counted, not stored, and read and compare as stored ones until a write")
    func unwrittenPlaceholders() {
        var unwritten = ScalarStore()
        unwritten.append(contentsOf: PlaceholderRun(0 ..< 300))
        let stored = ScalarStore(placeholders: 300, reserving: 0)
        #expect(unwritten.isUnwritten && !stored.isUnwritten && !ScalarStore().isUnwritten)
        #expect(unwritten == stored && unwritten.count == 300 && unwritten[299] == .placeholder)
        #expect(Array(unwritten[10 ..< 20]) == Array(repeating: .placeholder, count: 10))
        var a = Hasher(), b = Hasher()
        unwritten.hash(0 ..< 300, into: &a)
        stored.hash(0 ..< 300, into: &b)
        #expect(a.finalize() == b.finalize())
        var written = unwritten
        Array("text".utf8).withUnsafeBufferPointer { written.overwrite(from: 296, latin1: $0) }
        #expect(!written.isUnwritten && written.count == 300)
        #expect(written.elements == Array(repeating: .placeholder, count: 296) + Array("text".unicodeScalars))
        // Counted after stored scalars too, and taken back by a roll-back first.
        var mixed = ScalarStore(Array("ab".unicodeScalars))
        mixed.append(contentsOf: PlaceholderRun(0 ..< 3))
        #expect(!mixed.isUnwritten && mixed.elements == Array("ab".unicodeScalars) + Array(repeating: .placeholder, count: 3))
        mixed.removeLast(4)
        #expect(mixed.elements == ["a"])
    }

    @Test("A store made from scalars is narrow exactly when all of them are Latin-1")
    func madeWhole() {
        let latin: [Unicode.Scalar] = ["a", "é", "\u{FF}", "\u{0}"]
        #expect(!ScalarStore(latin).isWide)
        #expect(ScalarStore(latin).elements == latin)
        let wide = latin + ["\u{100}"]
        #expect(ScalarStore(wide).isWide)
        #expect(ScalarStore(wide).elements == wide)
        #expect(ScalarStore([]).elements.isEmpty)
    }

    @Test("A note whose body gets one wide scalar keeps every scalar, and its neighbours stay narrow")
    func widenedBody() throws {
        let doc = Document()
        let first = doc.addNote(title: "Plain", body: "café, naïve")
        let second = doc.addNote(title: "Wide", body: "plain so far")
        try doc.setBody(second, "plain so far 😀 and “quoted”")
        let stored = doc.state.noteStates.map(\.body.arena)
        #expect(stored.filter(\.isWide).count == 1)
        #expect(doc.note(first)?.body == "café, naïve")
        #expect(doc.note(second)?.body == "plain so far 😀 and “quoted”")
        let reloaded = try Document.load(doc.save())
        #expect(reloaded.note(second)?.body == "plain so far 😀 and “quoted”")
        #expect(reloaded.note(first)?.body == "café, naïve")
    }

    @Test("A narrow and a wide store of the same scalars compare and hash alike; roll-backs and ASCII appends keep the width")
    func narrowAgainstWide() {
        let text: [Unicode.Scalar] = Array("Line of text, café, \u{FF}".unicodeScalars)
        let narrow = ScalarStore(text)
        var wide = ScalarStore(text + ["😀"])
        wide.removeLast(1)
        #expect(!narrow.isWide && wide.isWide)
        #expect(narrow == wide)
        #expect(narrow.sameScalars(5 ..< 12, as: wide, from: 5))
        #expect(!narrow.sameScalars(5 ..< 12, as: wide, from: 6))
        func hashed(_ store: ScalarStore, _ range: Range<Int>) -> Int {
            var h = Hasher()
            store.hash(range, into: &h)
            return h.finalize()
        }
        #expect(hashed(narrow, 0 ..< text.count) == hashed(wide, 0 ..< text.count))
        #expect(hashed(narrow, 3 ..< 9) == hashed(wide, 3 ..< 9))
        #expect(hashed(narrow, 3 ..< 9) != hashed(wide, 4 ..< 10))
        // Past one chunk of the narrow store's hashing.
        let long = (0 ..< 1_000).map { Unicode.Scalar(UInt8(32 + $0 % 90)) }
        var longWide = ScalarStore(long + ["中"])
        longWide.removeLast(1)
        #expect(hashed(ScalarStore(long), 0 ..< 1_000) == hashed(longWide, 0 ..< 1_000))
        var appended = narrow
        Array("plain".utf8).withUnsafeBufferPointer { appended.append(ascii: $0) }
        #expect(!appended.isWide && appended.elements == text + Array("plain".unicodeScalars))
        var appendedWide = wide
        Array("plain".utf8).withUnsafeBufferPointer { appendedWide.append(ascii: $0) }
        #expect(appendedWide == appended)
    }

    @Test("A copy whose log went wide and one still narrow share their history, and merge both ways")
    func logWidths() throws {
        let doc = Document()
        doc.addNote(title: "One", body: "plain text")
        let copy = try Document.load(doc.save())
        doc.addNote(title: "Two", body: "now with 😀")
        try copy.setBody(try #require(copy.notes.first?.id), "plain text, edited")
        #expect(doc.log.text.isWide && !copy.log.text.isWide)
        #expect(doc.relation(to: copy) == .shared)
        let (ab, _) = try doc.merged(with: copy)
        let (ba, _) = try copy.merged(with: doc)
        #expect(ab.save() == ba.save())
        #expect(ab.notes.map(\.body) == ["plain text, edited", "now with 😀"])
    }

    @Test("Placeholders append as a fill: as many as the run has, to a narrow store and to a wide one, and slice at any offsets")
    func placeholderRuns() {
        let run = PlaceholderRun(0 ..< 40)
        #expect(run.count == 40 && run.allSatisfy { $0 == .placeholder })
        // A slice past the run's end still holds placeholders (a joined insert may be longer).
        #expect(run[30 ..< 70].count == 40 && run[30 ..< 70].startIndex == 30)
        for start in [[Unicode.Scalar](), Array("ab".unicodeScalars), Array("a😀".unicodeScalars)] {
            for n in [0, 3, 16, 17, 5_000] {
                var store = ScalarStore(start)
                let wide = store.isWide
                store.append(contentsOf: PlaceholderRun(7 ..< 7 + n))
                #expect(store.elements == start + Array(repeating: .placeholder, count: n), "\(start) + \(n)")
                #expect(store.isWide == wide)
            }
        }
    }

    @Test("A stretch's UTF-8 is what the string of its scalars holds: ASCII, Latin-1 and wide stores, at every offset")
    func utf8OfStretches() {
        var rng = SeededRandom(state: 11)
        // ASCII long enough for whole words, Latin-1 letters past U+007F, and (for a wide store) scalars past U+00FF.
        let alphabets: [[Unicode.Scalar]] = [Array("abc xyz.\n".unicodeScalars), Array("aé ÿ\u{80}z".unicodeScalars),
                                            Array("aé€😀 \u{7FF}\u{800}\u{FFFF}\u{10000}".unicodeScalars)]
        for alphabet in alphabets {
            for length in [0, 1, 7, 8, 9, 31, 64, 200] {
                let scalars = (0 ..< length).map { _ in alphabet[Int.random(in: 0 ..< alphabet.count, using: &rng)] }
                let store = ScalarStore(scalars)
                for start in Set([0, length / 3, length]) {
                    for end in Set([start, (start + length) / 2, length]) where end >= start {
                        var out: [UInt8] = [0x41]
                        store.appendUTF8(start ..< end, to: &out)
                        var string = String.UnicodeScalarView()
                        string.append(contentsOf: scalars[start ..< end])
                        #expect(out == [0x41] + Array(String(string).utf8), "\(scalars[start ..< end])")
                    }
                }
            }
        }
        // A whole ASCII stretch of whole words, and one whose only Latin-1 letter is the last byte.
        let ascii = ScalarStore(Array(String(repeating: "notebook", count: 9).unicodeScalars) + ["é"])
        var out: [UInt8] = []
        ascii.appendUTF8(0 ..< 72, to: &out)
        #expect(out == Array(String(repeating: "notebook", count: 9).utf8))
        out = []
        ascii.appendUTF8(0 ..< 73, to: &out)
        #expect(out == Array((String(repeating: "notebook", count: 9) + "é").utf8))
    }

    @Test("utf8Count counts the bytes appendUTF8 writes, for narrow, wide and gathered stores and any range")
    func utf8CountMatchesAppendUTF8() {
        var rng = SeededRandom(state: 0x7F8C)
        let alphabets: [[Unicode.Scalar]] = [["a", "b", " ", "\n"], ["a", "é", "ß", "ÿ", "x"], ["a", "語", "😀", "é"]]
        for round in 0 ..< 60 {
            let alphabet = alphabets[round % alphabets.count]
            let scalars = (0 ..< Int(rng.next() % 90)).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] }
            let store = ScalarStore(scalars)
            var ranges: [Range<Int>] = []
            for _ in 0 ..< 8 {
                let a = scalars.isEmpty ? 0 : Int(rng.next() % UInt64(scalars.count + 1)), b = scalars.isEmpty ? 0 : Int(rng.next() % UInt64(scalars.count + 1))
                let r = Swift.min(a, b) ..< Swift.max(a, b)
                var out: [UInt8] = []
                store.appendUTF8(r, to: &out)
                #expect(store.utf8Count(r) == out.count, "round \(round), \(r)")
                ranges.append(r)
            }
            // A store gathered from stretches of this one holds those scalars, in that order.
            let gathered = ScalarStore.gathering(ranges, of: store)
            #expect(gathered.elements == ranges.flatMap { Array(scalars[$0]) }, "round \(round)")
        }
    }
}
