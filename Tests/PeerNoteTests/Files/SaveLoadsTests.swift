import Foundation
import Testing
@testable import PeerNote

/// No writer of the library writes a save that does not load: it reads the bytes back first
/// (`Document.checkLoadable`) and, when they would not load, throws and leaves the file as it was.
@Suite("Every save that is written loads")
struct SaveLoadsTests {
    /// A document whose last change deletes an element it does not hold: its saves do not load
    /// (a history the library's edits never make, standing for one whose load would go over the
    /// work its size allows).
    static func unloadable(from doc: Document) throws -> Document {
        let note = try #require(doc.state.noteStates.first)
        _ = doc.log.beginChange(agent: doc.agent, time: 1_700_000_100, author: "a", message: "")
        doc.log.append(.deleteText(note: note.id, target: LocalID(agent: doc.agent, counter: 999), reversed: false), length: 1)
        return doc
    }

    static func folder() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pn-saveloads-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    @Test("A save that would not load is not written to a new file")
    func newFileNotWritten() throws {
        let doc = Document(title: "T", author: "a")
        _ = doc.addNote(title: "n", body: "ab")
        let bad = try Self.unloadable(from: doc)
        let path = try Self.folder() + "/new.peernote"
        #expect(throws: WriteError.self) { try bad.write(to: path, mode: .compact) }
        do { try bad.write(to: path, mode: .compact) } catch { #expect(error.resultWouldNotLoad && !error.description.contains("\n")) }
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test("A save that would not load leaves the file it would replace as it was")
    func existingFileUnchanged() throws {
        let doc = Document(title: "T", author: "a")
        _ = doc.addNote(title: "n", body: "ab")
        let path = try Self.folder() + "/notes.peernote"
        try doc.write(to: path, mode: .compact)
        let before = try FileStore.read(path)
        let copy = try Document.load(before)
        let bad = try Self.unloadable(from: copy)
        for mode in [SaveMode.incremental, .compact] {
            do {
                try bad.write(over: path, loaded: before, mode: mode)
                Issue.record("a save that does not load was written (\(mode))")
            } catch {
                #expect(error.resultWouldNotLoad, "\(error)")
            }
            #expect(try FileStore.read(path) == before)
        }
        #expect(throws: FileError.self) { try Document.checkLoadable(bad.save(.compact), writingTo: path) }
        try Document.checkLoadable(before, writingTo: path)
    }

    /// The names in `dir` other than `keep`: what a write left behind (a temporary file).
    static func leftovers(in dir: String, keeping keep: Set<String>) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: dir).filter { !keep.contains($0) }.sorted()
    }

    @Test("An output read back while it is written is put in place only once it loads, and returns what the check read")
    func loadableOutput() throws {
        let doc = Document(title: "T", author: "a")
        _ = doc.addNote(title: "n", body: "ab")
        let dir = try Self.folder()
        let out = dir + "/out.peernote"
        let bytes = doc.save(.compact)
        let read = try doc.writeLoadableOutput(bytes, to: out)
        #expect(try FileStore.read(out) == bytes)
        #expect(read.notes.map(\.body) == ["ab"])
        #expect(try Self.leftovers(in: dir, keeping: ["out.peernote"]) == [])

        // Would not load: no new file, an existing one left as it was, no temporary file left.
        let bad = try Self.unloadable(from: try Document.load(bytes))
        let fresh = dir + "/fresh.peernote"
        for path in [fresh, out] {
            do {
                try bad.writeLoadableOutput(bad.save(.compact), to: path, namedInErrors: "shown.peernote")
                Issue.record("a save that does not load was written to \(path)")
            } catch {
                guard case .write(let e) = error, case .wouldNotLoad(let named, _) = e else {
                    Issue.record("expected a save that would not load, got \(error)")
                    continue
                }
                #expect(named == "shown.peernote")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: fresh))
        #expect(try FileStore.read(out) == bytes)
        #expect(try Self.leftovers(in: dir, keeping: ["out.peernote"]) == [])

        // `Document.writeLoadable`, for a caller that checked the output and let the document go
        // (`pnmerge merge -o`): the same write and read-back, without the document.
        let other = dir + "/other.peernote"
        #expect(try Document.writeLoadable(bytes, to: other).notes.map(\.body) == ["ab"])
        #expect(try FileStore.read(other) == bytes)
        #expect(throws: FileError.self) { try Document.writeLoadable(bad.save(.compact), to: other, namedInErrors: "shown.peernote") }
        #expect(try FileStore.read(other) == bytes)
        #expect(try Self.leftovers(in: dir, keeping: ["out.peernote", "other.peernote"]) == [])
    }

    @Test("A write checked alongside: the check's error comes first and nothing is written; a passing check's value is returned")
    func checkedAlongside() throws {
        struct Refused: Error {}
        let dir = try Self.folder()
        let path = dir + "/file.bin"
        try FileStore.writeAtomically([1, 2, 3], to: path)
        // A check that fails leaves the file as it was.
        #expect(throws: FileError.self) {
            try FileStore.writeAtomically([9], to: path) { () throws(FileError) -> Int in throw .tooLarge(path: path, limit: 1) }
        }
        #expect(try FileStore.read(path) == [1, 2, 3])
        #expect(try Self.leftovers(in: dir, keeping: ["file.bin"]) == [])
        // Its error is thrown, not the write's (the folder is missing).
        let nowhere = dir + "/missing/file.bin"
        do {
            try FileStore.writeAtomically([9], to: nowhere) { () throws(FileError) -> Int in throw .tooLarge(path: nowhere, limit: 1) }
            Issue.record("a write whose check failed succeeded")
        } catch {
            guard case .tooLarge = error else { Issue.record("expected the check's error, got \(error)"); return }
        }
        // The write's own failure, when the check passes.
        #expect(throws: FileError.self) { try FileStore.writeAtomically([9], to: nowhere) { () throws(FileError) in 7 } }
        // A passing check: written, and its value returned.
        let value = try FileStore.writeAtomically([4, 5], to: path) { () throws(FileError) in 42 }
        #expect(value == 42)
        #expect(try FileStore.read(path) == [4, 5])
        #expect(try Self.leftovers(in: dir, keeping: ["file.bin"]) == [])
        // A character device is written into only after a passing check.
        #expect(throws: FileError.self) {
            try FileStore.writeAtomically([1], to: "/dev/null") { () throws(FileError) -> Int in throw .tooLarge(path: "/dev/null", limit: 1) }
        }
        #expect(try FileStore.writeAtomically([1], to: "/dev/null") { () throws(FileError) in 1 } == 1)
    }
}

/// The check of an appending save reads only the appended blocks, from the state the reader
/// held after the file it appends to (`Document.checkAppended`): it must refuse every save a
/// full `Document.load` refuses, with the same error, and accept the others with the same work.
@Suite("Checking an appending save reads only what it appends")
struct AppendedCheckTests {
    /// A notebook of a few notes, loaded from its compact save (so with a verified state).
    static func loadedNotebook(notes: Int = 3) throws -> (bytes: [UInt8], document: Document) {
        let doc = Document(title: "T", author: "a")
        for i in 0 ..< notes { doc.addNote(title: "n\(i)", body: "ab\(i)", tags: ["t"]) }
        let bytes = doc.save(.compact)
        return (bytes, try Document.load(bytes))
    }

    /// The file's verified state, which `load` records.
    static func verified(_ doc: Document) throws -> VerifiedFile {
        try #require(doc.persisted?.verified, "the load recorded no verified state")
    }

    /// What the appended-block check and a full load say of `bytes`: an issue when they differ
    /// (one refuses and the other not, different errors, different work), or when the check
    /// leaves the verdict to a full load. Returns the full load's error, if any.
    @discardableResult
    static func expectAgreement(_ bytes: [UInt8], after verified: VerifiedFile, _ context: String,
                                sourceLocation: SourceLocation = #_sourceLocation) -> PeerNoteError? {
        let full = Result { () throws(PeerNoteError) in try Document.load(bytes) }
        let checked = Result { () throws(PeerNoteError) in try Document.checkAppended(bytes, after: verified) }
        switch (full, checked) {
        case (_, .success(nil)):
            Issue.record("\(context): the check left the verdict to a full load", sourceLocation: sourceLocation)
        case (.failure(let a), .failure(let b)):
            #expect(a.description == b.description, "\(context)", sourceLocation: sourceLocation)
            return a
        case (.success(let doc), .success(.loadsCanonically?)):
            #expect(doc.persisted?.verified == nil && doc.log.firstOutOfCanonicalOrder() != nil,
                    "\(context): the check found the rows out of canonical order, the load did not", sourceLocation: sourceLocation)
        case (.success(let doc), .success(.verified(let next)?)):
            let loaded = doc.persisted?.verified
            #expect(loaded != nil, "\(context): the full load kept no verified state", sourceLocation: sourceLocation)
            if let loaded {
                #expect(next.workSpent == loaded.workSpent && next.rows == loaded.rows && next.totals == loaded.totals
                        && next.checksum == loaded.checksum && next.checksummed == loaded.checksummed && next.bytes == bytes,
                        "\(context): the check's record differs from the load's", sourceLocation: sourceLocation)
            }
            let replayed = Document(id: doc.id, genesis: next.genesis, log: next.log, state: next.state, replica: .random(), author: "")
            #expect(replayed.notebook == doc.notebook, "\(context): a different notebook", sourceLocation: sourceLocation)
        case (.failure(let error), .success):
            Issue.record("\(context): the check accepted a save the load refuses (\(error))", sourceLocation: sourceLocation)
        case (.success, .failure(let error)):
            Issue.record("\(context): the check refused a save that loads (\(error))", sourceLocation: sourceLocation)
        }
        if case .failure(let error) = full { return error }
        return nil
    }

    @Test("A merge in place of concurrent changes is checked from the file's record, with the verdict a full load gives")
    func concurrentMergeInPlace() throws {
        var canonically = 0
        for round in 0 ..< 30 {
            var rng = SeededRandom(state: 0xC0C0_0000 + UInt64(round))
            let base = Document(title: "Base", author: "a")
            var ids = (0 ..< 4).map { base.addNote(title: "Note \($0)", body: "body \($0)", tags: ["t"]) }
            let bytes = base.save()
            let mine = try Document.load(bytes), theirs = try Document.load(bytes)
            for (k, doc) in [mine, theirs].enumerated() {
                for _ in 0 ..< Int.random(in: 1 ... 4, using: &rng) { MergeStateTests.sameNoteEdit(doc, &ids, k, &rng) }
            }
            // MINE's edits in a block of their own, as its file holds them; then THEIRS's taken in
            // and appended, as `pnmerge merge` in place writes them.
            let file = try Document.load(mine.save(.incremental))
            let verified = try Self.verified(file)
            try file.merge(theirs)
            let merged = file.save(.incremental)
            if case .loadsCanonically? = try Document.checkAppended(merged, after: verified) { canonically += 1 }
            Self.expectAgreement(merged, after: verified, "round \(round)")
        }
        #expect(canonically > 10, "\(canonically) of 30 merges left the rows out of canonical order")
    }

    @Test("An appended change the history cannot hold is refused, as a full load refuses it")
    func unloadableChange() throws {
        let (_, doc) = try Self.loadedNotebook()
        let verified = try Self.verified(doc)
        let bad = try SaveLoadsTests.unloadable(from: doc)
        let bytes = bad.save(.incremental)
        #expect(bytes.count > verified.bytes.count)
        #expect(Self.expectAgreement(bytes, after: verified, "delete of a missing element") != nil)

        // An insert whose left origin does not exist.
        let (_, other) = try Self.loadedNotebook()
        let note = try #require(other.state.noteStates.first).id
        _ = other.log.beginChange(agent: other.agent, time: 1_700_000_100, author: "a", message: "")
        other.log.append(.insertText(note: note, originLeft: LocalID(agent: other.agent, counter: 4_000), originRight: .none, contentStart: 0),
                         length: 1, scalars: CollectionOfOne("x"))
        #expect(Self.expectAgreement(other.save(.incremental), after: try Self.verified(other), "insert after a missing element") != nil)
    }

    @Test("Damaged or misplaced appended bytes are refused, as a full load refuses them")
    func damagedBlocks() throws {
        let (file, doc) = try Self.loadedNotebook()
        let verified = try Self.verified(doc)
        let note = try #require(doc.notes.first).id
        try doc.insertText(note, at: 0, "first ")
        let one = doc.save(.incremental)
        try doc.insertText(note, at: 0, "second ")
        let two = doc.save(.incremental)
        let block1 = Array(one[file.count...]), block2 = Array(two[one.count...])
        var flipped = one
        flipped[file.count + block1.count / 2] ^= 0x40
        let cases: [(String, [UInt8])] = [
            ("a byte of the block changed", flipped),
            ("the block cut short", Array(one.dropLast())),
            ("the block twice", one + block1),
            ("the second block without the first", file + block2),
            ("a second base block", file + file),
            ("other bytes after the file", file + Array("not a block".utf8)),
            ("a block's magic bytes alone", file + Array(one[file.count ..< file.count + 8])),
        ]
        for (name, bytes) in cases {
            #expect(Self.expectAgreement(bytes, after: verified, name) != nil, "\(name): loads")
        }
        // And the good ones pass, from the file and from the first save's check.
        Self.expectAgreement(one, after: verified, "one block")
        Self.expectAgreement(two, after: verified, "two blocks")
        let afterOne = try #require(try Document.checkAppended(one, after: verified)?.record)
        Self.expectAgreement(two, after: afterOne, "the second block after the first")
    }

    /// One change of `count` inserts of one character each, all between the same two characters
    /// of a note (each with the same origins, as if made concurrently), after one crafted insert
    /// whose right origin is not a child of its left origin: that leaves the note's integration
    /// to the element-by-element scan of peernote(5), so each insert scans those before it,
    /// about count²/2 steps in all. Few bytes (the inserts compress to almost nothing), so past
    /// about 1,300 more work than such a file's size allows.
    static func concurrentInserts(into doc: Document, count: Int) throws {
        let note = try #require(doc.state.noteStates.first)
        var first: LocalID?
        note.body.forEachRun { id, _, _, _ in if first == nil { first = id } }
        let left = try #require(first), right = left.advanced(by: 1)
        _ = doc.log.beginChange(agent: doc.agent, time: 1_700_000_100, author: "a", message: "")
        doc.log.append(.insertText(note: note.id, originLeft: .none, originRight: right, contentStart: 0), length: 1, scalars: CollectionOfOne("y"))
        for _ in 0 ..< count {
            doc.log.append(.insertText(note: note.id, originLeft: left, originRight: right, contentStart: 0), length: 1, scalars: CollectionOfOne("x"))
        }
    }

    @Test("An appended block that takes the file's work past its budget is refused")
    func workPastBudget() throws {
        // Few enough inserts: within the budget, and the check's work is the load's.
        let (_, small) = try Self.loadedNotebook()
        try Self.concurrentInserts(into: small, count: 300)
        #expect(Self.expectAgreement(small.save(.incremental), after: try Self.verified(small), "300 inserts at one place") == nil)

        // Enough that the whole file asks for more work than its size allows, in two appended
        // blocks: the second is within the budget on its own, so a check that did not count the
        // work the earlier blocks took would pass it.
        let (_, doc) = try Self.loadedNotebook()
        let verified = try Self.verified(doc)
        try Self.concurrentInserts(into: doc, count: 1_000)
        let first = doc.save(.incremental)
        let afterFirst = try #require(try Document.checkAppended(first, after: verified)?.record, "1,000 inserts at one place")
        #expect(afterFirst.workSpent > 1_000 * 900 / 2)
        try Self.concurrentInserts(into: doc, count: 300)
        let second = doc.save(.incremental)
        let error = try #require(Self.expectAgreement(second, after: afterFirst, "300 more after 1,000"),
                                 "the history no longer takes more work than its size allows: this test needs another that does")
        #expect(error.description.contains("more work"), "\(error)")
    }

    @Test("Appending saves of random edits: the check and a full load agree", arguments: [1, 2, 3, 4])
    func randomEdits(seed: UInt64) throws {
        var rng = SeededRandom(state: seed)
        var (bytes, doc) = try Self.loadedNotebook(notes: 4)
        var verified = try Self.verified(doc)
        var refused = 0, decided = 0
        for step in 0 ..< 60 {
            let context = "seed \(seed), step \(step)"
            for _ in 0 ... Int.random(in: 0 ... 2, using: &rng) {
                let live = doc.notes
                let pick = live.isEmpty ? nil : live[Int.random(in: 0 ..< live.count, using: &rng)]
                switch (Int.random(in: 0 ..< 9, using: &rng), pick) {
                case (0, _), (_, nil):
                    doc.addNote(title: "new \(step)", body: String(repeating: "xy", count: Int.random(in: 0 ... 20, using: &rng)))
                case (1, let n?):
                    try doc.insertText(n.id, at: Int.random(in: 0 ... n.body.unicodeScalars.count, using: &rng), "typed \(step) ")
                case (2, let n?) where n.body.unicodeScalars.count > 2:
                    let count = n.body.unicodeScalars.count, from = Int.random(in: 0 ..< count - 1, using: &rng)
                    try doc.deleteText(n.id, range: from ..< Int.random(in: from + 1 ... count, using: &rng))
                case (3, let n?):
                    try doc.setNoteTitle(n.id, "title \(step)")
                case (4, let n?):
                    try doc.addTag(n.id, "tag\(Int.random(in: 0 ..< 3, using: &rng))")
                case (5, let n?) where live.count > 2:
                    try doc.deleteNote(n.id)
                case (6, let n?):
                    try doc.moveNote(n.id, to: Int.random(in: 0 ..< live.count, using: &rng))
                case (7, _):
                    doc.setTitle("notebook \(step)")
                default:
                    try doc.setPriority(try #require(pick).id, .high)
                }
            }
            // Now and then a change no edit makes: one that does not load.
            let bad = Int.random(in: 0 ..< 6, using: &rng) == 0
            if bad { _ = try SaveLoadsTests.unloadable(from: doc) }
            let saved = doc.save(.incremental)
            let checked = Result { () throws(PeerNoteError) in try Document.checkAppended(saved, after: verified) }
            if case .success(nil) = checked {} else { decided += 1 }
            let refusedHere = Self.expectAgreement(saved, after: verified, context) != nil
            #expect(refusedHere == bad, "\(context)")
            if refusedHere {
                refused += 1
                // Back to the file as it was.
                doc = try Document.load(bytes)
                verified = try Self.verified(doc)
            } else if Bool.random(using: &rng) {
                // Go on from the check's record (as a document's next write does), or from a load.
                verified = try #require(try checked.get()?.record)
                bytes = saved
            } else {
                bytes = saved
                doc = try Document.load(bytes)
                verified = try Self.verified(doc)
            }
        }
        #expect(decided == 60 && refused > 0 && refused < 60, "seed \(seed): \(decided) decided, \(refused) refused")
    }

    /// A notebook of `notes` notes written to a new file and opened from it, and its first note.
    static func openedNotebook(notes: Int = 3) throws -> (document: Document, path: String, note: NoteID) {
        let (file, _) = try loadedNotebook(notes: notes)
        let path = try SaveLoadsTests.folder() + "/notes.peernote"
        try FileStore.writeAtomically(file, to: path)
        let doc = try Document.open(path)
        return (doc, path, try #require(doc.notes.first).id)
    }

    @Test("A document's writes keep the verified state of its file, so each check reads only the new block")
    func writesKeepVerifiedState() throws {
        let (doc, path, note) = try Self.openedNotebook()
        for k in 0 ..< 3 {
            try doc.insertText(note, at: 0, "edit \(k) ")
            try doc.write(to: path)
            let now = try FileStore.read(path)
            let verified = try #require(doc.persisted?.verified, "write \(k) kept no verified state")
            #expect(verified.bytes == now, "write \(k)")
            #expect(verified.rows == doc.changeCount, "write \(k)")
        }
        // A write that would not load leaves the file, and a later good write still checks.
        let before = try FileStore.read(path)
        let bad = try SaveLoadsTests.unloadable(from: doc)
        do { try bad.write(to: path); Issue.record("a save that does not load was written") } catch { #expect(error.resultWouldNotLoad) }
        #expect(try FileStore.read(path) == before)
        #expect(try Document.load(before).notebook.notes.first?.body.hasPrefix("edit 2 ") == true)
    }

    @Test("A notebook folder's writes keep the verified state of its chain, so each check reads only the new chunk; a chunk that would not load is not written")
    func folderWritesKeepVerifiedState() throws {
        let (file, _) = try Self.loadedNotebook(notes: 3)
        let path = try SaveLoadsTests.folder() + "/Trip.peernote"
        try NotebookFolder.create(at: path, try Document.load(file))
        let doc = try Document.open(path)
        let note = try #require(doc.notes.first).id
        for k in 0 ..< 3 {
            try doc.insertText(note, at: 0, "edit \(k) ")
            try doc.write(to: path)
            let chain = try #require(doc.persisted?.bytes)
            let verified = try #require(doc.persisted?.verified, "write \(k) kept no verified state")
            #expect(verified.bytes == chain, "write \(k)")
            #expect(verified.rows == doc.changeCount, "write \(k)")
            #expect(try Document.open(path).notebook == doc.notebook, "write \(k)")
        }
        let chunks = try FileManager.default.contentsOfDirectory(atPath: path).sorted()
        #expect(chunks.count == 4)
        // A write whose chain would not load adds no chunk; the folder reads as before.
        let before = try Document.open(path).notebook
        let bad = try SaveLoadsTests.unloadable(from: doc)
        do { try bad.write(to: path); Issue.record("a chunk that does not load was written") } catch { #expect(error.resultWouldNotLoad, "\(error)") }
        #expect(try FileManager.default.contentsOfDirectory(atPath: path).sorted() == chunks)
        #expect(try Document.open(path).notebook == before)
    }

    @Test("A root chunk that would not load is not written: a device's first chunk, read back while it is written, leaves no chunk and no temporary file")
    func folderRootNotWritten() throws {
        let (file, _) = try Self.loadedNotebook(notes: 3)
        let path = try SaveLoadsTests.folder() + "/Trip.peernote"
        try NotebookFolder.create(at: path, try Document.load(file), device: "0000000a")
        let before = try FileManager.default.contentsOfDirectory(atPath: path).sorted()
        // Another device's first write is a root holding it all (`addRoot`), read back as it is written.
        let bad = try SaveLoadsTests.unloadable(from: try Document.load(file))
        do {
            try NotebookFolder(path, device: "0000000b").add(bad, autoCompact: false)
            Issue.record("a root that does not load was written")
        } catch {
            guard case .wouldNotLoad = error else { Issue.record("expected a save that would not load, got \(error)"); return }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: path).sorted() == before)
        // A good one is written, and reads back.
        let good = try Document.load(file)
        _ = good.addNote(title: "from b", body: "b")
        let added = try NotebookFolder(path, device: "0000000b").add(good, autoCompact: false)
        #expect(added.chunk?.hasPrefix("0000000b.") == true)
        #expect(try Document.open(path).notes.contains { $0.title == "from b" })
        #expect(try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasPrefix(".") } == [])
    }

    @Test("A document and its file's verified record share the ops the load adopted: edits and checks append beside them")
    func editsShareAdoptedOps() throws {
        let (doc, path, note) = try Self.openedNotebook(notes: 200)
        /// The address of a store's adopted ops and how many ops it appended.
        func parts(_ ops: OpStore?) -> (adopted: UInt, count: Int, appended: Int)? {
            ops?.withParts { a, b in (UInt(bitPattern: a.baseAddress), a.count, b.count) }
        }
        let loaded = try #require(parts(doc.log.ops))
        #expect(loaded.count > 200 && loaded.appended == 0, "a load adopts its block's ops")
        #expect(parts(doc.persisted?.verified?.log.ops)?.adopted == loaded.adopted, "the file's record holds the same array")
        for k in 0 ..< 3 {
            try doc.insertText(note, at: 0, "\(k)")
            let edited = try #require(parts(doc.log.ops))
            // A copy would be a new array the document alone holds, beside the record's.
            // (An append that tries to extend the last op moves it out of the adopted ones first.)
            #expect(edited.adopted == loaded.adopted && edited.count >= loaded.count - 1 && edited.appended <= k + 2,
                    "edit \(k): the adopted ops were copied")
            try doc.write(to: path)
            let checked = try #require(parts(doc.persisted?.verified?.log.ops))
            #expect(checked.adopted == loaded.adopted && checked.count >= loaded.count - 1 && checked.appended <= k + 2,
                    "write \(k): the record's adopted ops were copied")
            #expect(checked.count + checked.appended == doc.log.ops.count)
        }
        #expect(try Document.open(path).notebook == doc.notebook)
    }
}
