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
}
