import Foundation
@testable import PeerNote
@testable import PeerNoteCommands
import PeerNoteCLISupport
import Testing
import TestSupport

/// The commands that only read a notebook verify it in full, as `pnmerge validate` does, before
/// they print anything, and print what the whole document gives even where they make less of it.
@Suite("reading commands: full verification, unchanged output")
struct ReadPathTests {
    static let fixtures = ReadingCommandsTests.fixtures

    /// The reading commands on `file`, each with what it needs after FILE.
    static func readers(_ file: String) -> [[String]] {
        [["list", file], ["list", file, "--json"], ["show", file, "Note"], ["search", file, "a"], ["conflicts", file],
         ["conflicts", file, "--json"], ["export", file], ["log", file], ["blame", file, "Note"]]
    }

    /// `file` (in `dir`) is refused by every reading command of both tools as `pnmerge validate`
    /// refuses it: the same exit status and the same line, nothing on standard output.
    func expectRefusedAsValidateDoes(_ file: String, in dir: TempDir, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let validate = try runPNMerge(["validate", file], in: dir)
        try #require(validate.status != 0, "\(file) is valid", sourceLocation: sourceLocation)
        let line = validate.err.trimmingCharacters(in: .newlines)
        for args in Self.readers(file) {
            let r = try Binary.run(args, in: dir, env: ["TZ": "UTC"])
            #expect(r.status == validate.status && r.out.isEmpty && r.err == "peernote: \(line)\n",
                    "peernote \(args.joined(separator: " ")): \(r.status) \(r.out) \(r.err); validate: \(validate.status) \(line)",
                    sourceLocation: sourceLocation)
        }
        let show = try runPNMerge(["show", file], in: dir)
        #expect(show.status == validate.status && show.out.isEmpty && show.err == "pnmerge: \(line)\n",
                "pnmerge show: \(show.status) \(show.err); validate: \(line)", sourceLocation: sourceLocation)
    }

    @Test("Every damaged fixture is refused by each reading command as validate refuses it")
    func damagedFixtures() throws {
        // Fixtures/damaged: one file per kind of damage (Fixtures/README.md). The fuzz findings
        // go through the same read; FuzzRegressionTests checks validate on them (some take
        // seconds each to refuse in a debug build).
        let dir = try TempDir()
        let names = try FileManager.default.contentsOfDirectory(atPath: "\(Self.fixtures)/damaged").sorted().filter { $0.hasSuffix(".peernote") }
        #expect(names.count >= 12, "the damaged fixtures were found: \(names)")
        for name in names { try expectRefusedAsValidateDoes("\(Self.fixtures)/damaged/\(name)", in: dir) }
    }

    @Test("A compact file whose state section disagrees with its history is refused, though the state section alone reads")
    func stateSectionAgainstHistory() throws {
        let d = Document(title: "Home", author: "alice")
        d.addNote(title: "Note", body: "first body")
        d.addNote(title: "Other", body: "second body")
        let raws = try BlockCodec.decode(d.save(.compact))
        try #require(raws.count == 1)
        var block = try WireCodec.decodePayload(raws[0], fileSize: raws[0].end)
        var state = try #require(block.state)
        state.notes[1].title = "Tampered"
        block.state = state
        let bytes = BlockCodec.encode(payload: WireCodec.encodePayload(block), version: Format.version(of: block))
        // What a reader of the state section alone would show: checksums hold, the title is the tampered one.
        #expect(try Document.readNotebook(bytes).notes.map(\.title) == ["Note", "Tampered"])
        let dir = try TempDir()
        try expectRefusedAsValidateDoes(try dir.write(bytes, "tampered.peernote"), in: dir)
    }

    /// Every document the fixtures hold, and the bundled copies merged (conflicts of every kind:
    /// a move, a title, a priority, a note deleted while edited).
    func documents() throws -> [Document] {
        var out: [Document] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: Self.fixtures).sorted() where name.hasSuffix(".peernote") {
            if let d = try? Document.load(Array(try Data(contentsOf: URL(fileURLWithPath: "\(Self.fixtures)/\(name)")))) { out.append(d) }
        }
        let alice = try Document.load(Array(try Data(contentsOf: URL(fileURLWithPath: "\(Self.fixtures)/meeting-alice.peernote"))))
        let bob = try Document.load(Array(try Data(contentsOf: URL(fileURLWithPath: "\(Self.fixtures)/meeting-bob.peernote"))))
        try alice.merge(bob)
        try #require(alice.conflicts.contains { if case .position = $0 { true } else { false } })
        out.append(alice)
        return out
    }

    @Test("show and conflicts render each conflict from the notebook they make as from the whole notebook, in text and JSON")
    func conflictsRenderedAsFromTheWholeNotebook() throws {
        var conflictsSeen = 0
        for document in try documents() {
            let whole = document.notebook
            let all = document.conflicts
            #expect(all == whole.conflicts)
            // `conflicts` renders all of them; `show` those of one note.
            var sets = [all]
            for note in document.notes + document.deletedNotes { sets.append(document.conflicts(of: note.id)) }
            for set in sets {
                let made = ConflictListing.notebook(for: set, in: document)
                for (i, conflict) in set.enumerated() {
                    for style in [RenderStyle(), RenderStyle(color: true, timeZone: .utc)] {
                        #expect(ConflictListing.lines(conflict, number: i + 1, in: document, notebook: made, file: "n.peernote", style: style)
                                == ConflictListing.lines(conflict, number: i + 1, in: document, notebook: whole, file: "n.peernote", style: style))
                        #expect(ConflictListing.json(conflict, in: document, notebook: made, file: "n.peernote", style: style).rendered
                                == ConflictListing.json(conflict, in: document, notebook: whole, file: "n.peernote", style: style).rendered)
                    }
                    conflictsSeen += 1
                }
            }
        }
        #expect(conflictsSeen >= 4, "conflicts of every kind were rendered: \(conflictsSeen)")
    }
}
