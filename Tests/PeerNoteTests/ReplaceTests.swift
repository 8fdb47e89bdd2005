import CFileSystem
import Foundation
import Testing
@testable import PeerNote

/// Writing over a file that another program (a sync client, which takes no `FileLock`) may
/// have replaced since it was read: `FileStore.replace` and `Document.write(over:loaded:)`.
@Suite("File store: replacing a file only while it holds what was read")
struct ReplaceTests {
    static func bytes(_ path: String) throws -> [UInt8] { try FileStore.read(path) }

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

        // A file removed meanwhile is written again (what was merged is not dropped).
        let gone = folder.path + "/gone.peernote"
        #expect(try FileStore.replace(Array("kept".utf8), at: gone, expecting: Array("old".utf8), exchange: exchange) == .replaced)
        #expect(try Self.bytes(gone) == Array("kept".utf8))
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
        let path = folder.path + "/notes.peernote"
        let original = Document(title: "Notes", author: "laptop")
        let milk = original.addNote(title: "Milk", body: "2 litres")
        let bread = original.addNote(title: "Bread", body: "rye")
        try original.write(to: path, mode: .compact)
        let loaded = try Self.bytes(path)

        // This process loads the file and edits it...
        let mine = try Document.load(loaded)
        mine.author = "laptop"
        try mine.insertText(milk, at: 0, "Oat ")
        // ...while a sync client puts the phone's copy in its place.
        let phone = try Document.load(loaded)
        phone.author = "phone"
        try phone.setBody(bread, "sourdough")
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
        let path = folder.path + "/notes.peernote"
        let original = Document(title: "Notes", author: "laptop")
        let note = original.addNote(title: "Milk", body: "2 litres")
        try original.write(to: path, mode: .compact)
        let loaded = try Self.bytes(path)
        let mine = try Document.load(loaded)
        try mine.insertText(note, at: 0, "Oat ")

        let other = Document(title: "Other", author: "someone").save(.compact)
        try FileStore.writeAtomically(other, to: path)
        #expect {
            try mine.write(over: path, loaded: loaded)
        } throws: { error in
            (error as? FileError)?.message.contains("was replaced by another notebook") == true
        }
        #expect(try Self.bytes(path) == other)

        try FileStore.writeAtomically(Array("not a notebook".utf8), to: path)
        #expect(throws: FileError.self) { try mine.write(over: path, loaded: loaded) }
        #expect(try Self.bytes(path) == Array("not a notebook".utf8))
        #expect(folder.names == ["notes.peernote"])
    }
}
