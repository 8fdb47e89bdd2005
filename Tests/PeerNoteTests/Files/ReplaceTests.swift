import CFileSystem
import Foundation
import Testing
@testable import PeerNote

/// Writing over a file that another program (a sync client, which takes no `FileLock`) may
/// have replaced since it was read: `FileStore.replace` and `Document.write(over:loaded:)`.
@Suite("File store: replacing a file only while it holds what was read")
struct ReplaceTests {
    static func bytes(_ path: String) throws -> [UInt8] { try FileStore.read(path) }

    /// `notes.peernote` in `folder`, holding notes Milk ("2 litres") and Bread ("rye"): its path,
    /// its bytes as read, and the two notes' ids.
    static func notebook(in folder: FileStoreTests.Folder) throws -> (path: String, loaded: [UInt8], milk: NoteID, bread: NoteID) {
        let path = folder.path + "/notes.peernote"
        let original = Document(title: "Notes", author: "laptop")
        let milk = original.addNote(title: "Milk", body: "2 litres")
        let bread = original.addNote(title: "Bread", body: "rye")
        try original.write(to: path, mode: .compact)
        return (path, try bytes(path), milk, bread)
    }

    /// Two copies of `loaded`: this process's (laptop) with "Oat " typed before Milk's body,
    /// and the phone's with Bread's body set to "sourdough".
    static func laptopAndPhone(_ loaded: [UInt8], milk: NoteID, bread: NoteID) throws -> (mine: Document, phone: Document) {
        let mine = try Document.load(loaded)
        mine.author = "laptop"
        try mine.insertText(milk, at: 0, "Oat ")
        let phone = try Document.load(loaded)
        phone.author = "phone"
        try phone.setBody(bread, "sourdough")
        return (mine, phone)
    }

    @Test("The exchange the library relies on works on this file system: each name then leads to the other file")
    func exchangeWorks() throws {
        let folder = try FileStoreTests.Folder()
        let a = try folder.file("a", "first"), b = try folder.file("b", "second")
        try #require(peernote_exchange_files(a, b) == 0, "renameat2(RENAME_EXCHANGE) failed: errno \(errno)")
        #expect(try Self.bytes(a) == Array("second".utf8))
        #expect(try Self.bytes(b) == Array("first".utf8))
        #expect(peernote_exchange_files(a, folder.path + "/missing") != 0, "a missing file cannot be exchanged")
        #expect(try Self.bytes(a) == Array("second".utf8), "a failed exchange changes nothing")
    }

    @Test("A file that still holds what was read is replaced; one that changed is left alone and its bytes returned",
          arguments: [true, false])
    func replaceOnlyUnchanged(exchange: Bool) throws {
        let folder = try FileStoreTests.Folder()
        let doc = try folder.file("n.peernote", "as read")
        #expect(try FileStore.replace(Array("new".utf8), at: doc, expecting: Array("as read".utf8), exchange: exchange) == .replaced)
        #expect(try Self.bytes(doc) == Array("new".utf8))

        // Another program wrote the file since it was read.
        let outcome = try FileStore.replace(Array("newer".utf8), at: doc, expecting: Array("as read".utf8), exchange: exchange)
        #expect(outcome == .changed(current: Array("new".utf8)))
        #expect(try Self.bytes(doc) == Array("new".utf8), "the other program's file is kept")
        #expect(folder.names == ["n.peernote"], "no temporary file is left behind")
        #expect(FileStoreTests.openFiles(under: folder.path) == [])

        // A file removed meanwhile: see `missingSinceRead` (not written again).
    }

    @Test("Through a symbolic link the file it points to is replaced, and the link kept")
    func throughLink() throws {
        let folder = try FileStoreTests.Folder()
        let real = try folder.file("real.peernote", "as read")
        let link = folder.path + "/link.peernote"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: real)
        #expect(try FileStore.replace(Array("new".utf8), at: link, expecting: Array("as read".utf8)) == .replaced)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == real)
        #expect(try Self.bytes(real) == Array("new".utf8))
    }

    @Test("A copy written by a sync client while a write was prepared is merged in, not overwritten")
    func syncClientRace() throws {
        let folder = try FileStoreTests.Folder()
        let (path, loaded, milk, bread) = try Self.notebook(in: folder)

        // This process loads the file and edits it, while a sync client puts the phone's copy in its place.
        let (mine, phone) = try Self.laptopAndPhone(loaded, milk: milk, bread: bread)
        try FileStore.writeAtomically(phone.save(.compact), to: path)

        let outcome = try mine.write(over: path, loaded: loaded)
        #expect(outcome.mergedMeanwhile == 1)
        let onDisk = try Self.bytes(path)
        #expect(outcome.byteCount == onDisk.count)
        let result = try Document.load(onDisk)
        #expect(result.notebook.notes.map(\.body) == ["Oat 2 litres", "sourdough"], "both edits survive")
        #expect(folder.names == ["notes.peernote"])

        // Nothing changed since: a plain write.
        try mine.setBody(bread, "sourdough, sliced")
        #expect(try mine.write(over: path, loaded: onDisk).mergedMeanwhile == 0)
        #expect(try Document.load(Self.bytes(path)).notebook.notes.map(\.body) == ["Oat 2 litres", "sourdough, sliced"])
    }

    @Test("A file replaced meanwhile by another notebook, or by something unreadable, is left alone")
    func replacedByOther() throws {
        let folder = try FileStoreTests.Folder()
        let (path, loaded, milk, _) = try Self.notebook(in: folder)
        let mine = try Document.load(loaded)
        try mine.insertText(milk, at: 0, "Oat ")

        let other = Document(title: "Other", author: "someone").save(.compact)
        try FileStore.writeAtomically(other, to: path)
        #expect {
            try mine.write(over: path, loaded: loaded)
        } throws: { error in
            let message = (error as? WriteError)?.description ?? ""
            return message.contains("was replaced by another notebook while this was being written; what was being written is kept in \(folder.path)/notes.sync-conflict-")
        }
        #expect(try Self.bytes(path) == other)

        try FileStore.writeAtomically(Array("not a notebook".utf8), to: path)
        #expect {
            try mine.write(over: path, loaded: loaded)
        } throws: { error in
            (error as? WriteError)?.description.contains("was replaced by a file that cannot be merged") == true
        }
        #expect(try Self.bytes(path) == Array("not a notebook".utf8))
        // The change is in a conflict copy each time, beside the file left as it was.
        let copies = folder.names.filter { $0.hasPrefix("notes.sync-conflict-") }
        #expect(copies.count == 2 && folder.names.count == 3, "\(folder.names)")
        for copy in copies {
            #expect(try Document.load(Self.bytes(folder.path + "/" + copy)).notebook.notes.first { $0.id == milk }?.body == "Oat 2 litres")
        }
    }

    @Test("What a writer that died mid-exchange left under .NAME.swap-XXXXXX goes only when the document has all of it; a sync client's copy becomes a conflict copy")
    func leftoverSwapFiles() throws {
        let folder = try FileStoreTests.Folder()
        let path = folder.path + "/notes.peernote"
        let base = Document(title: "Notes", author: "laptop")
        let note = base.addNote(title: "Milk", body: "2 litres")
        let old = base.save(.compact)
        let merged = try Document.load(old)
        try merged.insertText(note, at: 0, "Oat ")
        try FileStore.writeAtomically(merged.save(.compact), to: path)
        let phone = try Document.load(old)
        phone.author = "phone"
        _ = phone.addNote(title: "From the phone")
        let ahead = try Document.load(merged.save(.compact))
        _ = ahead.addNote(title: "Unfinished")

        // The version the writer replaced (the document has all of it), and the writer's own
        // result that never got into place (it has all of the document): both go.
        let replaced = try folder.file(".notes.peernote.swap-aaaaaa", "")
        try FileStore.writeAtomically(old, to: replaced)
        let unfinished = try folder.file(".notes.peernote.swap-bbbbbb", "")
        try FileStore.writeAtomically(ahead.save(.compact), to: unfinished)
        // A sync client's copy with a change the document lacks, and something unreadable: kept.
        let foreign = try folder.file(".notes.peernote.swap-cccccc", "")
        try FileStore.writeAtomically(phone.save(.compact), to: foreign)
        // A young one may belong to a live writer: left alone.
        let young = try folder.file(".notes.peernote.swap-dddddd", "", age: 0)
        try FileStore.writeAtomically(old, to: young)
        for p in [replaced, unfinished, foreign] { try folder.backdate(p, by: 3_600) }

        let removed = FileStore.removeStaleTemporaries(of: path)
        #expect(Set(removed) == [replaced, unfinished])
        let names = folder.names
        #expect(names.contains(".notes.peernote.swap-dddddd"))
        let conflictCopies = names.filter { $0.hasPrefix("notes.sync-conflict-") && $0.hasSuffix("-peernote.peernote") }
        #expect(conflictCopies.count == 1, "\(names)")
        if let copy = conflictCopies.first {
            let kept = try Document.load(FileStore.read(folder.path + "/" + copy))
            #expect(kept.notebook.notes.map(\.title) == ["Milk", "From the phone"])
        }
        #expect(names.count == 3, "\(names)")
        #expect(try Document.load(FileStore.read(path)).notebook.notes.map(\.body) == ["Oat 2 litres"], "the document itself is not touched")
    }

    @Test("A version another writer put in place while a write was putting back what it displaced is returned and kept, not lost")
    func changedTwice() throws {
        let folder = try FileStoreTests.Folder()
        let doc = try folder.file("n.peernote", "as read")
        // Another program writes the file just as the new file is swapped in (after the size was
        // checked); while the new file is being taken out again, a third writer puts its version in place.
        let outcome = try FileStore.replace(Array("new".utf8), at: doc, expecting: Array("as read".utf8), exchange: true, beforeExchanging: {
            try? FileStore.writeAtomically(Array("another program's".utf8), to: doc)
        }, beforePuttingBack: {
            try? FileStore.writeAtomically(Array("third".utf8), to: doc)
        })
        guard case .changedTwice(let current, let displaced, let keptAt) = outcome else {
            Issue.record("expected changedTwice, got \(outcome)")
            return
        }
        #expect(current == Array("another program's".utf8), "what was displaced first is back in place")
        #expect(displaced == Array("third".utf8))
        #expect(try Self.bytes(doc) == current)
        #expect(try Self.bytes(keptAt) == displaced, "the third version is kept until the caller has it in a file")
        #expect(keptAt.hasPrefix(folder.path + "/.n.peernote.kept-"))
        #expect(folder.names.count == 2, "\(folder.names)")

        // A caller that cannot write it makes it a conflict copy; a second one in the same second gets its own name.
        let first = FileStore.keepAsConflictCopy(keptAt, of: doc)
        let other = try folder.file(".n.peernote.kept-zzzzzz", "fourth")
        let second = FileStore.keepAsConflictCopy(other, of: doc)
        #expect(first != second)
        for (name, content) in [(first, "third"), (second, "fourth")] {
            let file = String(name.split(separator: "/").last ?? "")
            #expect(file.wholeMatch(of: #/n\.sync-conflict-[0-9]{8}-[0-9]{6}-peernote[0-9]*\.peernote/#) != nil, "\(file)")
            #expect(try Self.bytes(name) == Array(content.utf8))
        }
        #expect(folder.names.count == 3, "\(folder.names)")
    }

    @Test("Two writers without a common lock that take each other's file out: the version taken out is merged in and written, nothing is left beside the file")
    func writersRace() throws {
        let folder = try FileStoreTests.Folder()
        let (path, loaded, milk, bread) = try Self.notebook(in: folder)
        // A sync client brings the phone's copy just as this process swaps its file in...
        let (mine, phone) = try Self.laptopAndPhone(loaded, milk: milk, bread: bread)
        let phoneBytes = phone.save(.compact)
        // ...and another user's peernote writes the tablet's copy just as this write puts the phone's back.
        let tablet = try Document.load(loaded)
        tablet.author = "tablet"
        _ = tablet.addNote(title: "Eggs")
        let tabletBytes = tablet.save(.compact)
        var calls = 0
        let outcome = try mine.write(over: path, loaded: loaded, mode: .incremental, saved: nil) { (bytes, expected) throws(FileError) in
            calls += 1
            return try FileStore.replace(bytes, at: path, expecting: expected, exchange: true, beforeExchanging: {
                if calls == 1 { try? FileStore.writeAtomically(phoneBytes, to: path) }
            }, beforePuttingBack: {
                if calls == 1 { try? FileStore.writeAtomically(tabletBytes, to: path) }
            })
        }
        #expect(calls == 2)
        #expect(outcome.mergedMeanwhile == 1)
        let result = try Document.load(Self.bytes(path))
        #expect(result.notebook.notes.map(\.title) == ["Milk", "Bread", "Eggs"])
        #expect(result.notebook.notes.map(\.body) == ["Oat 2 litres", "sourdough", ""], "all three writers' edits are in the file")
        #expect(folder.names == ["notes.peernote"], "the version taken out is removed once the file has it")
    }

    @Test("A version taken out that cannot be merged (another notebook) is left as a conflict copy, named in the error")
    func takenOutUnrelated() throws {
        let folder = try FileStoreTests.Folder()
        let (path, loaded, milk, _) = try Self.notebook(in: folder)
        let mine = try Document.load(loaded)
        try mine.insertText(milk, at: 0, "Oat ")
        let phone = try Document.load(loaded)
        _ = phone.addNote(title: "From the phone")
        let phoneBytes = phone.save(.compact)
        let other = Document(title: "Other", author: "someone").save(.compact)
        #expect {
            try mine.write(over: path, loaded: loaded, mode: .incremental, saved: nil) { (bytes, expected) throws(FileError) in
                try FileStore.replace(bytes, at: path, expecting: expected, exchange: true, beforeExchanging: {
                    try? FileStore.writeAtomically(phoneBytes, to: path)
                }, beforePuttingBack: {
                    try? FileStore.writeAtomically(other, to: path)
                })
            }
        } throws: { error in
            let message = (error as? WriteError)?.description ?? ""
            return message.contains("was replaced by another notebook") && message.contains("kept as \(folder.path)/notes.sync-conflict-")
                && message.contains("what was being written is kept in \(folder.path)/notes.sync-conflict-")
        }
        #expect(try Self.bytes(path) == phoneBytes, "the file is left as it was")
        // Two conflict copies: the version taken out, and this write's change.
        let copies = folder.names.filter { $0.hasPrefix("notes.sync-conflict-") }
        #expect(copies.count == 2 && folder.names.count == 3, "\(folder.names)")
        let held = try copies.map { try Self.bytes(folder.path + "/" + $0) }
        #expect(held.contains(other))
        #expect(try held.contains { try $0 != other && Document.load($0).notebook.notes.first { $0.id == milk }?.body == "Oat 2 litres" })
    }

    @Test("A version a killed writer had taken out of place (.NAME.kept-XXXXXX) goes only when the document has all of it, even when it has more than the document")
    func keptAfterKilledWriter() throws {
        let folder = try FileStoreTests.Folder()
        let (path, loaded, _, _) = try Self.notebook(in: folder)
        // Another writer's version with one more note, which that writer was told is written: the
        // writer that took it out of place was killed before it wrote a file including it.
        let other = try Document.load(loaded)
        _ = other.addNote(title: "Eggs")
        let ahead = try folder.file(".notes.peernote.kept-aaaaaa", "")
        try FileStore.writeAtomically(other.save(.compact), to: ahead)
        // One the document has all of (it was written after all).
        let merged = try folder.file(".notes.peernote.kept-bbbbbb", "")
        try FileStore.writeAtomically(loaded, to: merged)
        for p in [ahead, merged] { try folder.backdate(p, by: 3_600) }

        #expect(FileStore.removeStaleTemporaries(of: path) == [merged])
        let copies = folder.names.filter { $0.hasPrefix("notes.sync-conflict-") }
        #expect(copies.count == 1 && folder.names.count == 2, "\(folder.names)")
        if let copy = copies.first {
            #expect(try Document.load(FileStore.read(folder.path + "/" + copy)).notebook.notes.map(\.title) == ["Milk", "Bread", "Eggs"])
        }
    }

    /// A sync client bringing a copy from the phone: the file as it is now, with one more note
    /// titled `title` (the phone had the latest version, and added a note).
    static func phoneWrites(_ title: String, to path: String) {
        guard let now = try? FileStore.read(path), let phone = try? Document.load(now) else { return }
        phone.author = "phone"
        _ = phone.addNote(title: title)
        try? FileStore.writeAtomically(phone.save(.compact), to: path)
    }

    /// Another user's `peernote add` (no lock shared with this process): loads `bytes` (what it
    /// read from `path`), adds a note titled `title`, and writes it over `path` as the command does.
    static func otherWriter(adds title: String, to path: String, read bytes: [UInt8]) -> WriteOutcome? {
        guard let tablet = try? Document.load(bytes) else { return nil }
        tablet.author = "tablet"
        _ = tablet.addNote(title: title)
        return try? tablet.write(over: path, loaded: bytes)
    }

    @Test("A file whose size changed since it was read is left alone without swapping anything in")
    func sizeChecked() throws {
        let folder = try FileStoreTests.Folder()
        let doc = try folder.file("n.peernote", "a longer file than was read")
        var swapped = false
        let outcome = try FileStore.replace(Array("new".utf8), at: doc, expecting: Array("as read".utf8), exchange: true,
                                            beforeExchanging: { swapped = true }, beforePuttingBack: {})
        #expect(outcome == .changed(current: Array("a longer file than was read".utf8)))
        #expect(!swapped, "the new file was never in place")
        #expect(folder.names == ["n.peernote"])
    }

    @Test("A writer that took another writer's finished file out of place goes on until the file has it, however often the file changes meanwhile")
    func takenOutVersionLands() throws {
        let folder = try FileStoreTests.Folder()
        let (path, loaded, _, _) = try Self.notebook(in: folder)
        let mine = try Document.load(loaded)
        mine.author = "laptop"
        _ = mine.addNote(title: "Laptop")
        var tablet: WriteOutcome?
        var calls = 0
        let outcome = try mine.write(over: path, loaded: loaded, mode: .incremental, saved: nil) { (bytes, expected) throws(FileError) in
            calls += 1
            let call = calls
            return try FileStore.replace(bytes, at: path, expecting: expected, exchange: true, beforeExchanging: {
                // The phone's copy arrives just as this write swaps its file in, twelve times in a row.
                if call <= 12 { Self.phoneWrites("Phone \(call)", to: path) }
            }, beforePuttingBack: {
                // Another user's peernote reads the file (this write's new file) and writes its own
                // over it, which it is told is written, before this write puts the phone's back.
                if call == 1, let seen = try? FileStore.read(path) { tablet = Self.otherWriter(adds: "Tablet", to: path, read: seen) }
            })
        }
        #expect(tablet != nil, "the other writer was told its note is written")
        #expect(calls == 13)
        #expect(outcome.mergedMeanwhile == 12)
        let titles = try Document.load(Self.bytes(path)).notebook.notes.map(\.title)
        #expect(Set(titles) == Set(["Milk", "Bread", "Laptop", "Tablet"] + (1 ... 12).map { "Phone \($0)" }) && titles.count == 16, "\(titles)")
        #expect(folder.names == ["notes.peernote"], "no conflict copy, nothing kept aside")
    }

    @Test("A writer whose new file another writer read and built on goes on until it is written: it never says 'not written' of a change that is in the file")
    func builtOnVersionLands() throws {
        let folder = try FileStoreTests.Folder()
        let (path, loaded, _, _) = try Self.notebook(in: folder)
        let mine = try Document.load(loaded)
        mine.author = "laptop"
        _ = mine.addNote(title: "Laptop")
        var seen: [UInt8]?
        var tablet: WriteOutcome?
        var calls = 0
        let outcome = try mine.write(over: path, loaded: loaded, mode: .incremental, saved: nil) { (bytes, expected) throws(FileError) in
            calls += 1
            let call = calls
            let result = try FileStore.replace(bytes, at: path, expecting: expected, exchange: true, beforeExchanging: {
                if call <= 12 { Self.phoneWrites("Phone \(call)", to: path) }
            }, beforePuttingBack: {
                // Another user's peernote reads the file while this write's new file is in place...
                if call == 1 { seen = try? FileStore.read(path) }
            })
            // ...and writes its note, on top of this write's, once it has been put back.
            if call == 1, let seen { tablet = Self.otherWriter(adds: "Tablet", to: path, read: seen) }
            return result
        }
        #expect(tablet?.mergedMeanwhile == 1, "the other writer found the phone's copy and merged it")
        #expect(calls == 13)
        #expect(outcome.mergedMeanwhile == 12)
        let titles = try Document.load(Self.bytes(path)).notebook.notes.map(\.title)
        #expect(titles.filter { $0 == "Laptop" }.count == 1 && titles.contains("Tablet") && titles.count == 16, "\(titles)")
        #expect(folder.names == ["notes.peernote"])
    }

    @Test("A writer that gives up while the file keeps changing keeps its change, and the versions it took out, in a conflict copy it names")
    func givesUpIntoConflictCopy() throws {
        let folder = try FileStoreTests.Folder()
        let (path, loaded, _, _) = try Self.notebook(in: folder)
        let mine = try Document.load(loaded)
        mine.author = "laptop"
        _ = mine.addNote(title: "Laptop")
        var calls = 0
        var message = ""
        do {
            _ = try mine.write(over: path, loaded: loaded, mode: .incremental, saved: nil, patience: 0.3) { (bytes, expected) throws(FileError) in
                calls += 1
                let call = calls
                return try FileStore.replace(bytes, at: path, expecting: expected, exchange: true, beforeExchanging: {
                    Self.phoneWrites("Phone \(call)", to: path)
                }, beforePuttingBack: {
                    if call == 1, let seen = try? FileStore.read(path) { _ = Self.otherWriter(adds: "Tablet", to: path, read: seen) }
                })
            }
            Issue.record("written although the file never stopped changing")
        } catch { message = error.description }
        #expect(calls > 1)
        #expect(message.contains("other writers kept changing it for 300 ms") && message.contains("what was being written is kept in \(folder.path)/notes.sync-conflict-"), "\(message)")
        #expect(!message.contains("not written"), "\(message)")
        let copies = folder.names.filter { $0.hasPrefix("notes.sync-conflict-") }
        #expect(copies.count == 1 && folder.names.count == 2, "only the conflict copy beside the file, nothing kept aside: \(folder.names)")
        if let copy = copies.first {
            let titles = try Document.load(Self.bytes(folder.path + "/" + copy)).notebook.notes.map(\.title)
            #expect(titles.contains("Laptop") && titles.contains("Tablet"), "the change, and the version taken out: \(titles)")
        }
        #expect(try Document.load(Self.bytes(path)).notebook.notes.map(\.title).contains("Phone \(calls)"), "the file holds the last copy that arrived")
    }

    @Test("A file read and gone since is not created again (a sync client moving it aside would overwrite it); with nothing read, one is created",
          arguments: [true, false])
    func missingSinceRead(exchange: Bool) throws {
        let folder = try FileStoreTests.Folder()
        let doc = folder.path + "/n.peernote"
        #expect(try FileStore.replace(Array("new".utf8), at: doc, expecting: Array("as read".utf8), exchange: exchange) == .missing)
        #expect(folder.names.isEmpty, "nothing written, no temporary file left: \(folder.names)")
        #expect(try FileStore.replace(Array("new".utf8), at: doc, expecting: [], exchange: exchange) == .replaced)
        #expect(try Self.bytes(doc) == Array("new".utf8))
    }

    /// `doc.write(over:)` raced by another program: on the first try `before` runs just before
    /// the real `FileStore.replace` and `after` just after it; later tries replace plainly.
    /// The outcome, the first try's outcome and the number of tries.
    static func write(_ doc: Document, over path: String, loaded: [UInt8], patience: Double = 5, before: () -> Void,
                      after: () throws(FileError) -> Void = {}) throws(WriteError) -> (outcome: WriteOutcome, first: FileStore.ReplaceOutcome?, tries: Int) {
        var tries = 0
        var first: FileStore.ReplaceOutcome?
        let outcome = try doc.write(over: path, loaded: loaded, mode: .incremental, saved: nil, patience: patience) { (bytes, expected) throws(FileError) in
            tries += 1
            guard tries == 1 else { return try FileStore.replace(bytes, at: path, expecting: expected) }
            before()
            let outcome = try FileStore.replace(bytes, at: path, expecting: expected)
            first = outcome
            try after()
            return outcome
        }
        return (outcome, first, tries)
    }

    /// The message of `write`, which must fail, having left one conflict copy in `folder` that
    /// holds a note titled `title` (the change it was writing).
    static func keptAside(in folder: FileStoreTests.Folder, title: String, _ write: () throws -> Void,
                          sourceLocation: SourceLocation = #_sourceLocation) -> String {
        var message = ""
        do {
            try write()
            Issue.record("written", sourceLocation: sourceLocation)
        } catch { message = (error as? WriteError)?.description ?? "\(error)" }
        #expect(message.contains("what was being written is kept in \(folder.path)/notes.sync-conflict-") && !message.contains("not written"),
                "\(message)", sourceLocation: sourceLocation)
        let copies = folder.names.filter { $0.hasPrefix("notes.sync-conflict-") }
        #expect(copies.count == 1, "\(folder.names)", sourceLocation: sourceLocation)
        if let copy = copies.first {
            #expect((try? Document.load(Self.bytes(folder.path + "/" + copy)).notebook.notes.map(\.title).contains(title)) == true,
                    "the copy holds the change", sourceLocation: sourceLocation)
        }
        return message
    }

    @Test("A file a sync client moves aside while a write is prepared, then replaces with another device's copy: that copy is merged in, nothing lost")
    func movedAsideThenReplaced() throws {
        let folder = try FileStoreTests.Folder()
        let (path, loaded, milk, bread) = try Self.notebook(in: folder)
        let (mine, phone) = try Self.laptopAndPhone(loaded, milk: milk, bread: bread)
        let aside = folder.path + "/notes.sync-conflict-20261125-000000-LOCAL01.peernote"
        // The client takes the local file aside, this write finds it gone, then the client puts
        // the other device's copy in its place.
        let w = try Self.write(mine, over: path, loaded: loaded, before: { #expect(rename(path, aside) == 0) },
                               after: { () throws(FileError) in try FileStore.writeAtomically(phone.save(.compact), to: path) })
        #expect(w.first == .missing && w.tries == 2 && w.outcome.mergedMeanwhile == 1)
        let notes = try Document.load(Self.bytes(path)).notebook.notes
        #expect(notes.first { $0.id == milk }?.body == "Oat 2 litres", "this write's change")
        #expect(notes.first { $0.id == bread }?.body == "sourdough", "the other device's change")
    }

    @Test("A file that goes missing after it was read and does not come back: the change is kept in a conflict copy the error names")
    func goneForGood() throws {
        let folder = try FileStoreTests.Folder()
        let (path, loaded, _, _) = try Self.notebook(in: folder)
        let mine = try Document.load(loaded)
        _ = mine.addNote(title: "Laptop")
        let message = Self.keptAside(in: folder, title: "Laptop") {
            _ = try mine.write(over: path, loaded: loaded, mode: .incremental, saved: nil, patience: 0.3) { (bytes, expected) throws(FileError) in
                unlink(path)
                return try FileStore.replace(bytes, at: path, expecting: expected)
            }
        }
        #expect(message.contains("disappeared while this was being written") && message.contains("did not come back in 300 ms"), "\(message)")
        #expect(!FileManager.default.fileExists(atPath: path), "not created again")
        #expect(folder.names.count == 1, "\(folder.names)")
    }

    @Test("A file moved away and put back as it was is written with nothing said to have changed; a folder put in its place gets a conflict copy")
    func putBackOrFolder() throws {
        let folder = try FileStoreTests.Folder()
        let (path, loaded, milk, bread) = try Self.notebook(in: folder)
        let (mine, _) = try Self.laptopAndPhone(loaded, milk: milk, bread: bread)
        let aside = folder.path + "/aside"
        let w = try Self.write(mine, over: path, loaded: loaded, before: { #expect(rename(path, aside) == 0) },
                               after: { #expect(rename(aside, path) == 0) })
        #expect(w.first == .missing && w.tries == 2 && w.outcome.mergedMeanwhile == 0, "put back unchanged: nothing merged, nothing to report")
        #expect(try Document.load(Self.bytes(path)).notebook.notes.first { $0.id == milk }?.body == "Oat 2 litres")

        // A folder where the file was: the change goes into a conflict copy the error names.
        let again = try Document.load(Self.bytes(path))
        _ = again.addNote(title: "Laptop")
        let now = try Self.bytes(path)
        let message = Self.keptAside(in: folder, title: "Laptop") {
            _ = try Self.write(again, over: path, loaded: now, before: {
                _ = rename(path, aside)
                _ = mkdir(path, 0o755)
            })
        }
        #expect(message.contains("is a directory; what was being written is kept in "), "\(message)")
    }

    @Test("A FIFO or a dangling link put where the file was keeps the change in a conflict copy beside it (not named after the link's target); a file emptied and filled again is merged, not copied aside")
    func otherKindsAndEmptied() throws {
        for kind in ["fifo", "dangling"] {
            let folder = try FileStoreTests.Folder()
            let (path, loaded, _, _) = try Self.notebook(in: folder)
            let mine = try Document.load(loaded)
            _ = mine.addNote(title: "Laptop")
            _ = Self.keptAside(in: folder, title: "Laptop") {
                _ = try Self.write(mine, over: path, loaded: loaded, patience: 0.3, before: {
                    _ = rename(path, folder.path + "/aside")
                    if kind == "fifo" { _ = mkfifo(path, 0o644) } else { _ = symlink(folder.path + "/nowhere.peernote", path) }
                })
            }
        }

        // Emptied, then filled again with another device's copy (a writer that rewrites in place).
        let folder = try FileStoreTests.Folder()
        let (path, loaded, milk, bread) = try Self.notebook(in: folder)
        let (mine, phone) = try Self.laptopAndPhone(loaded, milk: milk, bread: bread)
        let w = try Self.write(mine, over: path, loaded: loaded, before: { _ = truncate(path, 0) },
                               after: { () throws(FileError) in try FileStore.writeAtomically(phone.save(.compact), to: path) })
        #expect(w.outcome.mergedMeanwhile == 1 && folder.names == ["notes.peernote"], "\(folder.names)")
        let notes = try Document.load(Self.bytes(path)).notebook.notes
        #expect(notes.first { $0.id == milk }?.body == "Oat 2 litres" && notes.first { $0.id == bread }?.body == "sourdough")

        // Emptied for good: it held nothing, and is written over.
        let again = try Document.load(Self.bytes(path))
        _ = again.addNote(title: "After")
        _ = try Self.write(again, over: path, loaded: try Self.bytes(path), patience: 0.2, before: { _ = truncate(path, 0) })
        #expect(try Document.load(Self.bytes(path)).notebook.notes.map(\.title).contains("After"))
        #expect(folder.names == ["notes.peernote"], "no conflict copy for an empty file: \(folder.names)")
    }
}
