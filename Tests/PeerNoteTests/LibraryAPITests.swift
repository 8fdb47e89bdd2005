import Foundation
import Testing
import PeerNote

/// The library as an app uses it: what an app developer relies on.
@Suite("Library API: what an app relies on")
struct LibraryAPITests {
    @Test("write(to:) keeps what another program saved to the file since it was opened (a sync client's copy from the phone)")
    func writeKeepsArrivedChanges() throws {
        let folder = try FileStoreTests.Folder()
        let path = folder.path + "/notes.peernote"
        let laptop = Document(title: "Notes", author: "laptop")
        laptop.addNote(title: "from laptop")
        try laptop.write(to: path, mode: .compact)

        let app = try Document.open(path)
        let phone = try Document.open(path)
        phone.author = "phone"
        phone.addNote(title: "from phone")
        try phone.write(to: path)

        app.addNote(title: "typed in app")
        let outcome = try app.write(to: path)
        #expect(outcome.mergedMeanwhile == 1)
        #expect(Set(app.notes.map(\.title)) == ["from laptop", "from phone", "typed in app"], "the document took the phone's note")
        #expect(Set(try Document.open(path).notes.map(\.title)) == ["from laptop", "from phone", "typed in app"])

        // Nothing arrived: a plain write, nothing merged.
        app.addNote(title: "second")
        #expect(try app.write(to: path).mergedMeanwhile == 0)

        // Another notebook at the path is replaced ("Save As"), and a missing file is created.
        let other = Document(title: "Other", author: "x")
        other.addNote(title: "elsewhere")
        #expect(try other.write(to: path).mergedMeanwhile == 0)
        #expect(try Document.open(path).notes.map(\.title) == ["elsewhere"])
        #expect(try other.write(to: folder.path + "/new.peernote").mergedMeanwhile == 0)
    }

    @Test("write(to:) over a damaged copy of the notebook merges its intact changes and keeps its bytes aside; a newer version is not replaced",
          arguments: ["flipped", "truncated", "magic"])
    func writeOverDamaged(damage: String) throws {
        let folder = try FileStoreTests.Folder()
        let path = folder.path + "/notes.peernote"
        let laptop = Document(title: "Notes", author: "laptop")
        laptop.addNote(title: "common")
        try laptop.write(to: path, mode: .compact)
        // The phone adds five notes and writes (a block), then one more (another block).
        let phone = try Document.open(path, author: "phone")
        for k in 0 ..< 5 { phone.addNote(title: "phone note \(k)") }
        try phone.write(to: path)
        phone.addNote(title: "phone note 5")
        try phone.write(to: path)
        // A sync client leaves the last block damaged.
        var bytes = try FileStore.read(path)
        switch damage {
        case "flipped": bytes[bytes.count - 3] ^= 0x55
        case "magic": bytes[1] ^= 0x02       // inside the first block's magic bytes
        default: bytes.removeLast(20)
        }
        try FileStore.writeAtomically(bytes, to: path)
        #expect(throws: PeerNoteError.self) { try Document.load(bytes) }

        laptop.addNote(title: "laptop note")
        let outcome = try laptop.write(to: path)
        let kept = try #require(outcome.keptDamaged)
        #expect(outcome.mergedMeanwhile == (damage == "magic" ? 0 : 1))
        #expect(try FileStore.read(kept) == bytes, "the damaged bytes are kept as they were")
        #expect(kept.hasPrefix(folder.path + "/notes.sync-conflict-"), "\(kept)")
        let titles = Set(try Document.open(path).notes.map(\.title))
        if damage == "magic" {
            // Nothing can be read from it (no base block): the bytes are kept, nothing merged.
            #expect(titles == ["common", "laptop note"], "\(titles)")
        } else {
            #expect(titles == Set(["common", "laptop note"] + (0 ..< 5).map { "phone note \($0)" }), "the intact changes are in: \(titles)")
        }

        // A file of a newer format version is not written over: the write throws, naming it.
        var newer = laptop.save(.compact)
        try #require(newer[8] == 0x83 && (1 ... FormatInfo.version).contains(UInt64(newer[9])), "[version, ...] after the magic bytes")
        newer[9] = UInt8(FormatInfo.version + 1)
        try FileStore.writeAtomically(newer, to: path)
        laptop.addNote(title: "one more")
        #expect { try laptop.write(to: path) } throws: { error in
            "\(error)".contains("holds a notebook of format version \(FormatInfo.version + 1), newer than this library reads (\(FormatInfo.version)); not written")
        }
        #expect(try FileStore.read(path) == newer)
    }

    @Test("A custom clock that reads NaN, infinity or a time past what files hold stamps changes within range: saves load")
    func outlandishClock() throws {
        for seconds in [Double.nan, .infinity, -.infinity, 1e17, -1e17] {
            let doc = Document(title: "T", author: "a")
            doc.clock = { Date(timeIntervalSince1970: seconds) }
            let n = doc.addNote(title: "N", body: "b")
            try doc.insertText(n, at: 0, "x")
            let loaded = try Document.load(doc.save())
            #expect(loaded.notebook == doc.notebook, "\(seconds)")
        }
    }

    /// A device's notebook, kept in an actor (one per isolation domain), that hands out merges.
    actor Device {
        private let doc: Document
        init(_ doc: sending Document) { self.doc = doc }
        func mergedCopy(with other: sending Document) throws(PeerNoteError) -> sending Document {
            try doc.merged(with: other).document
        }
    }

    @Test("An actor can hand out merged(with:)'s result (it is sent, as fork()'s is), and a transaction's errors are typed")
    func mergedIsSent() async throws {
        let laptop = Document(title: "Notes", author: "laptop")
        let n = laptop.addNote(title: "N", body: "x")
        let phone = laptop.fork(author: "phone")
        try phone.insertText(n, at: 1, "y")
        let device = Device(laptop)
        let merged = try await device.mergedCopy(with: phone)
        #expect(merged.notes.map(\.body) == ["xy"])
        do {
            try merged.transaction(message: "rename") { () throws(PeerNoteError) in
                try merged.setNoteTitle(n, "M")
                try merged.insertText(n, at: 99, "!")
            }
            Issue.record("the insert past the end throws")
        } catch {
            let typed: PeerNoteError = error
            #expect("\(typed)".contains("outside the body"), "\(typed)")
        }
    }

    @Test("An app tells a missing file from other file errors, and a deleted note from other bad arguments")
    func errorKinds() throws {
        let folder = try FileStoreTests.Folder()
        #expect { try Document.open(folder.path + "/missing.peernote") } throws: { error in
            guard case DocumentFileError.file(let e) = error else { return false }
            return e.isMissing && e.code == ENOENT
        }
        #expect { try Document.open(folder.path) } throws: { error in
            guard case DocumentFileError.file(let e) = error else { return false }
            return !e.isMissing && e.message == "is a directory"
        }
        let doc = Document(title: "T", author: "a")
        let n = doc.addNote(title: "N", body: "abc")
        #expect(throws: PeerNoteError.invalidArgument("offset 9 is outside the body (0...3)")) { try doc.insertText(n, at: 9, "x") }
        try doc.deleteNote(n)
        #expect(throws: PeerNoteError.noteDeleted(n)) { try doc.insertText(n, at: 0, "x") }
    }

    @Test("A text view's UTF-16 offsets convert to the scalar offsets edits take, and back; inside a surrogate pair is nil")
    func utf16Offsets() throws {
        let doc = Document(title: "T", author: "a")
        let id = doc.addNote(title: "N", body: "👍🏽 é!")   // 👍 and 🏽 are two UTF-16 units each
        let note = try #require(doc.notes.first)
        #expect((0 ... 8).map { note.scalarOffset(utf16: $0) } == [0, nil, 1, nil, 2, 3, 4, 5, nil])
        #expect((0 ... 6).map { note.utf16Offset(scalars: $0) } == [0, 2, 4, 5, 6, 7, nil])
        // An insert at the text view's caret after "👍🏽 " (UTF-16 offset 5).
        try doc.insertText(id, at: try #require(note.scalarOffset(utf16: 5)), "x")
        #expect(doc.notes.first?.body == "👍🏽 xé!")
        // Every offset of random text goes there and back.
        let body = "a😀b\u{1F3FD}\u{0301}c\n日本"
        let n = Note(id: id, title: "", body: body, tags: [], priority: .normal, created: Date())
        for k in 0 ... body.unicodeScalars.count {
            let u = try #require(n.utf16Offset(scalars: k))
            #expect(n.scalarOffset(utf16: u) == k)
            #expect(String(body.utf16.prefix(u)) == String(String.UnicodeScalarView(body.unicodeScalars.prefix(k))))
        }
    }

    @Test("A note query that matches nothing, or several notes with long titles, makes a short message: query and titles cut to 60 characters")
    func longQueriesAndTitles() throws {
        let doc = Document(title: "T", author: "a")
        let long = String(repeating: "T", count: 10_000)
        doc.addNote(title: long)
        doc.addNote(title: long)
        let cut = String(repeating: "T", count: 60) + "…"
        #expect { try doc.findNote(String(repeating: "q", count: 10_000)) } throws: { error in
            "\(error)" == "no note matches \"" + String(repeating: "q", count: 60) + "…\""
        }
        #expect { try doc.findNote(String(repeating: "T", count: 100)) } throws: { error in
            "\(error)".count < 400 && "\(error)".contains("\"" + cut + "\"")
        }
    }

    @Test("Document.open(_:author:) records that author on the changes made through the document")
    func openWithAuthor() throws {
        let folder = try FileStoreTests.Folder()
        let path = folder.path + "/notes.peernote"
        try Document(title: "Notes", author: "laptop").write(to: path, mode: .compact)
        let app = try Document.open(path, author: "tablet")
        #expect(app.author == "tablet")
        app.addNote(title: "typed on the tablet")
        try app.write(to: path)
        #expect(try Document.open(path).history.last?.author == "tablet")
        #expect(try Document.open(path).author == "")
    }

    @Test("Editing a deleted note throws, until it is restored; typing into a note deleted since the last keystroke too")
    func deletedNotesRefuseEdits() throws {
        let doc = Document(title: "Notes", author: "me")
        let n = doc.addNote(title: "Plan", body: "text")
        let other = doc.addNote(title: "Other")
        try doc.insertText(n, at: 4, "!")            // the typing cache now holds the note
        try doc.deleteNote(n)
        let edits: [(String, () throws -> Void)] = [
            ("insertText", { try doc.insertText(n, at: 0, "x") }),
            ("deleteText", { try doc.deleteText(n, range: 0 ..< 1) }),
            ("setBody", { try doc.setBody(n, "new") }),
            ("setNoteTitle", { try doc.setNoteTitle(n, "Renamed") }),
            ("setPriority", { try doc.setPriority(n, .high) }),
            ("addTag", { try doc.addTag(n, "t") }),
            ("removeTag", { try doc.removeTag(n, "t") }),
            ("moveNote", { try doc.moveNote(n, to: 0) }),
        ]
        let changes = doc.changeCount
        for (name, edit) in edits {
            #expect(throws: PeerNoteError.noteDeleted(n), "\(name)") { try edit() }
        }
        #expect(doc.changeCount == changes, "nothing was recorded")
        #expect(doc.conflicts.isEmpty)
        try doc.insertText(other, at: 0, "still fine")
        try doc.restoreNote(n)
        try doc.insertText(n, at: 0, "x")
        try doc.setNoteTitle(n, "Renamed")
        #expect(doc.notes.first { $0.id == n }?.body == "xtext!")
        // A delete that arrives by merge is seen by the next keystroke as well.
        let phone = doc.fork(author: "phone")
        try phone.deleteNote(n)
        try doc.insertText(n, at: 0, "y")
        try doc.merge(phone)
        #expect(throws: PeerNoteError.self) { try doc.insertText(n, at: 0, "z") }
    }

    @Test("write(to:) inside a transaction does not overwrite changes it cannot merge then")
    func writeInsideTransaction() throws {
        let folder = try FileStoreTests.Folder()
        let path = folder.path + "/notes.peernote"
        let base = Document(title: "Notes", author: "laptop")
        try base.write(to: path, mode: .compact)
        let app = try Document.open(path)
        let phone = try Document.open(path)
        phone.addNote(title: "from phone")
        try phone.write(to: path)
        let before = try FileStore.read(path)
        app.transaction {
            app.addNote(title: "in a transaction")
            #expect(throws: WriteError.self) { try app.write(to: path) }
        }
        #expect(try FileStore.read(path) == before, "the phone's note is still there")
    }

    @Test("Document.open(\"-\") opens the file named -, never standard input")
    func openDash() throws {
        // The tests run in the package's folder, which holds no file named "-"; reading standard
        // input instead (as the command-line tools do for "-") would give another error.
        try #require(!FileManager.default.fileExists(atPath: "-"))
        #expect {
            _ = try Document.open("-")
        } throws: { error in
            guard let e = error as? DocumentFileError, case .file(let f) = e else { return false }
            return f.path == "-" && f.message.contains("No such file")
        }
    }

    @Test("Errors give their message as localizedDescription (what SwiftUI and AppKit alerts show)")
    func localizedDescriptions() throws {
        let a = Document(title: "A", author: "a"), b = Document(title: "B", author: "b")
        do {
            try a.merge(b)
            Issue.record("unrelated documents merged")
        } catch {
            #expect(error.localizedDescription == error.description)
            #expect(error.localizedDescription.contains("share no history"), "\(error.localizedDescription)")
        }
        let missing = "/nonexistent-\(UUID().uuidString)/n.peernote"
        do {
            _ = try Document.open(missing)
            Issue.record("opened a missing file")
        } catch {
            #expect(error.localizedDescription == error.description)
            #expect(error.localizedDescription.hasPrefix(missing), "\(error.localizedDescription)")
            let any: any Error = error
            #expect(any.localizedDescription == error.description, "through an existential, as an app's catch-all sees it")
        }
    }

    @Test("transaction passes its body's typed error through (a switch over PeerNoteError compiles), keeping the edits before it")
    func typedTransaction() {
        let doc = Document(title: "T", author: "a")
        let note = doc.addNote(title: "a")
        let missing = NoteID(replica: .random(), counter: 7)
        do {
            try doc.transaction(message: "batch") { () throws(PeerNoteError) in
                try doc.setNoteTitle(note, "b")
                try doc.addTag(missing, "x")
            }
            Issue.record("the missing note was not reported")
        } catch {
            switch error {
            case .noSuchNote: break
            default: Issue.record("unexpected \(error)")
            }
        }
        #expect(doc.notes.first?.title == "b")
    }

    @Test("A fork can leave its isolation domain (it is returned as `sending`), and a Notebook can be made by hand")
    func forkAndNotebook() async {
        let doc = Document(title: "Shared", author: "a")
        doc.addNote(title: "one")
        let copy = doc.fork(author: "b")
        let title = await Task.detached { copy.addNote(title: "two"); return copy.notes.count }.value
        #expect(title == 2)
        #expect(doc.notes.count == 1)
        let preview = Notebook(id: UUID(), title: "Preview", notes: [])
        #expect(preview.conflicts.isEmpty && preview.title == "Preview")
    }

    @Test("addNote(created:) keeps a past creation time in whole seconds, through save, load and merge")
    func createdKept() throws {
        let now: TimeInterval = 1_700_000_000
        let doc = Document(title: "T", author: "a")
        doc.clock = { Date(timeIntervalSince1970: now + 0.9) }
        let past = doc.addNote(title: "past", created: Date(timeIntervalSince1970: 1_500_000_000.75))
        let old = doc.addNote(title: "before 1970", created: Date(timeIntervalSince1970: -86_400.5))
        let plain = doc.addNote(title: "now")
        func created(_ d: Document, _ id: NoteID) -> TimeInterval? {
            d.notes.first { $0.id == id }?.created.timeIntervalSince1970
        }
        #expect(created(doc, past) == 1_500_000_000)
        #expect(created(doc, old) == -86_401)
        #expect(created(doc, plain) == now)
        for mode in [SaveMode.compact, .incremental] {
            let loaded = try Document.load(doc.save(mode))
            #expect([past, old, plain].map { created(loaded, $0) } == [1_500_000_000, -86_401, now], "\(mode)")
        }
        // Added on another copy, then merged: the time comes with the note.
        let copy = doc.fork(author: "b")
        let merged = copy.addNote(title: "from the copy", created: Date(timeIntervalSince1970: 1_234_567_890))
        try doc.merge(copy)
        #expect(created(doc, merged) == 1_234_567_890)
        #expect(created(try Document.load(doc.save()), merged) == 1_234_567_890)
    }

    @Test("addNote(created:) never dates a note after its change: a later time reads as the clock's")
    func createdClamped() throws {
        let now: TimeInterval = 1_700_000_000
        let doc = Document(title: "T", author: "a")
        doc.clock = { Date(timeIntervalSince1970: now) }
        let future = doc.addNote(title: "future", created: Date(timeIntervalSince1970: now + 3600))
        let infinite = doc.addNote(title: "infinite", created: Date(timeIntervalSince1970: .infinity))
        let notANumber = doc.addNote(title: "nan", created: Date(timeIntervalSince1970: .nan))
        let ancient = doc.addNote(title: "ancient", created: Date(timeIntervalSince1970: -1e300))
        let times = doc.notes.map(\.created.timeIntervalSince1970)
        #expect(doc.notes.map(\.id) == [future, infinite, notANumber, ancient])
        #expect(times == [now, now, now, -4_503_599_627_370_496])
        // Each note's time is no later than its change's.
        for change in doc.history.dropFirst() { #expect(change.time.timeIntervalSince1970 >= now) }
        // The earliest time a file holds: the document saves and loads.
        #expect(try Document.load(doc.save()).notes.map(\.created.timeIntervalSince1970) == times)
    }

    enum ListingError: Error { case enough(count: Int) }

    @Test("An app reads a notebook, a filtered listing or a search a note at a time, and stops it with its own typed error")
    func oneNoteAtATime() throws {
        let doc = Document(title: "Big")
        for i in 0 ..< 50 { doc.addNote(title: "Note \(i)", body: "body \(i)", tags: i % 5 == 0 ? ["five"] : []) }
        var titles: [String] = []
        doc.forEachNote { titles.append($0.title) }
        #expect(titles == doc.notes.map(\.title))
        var indexes: [Int] = []
        doc.forEachNote(matching: NoteFilter(tags: ["five"])) { index, _ in indexes.append(index) }
        #expect(indexes == [0, 5, 10, 15, 20, 25, 30, 35, 40, 45])
        let search = try NoteSearch("body")
        do throws(ListingError) {
            try doc.search(search) { (hit: SearchHit) throws(ListingError) in
                if hit.text == "body 3" { throw .enough(count: 4) }
            }
            Issue.record("the search went past the hit that stopped it")
        } catch .enough(let count) {
            #expect(count == 4)
        }
    }

    @Test("A notebook created or set without a title says so in its history, not 'titled notebook \"\"'")
    func untitledInHistory() throws {
        let doc = Document(title: "", author: "ann")
        #expect(doc.history.last?.summary == "left the notebook untitled")
        doc.setTitle("Home")
        doc.setTitle("")
        #expect(doc.history.map(\.summary) == ["left the notebook untitled", "titled notebook \"Home\"", "left the notebook untitled"])
    }
}
