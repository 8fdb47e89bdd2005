import Foundation
import Testing
@_spi(Diagnostics) @testable import PeerNote

/// The state section (block field 12, format versions 2 and 3): a compact save stores the notebook
/// as readers see it, and its text in document order, so `Document.readNotebook` needs no replay.
/// (What version 3 adds, each body's structure: `FormatVersion3Tests`.)
@Suite("State section")
struct StateSectionTests {
    static func onlyBlock(_ bytes: [UInt8]) throws -> (raw: RawBlock, block: WireBlock) {
        let raws = try BlockCodec.decode(bytes)
        try #require(raws.count == 1)
        return (raws[0], try WireCodec.decodePayload(raws[0], fileSize: bytes.count))
    }

    /// `block` re-encoded as a whole file (of the version a writer would give it: 3 when its
    /// state section stores the bodies' structures, 2 when it does not).
    static func file(_ block: WireBlock) -> [UInt8] {
        BlockCodec.encode(payload: WireCodec.encodePayload(block), version: Format.version(of: block))
    }

    /// Load reads the state section's text through these two; they must agree with the standard library.
    @Test("A section's entry takes 72 bytes: a load holds one a note at its peak")
    func entrySize() {
        #expect(MemoryLayout<WireNoteState>.stride == 72)
    }

    @Test("The size a save reserves for a section's entries is what they encode to, at every head width")
    func encodedSizeIsExact() {
        var rng = SeededRandom(state: 31)
        let texts = ["", "a", "é", "日本語", "😀", String(repeating: "x", count: 23), String(repeating: "x", count: 24),
                     String(repeating: "y", count: 255), String(repeating: "y", count: 256), String(repeating: "z", count: 65_536)]
        let numbers: [UInt64] = [0, 23, 24, 255, 256, 65_535, 65_536, 0xffff_ffff, 0x1_0000_0000]
        for round in 0 ..< 200 {
            var bodies: [String] = []
            let notes = (0 ..< Int.random(in: 0 ... 6, using: &rng)).map { _ -> WireNoteState in
                let tags = (0 ..< Int.random(in: 0 ... 3, using: &rng)).map { _ in texts.randomElement(using: &rng) ?? "" }.filter { !$0.isEmpty }
                let created = Int64(truncatingIfNeeded: numbers.randomElement(using: &rng) ?? 0) * (Bool.random(using: &rng) ? 1 : -1) - (Bool.random(using: &rng) ? 1 : 0)
                return WireNoteState(replica: Int(numbers[Int.random(in: 0 ..< 6, using: &rng)]), counter: UInt32(truncatingIfNeeded: numbers.randomElement(using: &rng) ?? 0),
                                     title: texts.randomElement(using: &rng) ?? "", tags: Array(Set(tags)).sorted(),
                                     priority: [Priority.low, .normal, .high].randomElement(using: &rng) ?? .normal, created: created,
                                     deleted: Bool.random(using: &rng),
                                     structure: round % 3 == 0 ? StructureCodecTests.randomRuns(&rng, replicas: 3, count: Int.random(in: 1 ... 40, using: &rng)) : nil)
            }
            for _ in notes { bodies.append(texts.randomElement(using: &rng) ?? "") }
            let state = WireState(title: "", notes: notes, bodies: bodies)
            var e = CBOREncoder()
            StateCodec.encodeNotes(state, into: &e)
            #expect(StateCodec.encodedSize(state) == e.bytes.count, "round \(round)")
        }
    }

    @Test("Scalars and their count, read from a string's UTF-8, are unicodeScalars', and make the string again")
    func scalarsFromUTF8() {
        var rng = SeededRandom(state: 9)
        let pieces = ["", "a", "plain ASCII text\n", "é", "ü\u{308}", "日本語", "€", "😀", "🇩🇪", "\u{7F}", "\u{80}", "\u{7FF}", "\u{800}", "\u{FFFF}", "\u{10000}", "\u{10FFFF}", "\r\n"]
        for _ in 0 ..< 300 {
            let s = (0 ..< Int.random(in: 0 ... 24, using: &rng)).map { _ in pieces[Int.random(in: 0 ..< pieces.count, using: &rng)] }.joined()
            if s.scalarArray != Array(s.unicodeScalars) || s.scalarCount != s.unicodeScalars.count {
                Issue.record("\(s.debugDescription): \(s.scalarArray.count) scalars read, \(s.unicodeScalars.count) expected")
            }
            // And back: from an array (written straight into the string) and from a slice of one.
            let scalars = Array(s.unicodeScalars)
            if !String(scalars: scalars).utf8.elementsEqual(s.utf8) || !String(scalars: scalars[...]).utf8.elementsEqual(s.utf8)
                || !String(scalars: scalars.lazy.map { $0 }).utf8.elementsEqual(s.utf8) {
                Issue.record("\(s.debugDescription) does not come back from its scalars")
            }
        }
    }

    @Test("A compact save with text has a state section (version 2) that reads back as the notebook, deleted notes included")
    func roundTrip() throws {
        let d = try sampleDocument()
        let bytes = d.save()
        let (raw, block) = try Self.onlyBlock(bytes)
        #expect(raw.version == 2)
        let state = try #require(block.state)
        #expect(state.notes.map(\.deleted) == [false, false, true])
        #expect(state.body(state.notes.count - 1) == "zzz ✓ 日本")
        // Only deleted text is in the text column: "Teh" was replaced by "The".
        #expect(String(String.UnicodeScalarView(block.deadText)) == "Teh")
        #expect(try Document.readNotebook(bytes) == d.notebook)
        let loaded = try Document.load(bytes)
        #expect(loaded.notebook == d.notebook)
        #expect(loaded.deletedNotes == d.deletedNotes)
        #expect(loaded.history == d.history)
        #expect(loaded.save() == bytes)
    }

    @Test("A loaded document's inserted text is the original's: the histories agree, and it edits and merges on")
    func loadedTextIsExact() throws {
        let d = try sampleDocument()
        let loaded = try Document.load(d.save())
        #expect(loaded.relation(to: d) == .shared)
        #expect(loaded.log.text == d.log.text)
        let other = d.fork(author: "bob")
        let notes = try #require(Optional(other.notes))
        try other.insertText(notes[0].id, at: 0, "Bob: ")
        try loaded.insertText(notes[1].id, at: 0, "Loaded: ")
        try loaded.merge(other)
        try other.merge(loaded)
        #expect(loaded.notebook == other.notebook)
        #expect(try Document.load(loaded.save()).notebook == other.notebook)
    }

    @Test("No text, or conflicts: no state section, version 1, and readNotebook loads in full")
    func whenNotWritten() throws {
        let empty = Document(title: "Hi", id: UUID(), replica: ReplicaID(high: 9, low: 9))
        let bytes = empty.save()
        #expect(try Self.onlyBlock(bytes).raw.version == 1)
        #expect(try Self.onlyBlock(bytes).block.state == nil)
        #expect(try Document.readNotebook(bytes) == empty.notebook)

        let a = try sampleDocument()
        let b = a.fork(author: "bob")
        a.setTitle("From A")
        b.setTitle("From B")
        try a.merge(b)
        #expect(!a.conflicts.isEmpty)
        let conflicted = a.save()
        #expect(try Self.onlyBlock(conflicted).block.state == nil)
        #expect(try Self.onlyBlock(conflicted).raw.version == 1)
        let read = try Document.readNotebook(conflicted)
        #expect(read == a.notebook)
        #expect(!read.conflicts.isEmpty)
    }

    @Test("A save without a state section writes the inserts' text as UTF-8 in op order: the bytes an encoder of the block's scalars writes")
    func textWithoutSectionIsUTF8() throws {
        // Every width of character, deletes between them, typed in several runs and notes, and a
        // conflict (so that the compact save has no state section and the text column holds it all).
        let a = try sampleDocument()
        let texts = ["plain ASCII", "café crème", "日本語のテキスト", "😀 and 👩‍👩‍👧", "mixed é 日 😀 x"]
        for (k, text) in texts.enumerated() {
            let id = a.addNote(title: "N\(k)", body: text)
            try a.insertText(id, at: 2, "ü→")
            try a.deleteText(id, range: 1 ..< 3)
            try a.insertText(id, at: 0, String(text.reversed()))
        }
        let b = a.fork(author: "bob")
        a.setTitle("From A")
        b.setTitle("From B")
        try b.insertText(a.notes[0].id, at: 0, "Bob’s ")
        try a.merge(b)
        let conflicted = a.save()
        let (_, block) = try Self.onlyBlock(conflicted)
        #expect(block.state == nil)
        #expect(block.textCount == a.log.textCount)
        // The decoded block holds its text as scalars: encoded again from them, it is the save.
        #expect(Self.file(block) == conflicted)
        let loaded = try Document.load(conflicted)
        #expect(loaded.notebook == a.notebook)
        #expect(loaded.log.text == a.log.text)
        // An incremental save's appended block is made the same way.
        let e = try Document.load(conflicted)
        try e.insertText(e.notes[1].id, at: 0, "añadido 日本 😀 ")
        let appended = e.save(.incremental)
        #expect(appended.count > conflicted.count && Array(appended.prefix(conflicted.count)) == conflicted)
        #expect(try Document.load(appended).notebook == e.notebook)
    }

    @Test("Blocks appended after a state section are read through a full load")
    func appended() throws {
        let d = try sampleDocument()
        _ = d.save()
        try d.insertText(try #require(d.notes.first).id, at: 0, "more ")
        let bytes = d.save(.incremental)
        #expect(try BlockCodec.decode(bytes).count == 2)
        #expect(try Document.readNotebook(bytes) == d.notebook)
        #expect(try Document.load(bytes).notebook == d.notebook)
        #expect(try Document.load(bytes).relation(to: d) == .shared)
    }

    /// `Document.load` reads such a block without placeholder text (`WireBlock.placeholderCount`):
    /// the replay reads placeholders as long as an insert from position 0, and must still give the
    /// original's text where stored inserts are joined into one longer than any stored one.
    @Test("Without placeholders, a state section's block holds no text; its inserts, joined past the longest, load as the original's on one thread and two")
    func joinedInsertsWithoutPlaceholders() throws {
        let d = try sampleDocument()
        let long = d.addNote(title: "Long", body: "A body longer than any other in this notebook.")
        try d.insertText(long, at: 0, "x")
        let bytes = d.save()
        let (raw, block) = try Self.onlyBlock(bytes)
        var totals = WireCodec.Totals()
        let bare = try WireCodec.decodePayloads([raw], fileSize: bytes.count, totals: &totals, placeholders: false)[0]
        #expect(bare.text.isEmpty && bare.placeholderCount == block.text.count && bare.textCount == block.textCount)
        #expect(block.placeholderCount == nil && bare.deadText == block.deadText)
        // The longest insert stored as two ops that continue each other (one replica: a unit's
        // counter is its position in the block).
        try #require(block.replicas.count == 1)
        let inserts = block.ops.indices.filter { if case .insertText = block.ops[$0].body { true } else { false } }
        let k = try #require(inserts.max { block.ops[$0].length < block.ops[$1].length })
        let op = block.ops[k]
        try #require(inserts.allSatisfy { $0 == k || 2 * block.ops[$0].length < op.length })
        guard case .insertText(let n, let l, let r, let s) = op.body else { Issue.record("not an insert"); return }
        let first = op.length / 2
        var split = block
        split.ops[k] = Op(lv: op.lv, length: first, body: .insertText(note: n, originLeft: l, originRight: r, contentStart: s))
        split.ops.insert(Op(lv: op.lv + first, length: op.length - first,
                            body: .insertText(note: n, originLeft: LocalID(agent: 0, counter: UInt32(op.lv + first - 1)), originRight: r, contentStart: s + first)),
                         at: k + 1)
        let file = Self.file(split)
        #expect(file != bytes)
        for concurrentFrom in [0, Int.max] {
            let loaded = try Document.load(file, concurrentFrom: concurrentFrom)
            #expect(loaded.notebook == d.notebook)
            #expect(loaded.log.text == d.log.text)
            #expect(loaded.save() == bytes)
        }
    }

    @Test("A state section that disagrees with the history is refused by load (readNotebook does not replay, so it shows it)")
    func tampered() throws {
        let d = try sampleDocument()
        let (_, block) = try Self.onlyBlock(d.save())
        let state = try #require(block.state)
        func expectRefused(_ s: WireState, dead: [Unicode.Scalar]? = nil, _ fragment: String) throws {
            var b = block
            b.state = s
            if let dead { b.deadText = dead }
            let bytes = Self.file(b)
            #expect {
                _ = try Document.load(bytes)
            } throws: { error in
                guard let e = error as? PeerNoteError, case .invalidDocument(_, let m) = e else { return false }
                return m.contains(fragment)
            }
        }
        // Same length, other characters: the checksum is right, the text is not the history's.
        var sameLength = state
        sameLength.setBody(0, String(sameLength.body(0).reversed()))
        var b = block
        b.state = sameLength
        let bytes = Self.file(b)
        #expect(try Document.readNotebook(bytes).notes[0].body == sameLength.body(0))
        // A different body of the same length loads (only the history can tell which text is right:
        // it is the text, in document order); what load shows is then the stored text.
        #expect(try Document.load(bytes).notes[0].body == sameLength.body(0))

        var longer = state
        longer.setBody(0, longer.body(0) + "!")
        try expectRefused(longer, "the state section and the text column hold")
        var retitled = state
        retitled.notes[1].title = "Other"
        try expectRefused(retitled, "note 1 differs")
        var reordered = state
        reordered.swapNotes(0, 1)
        try expectRefused(reordered, "not listed in document order")
        var missing = state
        missing.removeLastNote()
        try expectRefused(missing, "fewer than the ops insert")
        var extra = state
        extra.append(WireNoteState(replica: 0, counter: 999, title: "", tags: [], priority: .normal, created: 0, deleted: true, structure: state.storesStructures ? [] : nil), body: "")
        try expectRefused(extra, "lists 4 notes, the history has 3")
        var renamed = state
        renamed.title = "Not the title"
        try expectRefused(renamed, "notebook title differs")
        try expectRefused(state, dead: block.deadText + ["x"], "the state section and the text column hold")
        // As many characters in all, but one more visible and one less deleted.
        var moved = state
        moved.setBody(0, moved.body(0) + "x")
        try expectRefused(moved, dead: Array(block.deadText.dropLast()), "does not match the history")
    }

    /// A state read from a section keeps its bytes, and a load fills the bodies through one
    /// pointer to them (`WireState.bodies`); a state made otherwise has its bodies in bytes of
    /// its own. Both give the same bodies and log text, and refuse the same misfit.
    @Test("Bodies filled from the section's bytes and from bytes of their own agree, on one thread and on two", arguments: [12, BlockReplayer.concurrentFillFrom + 40])
    func bodiesFilledEitherWay(count: Int) throws {
        let d = Document(title: "Either", author: "t", id: UUID(), replica: ReplicaID(high: 5, low: 6), time: Date(timeIntervalSince1970: 1_700_000_000))
        for k in 0 ..< count {
            let body = k % 7 == 0 ? "wide ✓ \(k) 日本" : k % 5 == 0 ? "café \(k) naïve" : "body \(k) text"
            let id = d.addNote(title: "N\(k)", body: body)
            if k % 3 == 0 { try d.deleteText(id, range: 1 ..< 3) }
        }
        let bytes = d.save()
        let block = try WireCodec.decodePayloads(BlockCodec.decode(bytes), fileSize: bytes.count)[0]
        let read = try #require(block.state)
        #expect(read.bodies.ranges.count == count)
        // A state made otherwise: its bodies in bytes of their own.
        let made = WireState(title: read.title, notes: read.notes, bodies: read.notes.indices.map(read.body))
        #expect(made == read && made.bodies.bytes.count < read.bodies.bytes.count)
        func filled(_ state: WireState) throws -> (bodies: [[Unicode.Scalar]], text: [Unicode.Scalar]) {
            var replayer = BlockReplayer(genesis: try #require(block.genesis))
            try replayer.replay(block)
            try replayer.fillText(state, dead: block.deadText, block: block)
            return (replayer.state.noteStates.map(\.body.arena.elements), replayer.log.text.elements)
        }
        let (bodies, text) = try filled(read)
        let other = try filled(made)
        #expect(other.bodies == bodies)
        #expect(other.text == text)
        #expect(bodies.contains { $0.contains("日") } && bodies.contains { $0.contains("é") })
        // One visible character more in a note of the second half, and one deleted one fewer:
        // refused from bodies of their own too (the test below has it through the section's bytes).
        let k = count / 2 + 3
        var bad = made
        bad.setBody(k, bad.body(k) + "x")
        #expect {
            var replayer = BlockReplayer(genesis: try #require(block.genesis))
            try replayer.replay(block)
            try replayer.fillText(bad, dead: Array(block.deadText.dropLast()), block: block)
        } throws: { error in
            guard let e = error as? PeerNoteError, case .invalidDocument(_, let m) = e else { return false }
            return m.contains("note \(k)'s text does not fit its body")
        }
    }

    @Test("A notebook large enough to fill its bodies on two threads loads as saved, and a body that does not fit is named in either half")
    func bodiesFilledOnTwoThreads() throws {
        let count = BlockReplayer.concurrentFillFrom + 40
        let d = Document(title: "Many", author: "t", id: UUID(), replica: ReplicaID(high: 3, low: 4), time: Date(timeIntervalSince1970: 1_700_000_000))
        var ids: [NoteID] = []
        for k in 0 ..< count {
            // Every fifth body with deleted text, some of them wide, some Latin-1 past ASCII.
            let id = d.addNote(title: "N\(k)", body: k % 7 == 0 ? "wide ✓ \(k) 日本" : k % 11 == 0 ? "café \(k) naïve" : "body \(k) text")
            if k % 5 == 0 { try d.deleteText(id, range: 0 ..< 2) }
            ids.append(id)
        }
        let (_, block) = try Self.onlyBlock(d.save())
        let state = try #require(block.state)
        #expect(!block.deadText.isEmpty)
        let loaded = try Document.load(Self.file(block))
        #expect(loaded.notes.map(\.body) == d.notes.map(\.body))
        #expect(loaded.save() == d.save())
        // One more visible character and one fewer deleted, in a note of each half, then in
        // both (the first is named).
        func expectRefused(_ b: WireBlock, _ fragment: String) {
            #expect {
                _ = try Document.load(Self.file(b))
            } throws: { error in
                guard let e = error as? PeerNoteError, case .invalidDocument(_, let m) = e else { return false }
                return m.contains(fragment)
            }
        }
        for notes in [[3], [count / 2 + 7], [count / 2 + 7, 3]] {
            var moved = state
            for k in notes { moved.setBody(k, moved.body(k) + "x") }
            var b = block
            b.state = moved
            b.deadText.removeLast(notes.count)
            expectRefused(b, "note \(notes.min() ?? 0)'s text does not fit its body")
        }
        // A title that differs, checked while the log gets its text on the other thread.
        var retitled = state
        retitled.notes[count / 2 + 3].title = "Other"
        var r = block
        r.state = retitled
        expectRefused(r, "note \(count / 2 + 3) differs")
        // Every visible character in place but one deleted one too many: the notes do not use it all.
        var b = block
        b.deadText.append("y")
        #expect(throws: PeerNoteError.self) { try Document.load(Self.file(b)) }
    }

    /// The smallest 64-bit integer as a note's creation time is refused like any other
    /// out-of-range time (its absolute value does not exist, so a check by `abs` would trap).
    @Test("A state section with the smallest 64-bit creation time is refused by load and readNotebook")
    func smallestCreationTime() throws {
        let d = try sampleDocument()
        var (_, block) = try Self.onlyBlock(d.save())
        var state = try #require(block.state)
        state.notes[0].created = .min
        block.state = state
        let bytes = Self.file(block)
        let refused: (any Error) -> Bool = { error in
            guard let e = error as? PeerNoteError, case .invalidDocument(_, let m) = e else { return false }
            return m.contains("invalid creation time")
        }
        #expect(performing: { _ = try Document.load(bytes) }, throws: refused)
        #expect(performing: { _ = try Document.readNotebook(bytes) }, throws: refused)
    }

    @Test("A note deleted after a title, priority or move conflict: its compact save loads, and the conflict is back on restore",
          arguments: ["title", "priority", "position"])
    func conflictThenDelete(register: String) throws {
        let doc = Document(title: "Notes", author: "alice")
        let dentist = doc.addNote(title: "Dentist", body: "Tuesday 9:00")
        doc.addNote(title: "Other", body: "x")
        let phone = doc.fork(author: "bob")
        switch register {
        case "title":
            try doc.setNoteTitle(dentist, "Dentist!")
            try phone.setNoteTitle(dentist, "Dentist?")
        case "priority":
            try doc.setPriority(dentist, .low)
            try phone.setPriority(dentist, .high)
        default:
            // Two places apart, whichever move wins: after "Third", and before "Fourth".
            doc.addNote(title: "Third", body: "y")
            try doc.moveNote(dentist, to: 2)
            phone.addNote(title: "Fourth", body: "z", at: 0)
            try phone.moveNote(dentist, to: 0)
        }
        try doc.merge(phone)
        try #require(doc.conflicts.count == 1, "\(doc.conflicts)")
        try doc.deleteNote(dentist)
        #expect(doc.conflicts.isEmpty, "a deleted note's register conflicts are not listed")
        let bytes = doc.save()
        #expect(try Self.onlyBlock(bytes).raw.version == 2, "a state section is written")
        let loaded = try Document.load(bytes)
        #expect(loaded.notebook == doc.notebook && loaded.deletedNotes == doc.deletedNotes)
        #expect(try Document.readNotebook(bytes) == doc.notebook)
        #expect(try Document.salvage(bytes).document.notebook == doc.notebook)
        try loaded.restoreNote(dentist)
        #expect(loaded.conflicts.count == 1, "the conflict is back once the note is restored: \(loaded.conflicts)")
        #expect(try Document.load(loaded.save()).notebook == loaded.notebook)
    }

    /// A section's entry holds its first tag apart from the others (`WireNoteState.firstTag`):
    /// notes with no tag, one, several, and tags removed read back and are checked alike.
    @Test("Notes with no tag, one tag and several read back from the section; a section showing other tags is refused")
    func tagsReadAndChecked() throws {
        let d = Document(title: "Tags", author: "a")
        let none = d.addNote(title: "none", body: "x")
        let one = d.addNote(title: "one", body: "y", tags: ["solo"])
        let many = d.addNote(title: "many", body: "z", tags: ["b", "a", "ü"])
        try d.addTag(none, "gone")
        try d.removeTag(none, "gone")
        try d.addTag(one, "solo")
        let bytes = d.save()
        let (_, block) = try Self.onlyBlock(bytes)
        let state = try #require(block.state)
        #expect(state.notes.map(\.tags) == [[], ["solo"], ["a", "b", "ü"]])
        #expect(state.notes.map(\.tagCount) == [0, 1, 3])
        #expect(try Document.readNotebook(bytes) == d.notebook)
        #expect(try Document.load(bytes).notebook == d.notebook)
        #expect(d.notebook.notes.map(\.id) == [none, one, many])
        func expectRefused(_ k: Int, _ tags: [String]) {
            var s = state
            s.notes[k].tags = tags
            var b = block
            b.state = s
            #expect(throws: PeerNoteError.self) { try Document.load(Self.file(b)) }
        }
        expectRefused(0, ["gone"])
        expectRefused(1, [])
        expectRefused(1, ["other"])
        expectRefused(1, ["solo", "two"])
        expectRefused(2, ["a", "b"])
        expectRefused(2, ["a"])
        expectRefused(2, ["a", "b", "u"])
    }

    @Test("Random notebooks: compact save, readNotebook and load agree, and loaded copies merge with the originals")
    func randomized() throws {
        var rng = SystemRandomNumberGenerator()
        let alphabet = Array("ab cdé\n✓日😀".unicodeScalars)
        for round in 0 ..< 30 {
            let d = Document(title: "R\(round)", author: "a")
            var ids: [NoteID] = []
            for step in 0 ..< 60 {
                let live = d.notes
                switch Int.random(in: 0 ..< 10, using: &rng) {
                case 0, 1:
                    ids.append(d.addNote(title: "n\(step)", body: String(String.UnicodeScalarView((0 ..< Int.random(in: 0 ..< 8, using: &rng)).map { _ in alphabet.randomElement(using: &rng) ?? "a" }))))
                case 2 where !live.isEmpty:
                    if Int.random(in: 0 ..< 4, using: &rng) == 0, let n = live.randomElement(using: &rng) { try d.deleteNote(n.id) }
                case 3 where !d.deletedNotes.isEmpty:
                    if let n = d.deletedNotes.randomElement(using: &rng) { try d.restoreNote(n.id) }
                default:
                    guard let n = (live + d.deletedNotes).randomElement(using: &rng) else { continue }
                    // A deleted note's body is edited between a restore and a delete (the library
                    // refuses edits of a deleted note), so deleted notes hold edited text too.
                    let deleted = !live.contains { $0.id == n.id }
                    if deleted { try d.restoreNote(n.id) }
                    let count = n.body.unicodeScalars.count
                    if count > 0 && Bool.random(using: &rng) {
                        let a = Int.random(in: 0 ..< count, using: &rng)
                        try d.deleteText(n.id, range: a ..< min(count, a + Int.random(in: 1 ... 4, using: &rng)))
                    } else {
                        let s = String(String.UnicodeScalarView((0 ..< Int.random(in: 1 ... 5, using: &rng)).map { _ in alphabet.randomElement(using: &rng) ?? "a" }))
                        try d.insertText(n.id, at: Int.random(in: 0 ... count, using: &rng), s)
                    }
                    if deleted { try d.deleteNote(n.id) }
                }
            }
            let bytes = d.save()
            #expect(try Document.readNotebook(bytes) == d.notebook)
            let loaded = try Document.load(bytes)
            #expect(loaded.notebook == d.notebook)
            #expect(loaded.deletedNotes == d.deletedNotes)
            #expect(loaded.relation(to: d) == .shared)
            #expect(loaded.save() == bytes)
        }
    }
}

@Suite("String(scalars:)")
struct StringScalarsTests {
    @Test("Builds the same string as a UnicodeScalarView, for every UTF-8 length and combining marks")
    func sameAsScalarView() {
        for s in ["", "a", "é", "e\u{301}", "✓ 日本", "😀👩‍👩‍👧", "\u{7F}\u{80}\u{7FF}\u{800}\u{FFFF}\u{10000}\u{10FFFF}"] {
            let scalars = Array(s.unicodeScalars)
            #expect(String(scalars: scalars) == String(String.UnicodeScalarView(scalars)))
            #expect(Array(String(scalars: scalars).unicodeScalars) == scalars)
        }
    }

    /// ASCII goes eight scalars at a time: runs of every length, broken by a wider scalar at
    /// every place around the eight-scalar steps, build what the scalar view builds.
    @Test("ASCII runs of every length, broken anywhere by wider scalars", arguments: [1, 2, 3])
    func asciiRunsBrokenAnywhere(seed: UInt64) {
        var rng = SeededRandom(state: seed)
        let wide: [Unicode.Scalar] = ["\u{80}", "é", "\u{7FF}", "\u{800}", "日", "\u{FFFF}", "\u{10000}", "😀", "\u{10FFFF}"]
        for length in 0 ..< 40 {
            for _ in 0 ..< 20 {
                var scalars = (0 ..< length).map { _ in Unicode.Scalar(UInt8.random(in: 0 ... 0x7F, using: &rng)) }
                for _ in 0 ..< Int.random(in: 0 ... 3, using: &rng) where !scalars.isEmpty {
                    scalars[Int.random(in: 0 ..< scalars.count, using: &rng)] = wide.randomElement(using: &rng) ?? "é"
                }
                #expect(String(scalars: scalars) == String(String.UnicodeScalarView(scalars)))
                #expect(Array(String(scalars: scalars).unicodeScalars) == scalars)
            }
        }
    }
}

@Suite("State section: malformed")
struct MalformedStateSectionTests {
    /// `sampleDocument()`'s compact file (of version 2: every insert's origins stored) with its
    /// block's own state section removed and `fields` (raw CBOR key and value) added to its
    /// payload map.
    static func file(with fields: [[UInt8]], kind: BlockKind = .base) throws -> [UInt8] {
        var (_, block) = try StateSectionTests.onlyBlock(try sampleDocument().save(.compact, writeStructures: false))
        block.state = nil
        block.deadText = []
        block.kind = kind
        block.unknownFields = fields
        return BlockCodec.encode(payload: WireCodec.encodePayload(block), version: 2)
    }

    @Test("A version-1 block with a state section is refused (a version-1 reader would misread its text column)")
    func versionOneWithState() throws {
        let (_, block) = try StateSectionTests.onlyBlock(try sampleDocument().save())
        try #require(block.state != nil)
        let v1 = BlockCodec.encode(payload: WireCodec.encodePayload(block), version: 1)
        #expect {
            try Document.load(v1)
        } throws: { error in
            guard case .invalidDocument(_, let message) = error as? PeerNoteError else { return false }
            return message.contains("a version-1 block has a state section")
        }
        #expect(throws: PeerNoteError.self) { try Document.readNotebook(v1) }
    }

    static func field(_ key: UInt64, bytes: [UInt8]) -> [UInt8] {
        var e = CBOREncoder()
        e.unsigned(key)
        e.bytes(bytes)
        return e.bytes
    }

    static func field(_ key: UInt64, uint: UInt64) -> [UInt8] {
        var e = CBOREncoder()
        e.unsigned(key)
        e.unsigned(uint)
        return e.bytes
    }

    /// Both readers refuse `bytes` with a message containing `fragment`.
    static func expectRefused(_ bytes: [UInt8], _ fragment: String) {
        for read in [{ _ = try Document.load(bytes) }, { _ = try Document.readNotebook(bytes) }] as [() throws -> Void] {
            #expect {
                try read()
            } throws: { error in
                guard let e = error as? PeerNoteError, case .invalidDocument(_, let m) = e else { return false }
                return m.contains(fragment)
            }
        }
    }

    @Test("Each field of a note's entry in a kind the layout does not expect is refused, naming the field; a cut section names where")
    func fieldKinds() throws {
        // One note's entry, field by field: replica, counter, title, tags, priority, created, deleted, body.
        func section(_ fields: [(inout CBOREncoder) -> Void], cut: Int = 0) -> [UInt8] {
            var e = CBOREncoder()
            e.arrayHeader(2)
            e.text("Notebook")
            e.arrayHeader(1)
            e.arrayHeader(fields.count)
            for f in fields { f(&e) }
            return Array(e.bytes.dropLast(cut))
        }
        let good: [(inout CBOREncoder) -> Void] = [{ $0.unsigned(0) }, { $0.unsigned(1) }, { $0.text("Title") }, { $0.arrayHeader(1); $0.text("tag") },
                                                  { $0.unsigned(UInt64(Priority.high.rank)) }, { $0.int(-5) }, { $0.bool(true) }, { $0.text("body é") }]
        let state = try StateCodec.decode(section(good), replicas: 1)
        #expect(state.title == "Notebook" && state.notes.count == 1)
        let note = try #require(state.notes.first)
        #expect(note.replica == 0 && note.counter == 1 && note.title == "Title" && note.tags == ["tag"] && note.priority == .high
                && note.created == -5 && note.deleted && state.body(0) == "body é")
        // The bodies' scalars, counted as read, and again once a body changes.
        #expect(state.liveScalarCount == 6)
        var changed = state
        changed.setBody(0, "ab😀 ü")
        #expect(changed.liveScalarCount == 5)
        let expected = ["names a replica outside", "has an invalid counter", "has no title text", "has no tag list",
                        "has an unknown priority", "has an invalid creation time", "has no deleted flag", "has no body text"]
        for k in good.indices {
            var fields = good
            // A field of the wrong kind: a text where a number is expected, a number for the others.
            fields[k] = [0, 1, 4, 5].contains(k) ? { $0.text("x") } : { $0.unsigned(7) }
            do {
                _ = try StateCodec.decode(section(fields), replicas: 1)
                Issue.record("field \(k) of the wrong kind was read")
            } catch {
                #expect(error.message.hasPrefix("state section: note 0 \(expected[k])"), "field \(k): \(error.message)")
            }
        }
        // A creation time past Int64 and a counter past UInt32, of the right kind.
        var fields = good
        fields[5] = { $0.unsigned(UInt64.max) }
        #expect(throws: StateCodec.ReadError.self) { try StateCodec.decode(section(fields), replicas: 1) }
        fields = good
        fields[1] = { $0.unsigned(UInt64(UInt32.max)) }
        #expect(throws: StateCodec.ReadError.self) { try StateCodec.decode(section(fields), replicas: 1) }
        // Invalid UTF-8 in a title, and a section cut inside its last item.
        fields = good
        fields[2] = { $0.raw([0x62, 0xC3, 0x28]) }
        do { _ = try StateCodec.decode(section(fields), replicas: 1); Issue.record("invalid UTF-8 was read") } catch {
            #expect(error.message.hasPrefix("state section: text string is not valid UTF-8"), "\(error.message)")
        }
        do { _ = try StateCodec.decode(section(good, cut: 3), replicas: 1); Issue.record("a cut section was read") } catch {
            #expect(error.message.hasPrefix("state section: ") && error.message.contains("(at byte"), "\(error.message)")
        }
    }

    @Test("Not CBOR, a wrong size, a size without a section, a foreign replica, or a section in an appended block: refused")
    func refused() throws {
        let notCBOR: [UInt8] = [0xFF, 0x00, 0x01]
        Self.expectRefused(try Self.file(with: [Self.field(12, bytes: Deflate.compress(notCBOR)), Self.field(13, uint: 3)]), "state section")
        Self.expectRefused(try Self.file(with: [Self.field(12, bytes: Deflate.compress(notCBOR)), Self.field(13, uint: 9)]), "inflates to 3 bytes, block says 9")
        Self.expectRefused(try Self.file(with: [Self.field(13, uint: 3)]), "no state section")
        Self.expectRefused(try Self.file(with: [Self.field(12, bytes: [1, 2, 3])]), "lacks its inflated size")
        Self.expectRefused(try Self.file(with: [Self.field(12, uint: 5), Self.field(13, uint: 3)]), "not a byte string")
        Self.expectRefused(try Self.file(with: [Self.field(12, bytes: Deflate.compress(notCBOR)), Self.field(13, uint: 1 << 40)]), "impossible for")
        let foreign = StateCodec.encode(WireState(title: "x", notes: [WireNoteState(replica: 99, counter: 1, title: "", tags: [], priority: .normal, created: 0, deleted: false)], bodies: [""]))
        Self.expectRefused(try Self.file(with: [Self.field(12, bytes: Deflate.compress(foreign)), Self.field(13, uint: UInt64(foreign.count))]), "outside the block's table")
        let empty = StateCodec.encode(WireState(title: "x", notes: [], bodies: []))
        let appended = try Self.file(with: [Self.field(12, bytes: Deflate.compress(empty)), Self.field(13, uint: UInt64(empty.count))], kind: .append)
        #expect {
            _ = try Document.load(appended)
        } throws: { error in
            guard let e = error as? PeerNoteError, case .invalidDocument(_, let m) = e else { return false }
            return m.contains("an appended block has a state section")
        }
    }
}

@Suite("State section: salvage")
struct SalvageStateSectionTests {
    @Test("Salvage gives up a document-order block whose changes cannot all be kept, rather than guess which character is which")
    func partialBlockIsNotGuessed() throws {
        var (_, block) = try StateSectionTests.onlyBlock(try sampleDocument().save())
        #expect(block.state != nil)
        // The block's last note retitle names a note that no op created (checksum intact).
        let k = try #require(block.ops.lastIndex { if case .setNoteTitle = $0.body { true } else { false } })
        guard case .setNoteTitle(let n, let title, let preds) = block.ops[k].body else { Issue.record("no retitle"); return }
        block.ops[k].body = .setNoteTitle(note: LocalID(agent: n.agent, counter: 9_999), title, preds: preds)
        let bytes = StateSectionTests.file(block)
        #expect(throws: PeerNoteError.self) { _ = try Document.load(bytes) }
        #expect {
            _ = try Document.salvage(bytes)
        } throws: { error in
            guard let e = error as? PeerNoteError, case .invalidDocument(_, let m) = e else { return false }
            return m.contains("nothing can be recovered") && m.contains("document order")
        }
    }
}
