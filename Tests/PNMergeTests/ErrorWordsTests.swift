import Foundation
import PeerNote
import PeerNoteCLISupport
import Testing

/// Library errors say what happened; the tools add which command helps.
@Suite("Error words: library and tools")
struct ErrorWordsTests {
    @Test("A field only a newer version can merge: the library says so without naming a tool, the tools' words add that a newer pnmerge can")
    func fieldConflictWords() {
        let error = PeerNoteError.fieldConflict(key: 20)
        #expect(!error.description.contains("pnmerge"), "\(error)")
        #expect(error.toolText == error.description + " (a newer pnmerge can)")
        #expect(PeerNoteError.unsupportedVersion(9).toolText == PeerNoteError.unsupportedVersion(9).description)
    }

    @Test("A write whose change went to a conflict copy: the tools' line says that pnmerge sync merges it in, the library's does not")
    func writeErrorWords() {
        let vanished = WriteError.vanished(path: "n.peernote", seconds: 10, keptIn: "n.sync-conflict-20261126-101010-peernote.peernote", notKept: nil, takenOut: [])
        #expect(!vanished.description.contains("pnmerge"), "\(vanished)")
        let line = CLIFailure(writing: vanished)
        #expect(line.status == .ioError)
        #expect(line.message == vanished.description + " (pnmerge sync merges it in)", "\(line.message)")
    }
}
