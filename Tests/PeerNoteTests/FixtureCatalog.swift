import Foundation
@testable import PeerNote

/// The bundled files in `Fixtures/`: what each is, and for damaged ones the exact
/// error `Document.load` must give. `Fixtures/README.md` is generated from this
/// list (see `FixtureGeneration`) and `FixtureTests` checks every damaged file
/// against it, so the README and the library's behaviour cannot disagree.
enum FixtureCatalog {
    /// A valid document in `Fixtures/`.
    struct Valid: Sendable {
        var file: String
        var what: String
    }

    /// The error a damaged fixture must give: `Document.load` throws
    /// `.invalidDocument(offset: offset, message:)` with a message containing `message`,
    /// or, when `newerVersion` is set, `.unsupportedVersion(newerVersion)` whose
    /// description contains `message`.
    struct Damaged: Sendable {
        var file: String
        var what: String
        var offset: Int?
        var message: String
        var newerVersion: UInt64? = nil

        /// The error as the README shows it.
        var documentedError: String {
            if let v = newerVersion { return "`.unsupportedVersion(\(v))` (no offset): \"\(message)\"" }
            return "offset \(offset.map(String.init) ?? "none"): \"\(message)\""
        }

        /// Whether `error` is exactly the documented one.
        func matches(_ error: PeerNoteError) -> Bool {
            if let v = newerVersion { return error == .unsupportedVersion(v) && error.description.contains(message) }
            guard case .invalidDocument(let o, let m) = error else { return false }
            return o == offset && m.contains(message)
        }
    }

    static let valid: [Valid] = [
        Valid(file: "meeting.peernote",
              what: "Notes of a weekly product meeting: 6 live notes and 1 deleted note, with tags and priorities. History by two authors on two devices: notes added, bodies edited (`setBody`), a tag removed, a note moved, a note deleted, a note retitled, a merge. Compact (one block)."),
        Valid(file: "meeting-v3.peernote",
              what: "`meeting.peernote` in format version 3: its state section holds each note body's structure, and the inserts whose origins follow from it store none (column 49). Readers read it; writers write version 2 unless `PEERNOTE_WRITE_FORMAT=3` is set, so a compact save (`pnmerge compact`) gives `meeting.peernote` byte for byte."),
        Valid(file: "meeting-appended.peernote",
              what: "`meeting.peernote` byte for byte, followed by two blocks appended by `save(.incremental)` (Chen adds an action item and a tag; then a new note and a priority change). Three blocks."),
        Valid(file: "meeting-alice.peernote",
              what: "Diverged from `meeting.peernote` (Alice's copy). With `meeting-bob.peernote` it conflicts: both retitle \"Release 2.4 status\", both set the priority of \"Hiring\", Alice edits \"Decisions\" which Bob deletes, both move \"Customer feedback\" (Alice to the top), and each fixes a different typo in its body (Alice: \"requst\")."),
        Valid(file: "meeting-bob.peernote",
              what: "Diverged from `meeting.peernote` (Bob's copy): the other side of every conflict above; Bob moves \"Customer feedback\" to second place, deletes \"Decisions\" and fixes \"confusng\"."),
        Valid(file: "grocery-laptop.peernote",
              what: "A grocery list after a common base, edited on a laptop by Sam: adds \"Farmers market\", types \"oat \" before \"milk\" in \"Weekly shop\", deletes the note \"Hardware store\", tags \"Weekly shop\" `urgent`. Merges with the phone copy without any conflict."),
        Valid(file: "grocery-phone.peernote",
              what: "The same base edited on a phone by Jo: adds \"Bakery\", edits \"Weekly shop\" elsewhere (\" (a dozen)\" after eggs, removes the bread line, adds bananas at the end), replaces the tag `errands` of \"Pharmacy\" with `today` and makes it high priority."),
        Valid(file: "unrelated-a.peernote",
              what: "A notebook titled \"Notes\" (Alice). Unrelated to `unrelated-b.peernote`: same title, different document UUID; merging them is refused with `.unrelated(.differentDocuments)`."),
        Valid(file: "unrelated-b.peernote",
              what: "Another notebook titled \"Notes\" (Bob), with its own UUID."),
        Valid(file: "hi.peernote",
              what: "The smallest document: `Document(title: \"Hi\")` saved (fixed UUID, replica and time). The hex dump walk-through in `man/peernote.5` is this file."),
    ]

    static let damaged: [Damaged] = [
        Damaged(file: "damaged/truncated.peernote",
                what: "`meeting.peernote` cut in the middle: its first 679 of 1358 bytes.",
                offset: 10, message: "file is truncated or damaged: declared length 1340 exceeds the 666 bytes that remain"),
        Damaged(file: "damaged/bit-flipped.peernote",
                what: "`meeting.peernote` with one bit flipped inside the block payload (bit 0x10 of byte 683).",
                offset: 10, message: "checksum mismatch: block says 9d2f105d, contents give 51dd8d2f (the file is damaged)"),
        Damaged(file: "damaged/wrong-magic.peernote",
                what: "`meeting.peernote` whose first two bytes are `PK` instead of `D9 D9`.",
                offset: 0, message: "not a .peernote file (wrong magic bytes)"),
        Damaged(file: "damaged/bad-checksum.peernote",
                what: "`meeting.peernote`'s payload, intact, in an envelope whose CRC-32 field says `deadbeef`.",
                offset: 10, message: "checksum mismatch: block says deadbeef, contents give 9d2f105d (the file is damaged)"),
        Damaged(file: "damaged/huge-length.peernote",
                what: "`meeting.peernote` whose payload byte string head declares 2^60 bytes (`5B 10 00 00 00 00 00 00 00`). Must be rejected at once, without allocating.",
                offset: 10, message: "file is truncated or damaged: declared length 1152921504606846976 exceeds the 1345 bytes that remain"),
        Damaged(file: "damaged/deep-nesting.peernote",
                what: "`meeting.peernote`'s block with one more payload field (key 99) whose value nests arrays 10,000 deep; correct CRC.",
                offset: 1370, message: "nesting deeper than 16 levels"),
        Damaged(file: "damaged/invalid-utf8.peernote",
                what: "`meeting.peernote`'s block, correct CRC, whose string table holds the author name `Chlo\\xE9` (Latin-1, not UTF-8).",
                offset: 313, message: "text string is not valid UTF-8"),
        Damaged(file: "damaged/missing-dependency.peernote",
                what: "`meeting.peernote`'s block, correct CRC, whose last change (row 14) depends on a change 3 rows before the start of the file (a dependency distance of 17).",
                offset: 323, message: "change at row 14: dependency 17 rows back lies before the start of the file (missing dependency)"),
        Damaged(file: "damaged/unknown-note.peernote",
                what: "`meeting.peernote`'s block, correct CRC, whose last change (row 14) retitles a note that no op created (counter 9999 of its replica) instead of \"Agenda\".",
                offset: 0, message: "change at row 14: change 12@a11ce001 refers to op 9999@a11ce001, which does not exist"),
        Damaged(file: "damaged/not-cbor.peernote",
                what: "A plain text file.",
                offset: 0, message: "not a .peernote file (wrong magic bytes)"),
        Damaged(file: "damaged/empty.peernote",
                what: "Zero bytes.",
                offset: 0, message: "file is empty"),
        Damaged(file: "damaged/newer-version.peernote",
                what: "`meeting.peernote` with format version 4 in its envelope (payload and CRC intact).",
                offset: nil, message: "format version 4 is newer than this tool understands (it reads version 3); a newer version of the PeerNote tools reads it", newerVersion: 4),
    ]

    /// `Fixtures/` in this checkout.
    static var directory: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fixtures")
    }

    /// The bytes of a committed fixture.
    static func bytes(_ file: String) throws -> [UInt8] {
        Array(try Data(contentsOf: directory.appendingPathComponent(file)))
    }

    /// `Fixtures/README.md`.
    static func readme() -> String {
        var s = """
        # Fixtures

        Sample and damaged `.peernote` documents, made by the project's own code: \
        `Tests/PeerNoteTests/FixtureGeneration.swift` builds every file deterministically \
        (fixed document UUIDs, replica ids and clocks). `make fixtures` rewrites them; \
        `swift test` regenerates them in memory and fails if a committed file differs by \
        one byte, so a format change cannot slip in unnoticed. This README is generated \
        from `Tests/PeerNoteTests/FixtureCatalog.swift`, and `FixtureTests` checks that \
        each damaged file gives exactly the error listed here.

        ## Valid documents

        | File | What it is |
        |---|---|

        """
        for v in valid { s += "| `\(v.file)` | \(v.what) |\n" }
        s += """

        ## Damaged documents

        Each is rejected by `Document.load` (and by every tool that opens it) with the \
        offset and a message containing the text below; none may crash, hang or allocate \
        more than its size justifies.

        | File | What is wrong | Error from `Document.load` |
        |---|---|---|

        """
        for d in damaged { s += "| `\(d.file)` | \(d.what) | \(d.documentedError) |\n" }
        return s
    }
}
