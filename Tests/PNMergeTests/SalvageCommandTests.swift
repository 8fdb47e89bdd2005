import Foundation
import PeerNote
import PeerNoteCLISupport
import Testing
import TestSupport
@testable import PNMergeCommands

@Suite("pnmerge salvage")
struct SalvageCommandTests {
    /// Alice's copy saved three times incrementally (base block and two append blocks), with the
    /// offsets where the append blocks start.
    func threeBlocks() throws -> (bytes: [UInt8], secondBlock: Int, thirdBlock: Int, document: Document) {
        let s = try Diverged()
        let d = try Document.load(s.base.save())
        d.author = "alice"
        d.clock = { at(11, 0) }
        let base = d.save(.incremental).count
        d.addNote(title: "Second", body: "from the second block")
        let second = d.save(.incremental).count
        d.setTitle("Home (third block)")
        let bytes = d.save(.incremental)
        return (bytes, base, second, d)
    }

    @Test("A truncated file: OUT holds the intact blocks, the report gives byte ranges, counts and the notebook")
    func truncated() throws {
        let dir = try TempDir()
        let (bytes, second, third, _) = try threeBlocks()
        let cut = third + 20
        let damaged = try dir.write(Array(bytes[..<cut]), "damaged.peernote")
        let out = dir.path("out.peernote")
        let r = pnmerge(["salvage", damaged, "-o", out])
        #expect(r.status == 0, "\(r.err)")
        #expect(r.err.isEmpty)
        #expect(try dir.bytes("out.peernote") == Array(bytes[..<third]))
        #expect(try dir.bytes("damaged.peernote") == Array(bytes[..<cut]), "the input is never modified")
        #expect(r.out.contains("kept  bytes 0-\(second - 1) "), "\(r.out)")
        #expect(r.out.contains("kept  bytes \(second)-\(third - 1) "), "\(r.out)")
        #expect(r.out.contains("lost  bytes \(third)-\(cut - 1) "), "\(r.out)")
        #expect(r.out.contains("the block is cut short"))
        #expect(r.out.contains("an unknown number of changes in 20 damaged bytes"), "\(r.out)")
        #expect(r.out.contains("wrote \(out): \(third) bytes, notebook \"Home\": 5 notes (0 deleted), 0 conflicts"), "\(r.out)")
    }

    @Test("A corrupt middle block: the dropped changes are listed with their author and reason")
    func corruptMiddle() throws {
        let dir = try TempDir()
        var (bytes, second, third, _) = try threeBlocks()
        bytes[second + 30] ^= 0x40
        let damaged = try dir.write(bytes, "damaged.peernote")
        let r = pnmerge(["salvage", damaged, "-o", dir.path("out.peernote"), "--json"])
        #expect(r.status == 0, "\(r.err)")
        let json = try #require(try parseJSON(r.out) as? [String: Any])
        #expect(json["intact"] as? Bool == false)
        let regions = try #require(json["regions"] as? [[String: Any]])
        #expect(regions.map { $0["kind"] as? String } == ["base block", "damaged", "append block"])
        #expect(regions[1]["offset"] as? Int == second && regions[1]["length"] as? Int == third - second)
        let lost = try #require(json["lost"] as? [String: Any])
        #expect(lost["unreadableChanges"] as? Int == 1 && lost["unreadableChangesExact"] as? Bool == true)
        let dropped = try #require(lost["dropped"] as? [[String: Any]])
        #expect(dropped.count == 1 && dropped.first?["author"] as? String == "alice")
        #expect((dropped.first?["reason"] as? String)?.contains("damaged bytes") == true)
        let notebook = try #require(json["notebook"] as? [String: Any])
        #expect(notebook["title"] as? String == "Home" && notebook["notes"] as? Int == 4)
        #expect(try dir.bytes("out.peernote") == Array(bytes[..<second]))

        let text = pnmerge(["salvage", damaged, "-o", dir.path("out2.peernote")])
        #expect(text.out.contains("dropped 2@"), "\(text.out)")
        #expect(text.out.contains("1 intact change dropped because its history is incomplete (alice 1)"), "\(text.out)")
        #expect(text.out.contains("replicas that lost changes: "), "\(text.out)")
    }

    @Test("An intact file is copied unchanged")
    func intact() throws {
        let dir = try TempDir()
        let (bytes, _, _, _) = try threeBlocks()
        let input = try dir.write(bytes, "fine.peernote")
        let r = pnmerge(["salvage", input, "-o", dir.path("copy.peernote")])
        #expect(r.status == 0)
        #expect(r.out.contains("is intact") && r.out.contains("nothing was lost"), "\(r.out)")
        #expect(try dir.bytes("copy.peernote") == bytes)
    }

    @Test("Nothing recoverable: exit 65, one line naming the file, no OUT")
    func nothingRecoverable() throws {
        let dir = try TempDir()
        let input = try dir.write(Array("PK\u{3}\u{4} not a notebook".utf8), "zip.peernote")
        let r = pnmerge(["salvage", input, "-o", dir.path("out.peernote")])
        #expect(r.status == 65)
        #expect(r.err.hasPrefix("pnmerge: \(input): offset 0: nothing can be recovered"), "\(r.err)")
        #expect(r.err.split(separator: "\n").count == 1)
        #expect(r.out.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: dir.path("out.peernote")))
    }

    @Test("OUT must not exist (73), even when it is DAMAGED itself; a missing input is 66")
    func refusesToOverwrite() throws {
        let dir = try TempDir()
        let (bytes, second, _, _) = try threeBlocks()
        let damaged = try dir.write(Array(bytes[..<(second + 5)]), "damaged.peernote")
        let existing = try dir.write(Array("keep me".utf8), "existing.peernote")
        let r = pnmerge(["salvage", damaged, "-o", existing])
        #expect(r.status == 73 && r.err.contains("already exists"), "\(r.err)")
        #expect(try dir.bytes("existing.peernote") == Array("keep me".utf8))
        let same = pnmerge(["salvage", damaged, "-o", damaged])
        #expect(same.status == 73)
        #expect(try dir.bytes("damaged.peernote") == Array(bytes[..<(second + 5)]))
        let missing = pnmerge(["salvage", dir.path("missing.peernote"), "-o", dir.path("x.peernote")])
        #expect(missing.status == 66)
        #expect(!FileManager.default.fileExists(atPath: dir.path("x.peernote")))
        #expect(pnmerge(["salvage", damaged]).status == 64, "-o is required")
    }

    @Test("-o - writes the recovered document to standard output and the report to standard error; '-' reads standard input")
    func standardStreams() throws {
        let (bytes, second, _, _) = try threeBlocks()
        let r = pnmerge(["salvage", "-", "-o", "-"], input: Array(bytes[..<(second + 7)]))
        #expect(r.status == 0)
        #expect(r.outBytes == Array(bytes[..<second]))
        #expect(r.err.contains("salvage of <stdin>") && r.err.contains("wrote standard output"), "\(r.err)")
    }

    /// A notebook as `peernote` writes it: created, then one note added per session (each its
    /// own replica), each save appending a block. The file, and where its blocks start.
    func notebook(_ title: String, notes: [String]) throws -> (bytes: [UInt8], blocks: [Int], id: UUID) {
        let first = Document(title: title, author: "alice", time: at(9, 0))
        let grown = try adding(notes, to: first.save(.incremental))
        return (grown.bytes, [0] + grown.blocks, first.id)
    }

    /// `file` with one note added per session, each save appending a block; and where those blocks start.
    /// The `lost` object of `pnmerge salvage FILE -o OUT --json`.
    func lostJSON(_ file: String, to out: String) throws -> [String: Any] {
        let j = pnmerge(["salvage", file, "-o", out, "--json"])
        return try #require((try parseJSON(j.out) as? [String: Any])?["lost"] as? [String: Any], "\(j.out)\(j.err)")
    }

    func adding(_ notes: [String], to file: [UInt8]) throws -> (bytes: [UInt8], blocks: [Int]) {
        var bytes = file
        var blocks: [Int] = []
        for note in notes {
            let d = try Document.load(bytes)
            d.author = "alice"
            d.clock = { at(9, 5) }
            d.addNote(title: note)
            blocks.append(bytes.count)
            bytes = d.save(.incremental)
        }
        return (bytes, blocks)
    }

    @Test("Two notebooks glued together: the second is counted as lost, named, and the report says how to cut it out; text and --json")
    func twoNotebooks() throws {
        let dir = try TempDir()
        let work = try notebook("Work", notes: ["W1"])
        let home = try notebook("Home", notes: ["H1"])
        let both = try dir.write(work.bytes + home.bytes, "both.peernote")
        let start = work.bytes.count, end = work.bytes.count + home.bytes.count
        let r = pnmerge(["salvage", both, "-o", dir.path("out.peernote")])
        #expect(r.status == 0, "\(r.err)")
        #expect(try dir.bytes("out.peernote") == work.bytes)
        #expect(!r.out.contains("lost: nothing"), "\(r.out)")
        #expect(r.out.contains("lost: 2 intact changes of another notebook (\"Home\", id \(home.id.uuidString.lowercased())) at bytes \(start)-\(end - 1), left out (alice 2)"), "\(r.out)")
        #expect(r.out.contains("starts at offset \(start) (bytes \(start)-\(end - 1)) and is not in the output"), "\(r.out)")
        #expect(r.out.contains("tail -c +\(start + 1) \(both) > notebook-at-\(start).peernote"), "\(r.out)")
        #expect(!r.out.contains("does not belong to this document's history"), "\(r.out)")
        // What the report says to cut out is the second notebook, byte for byte.
        #expect(Array((work.bytes + home.bytes)[start...]) == home.bytes)

        let j = pnmerge(["salvage", both, "-o", dir.path("out2.peernote"), "--json"])
        let json = try #require(try parseJSON(j.out) as? [String: Any])
        let lost = try #require(json["lost"] as? [String: Any])
        #expect(lost["leftOutChanges"] as? Int == 2)
        let parts = try #require(lost["leftOut"] as? [[String: Any]])
        #expect(parts.count == 1)
        #expect(parts.first?["kind"] as? String == "other notebook")
        #expect(parts.first?["offset"] as? Int == start && parts.first?["length"] as? Int == home.bytes.count)
        #expect(parts.first?["document"] as? String == home.id.uuidString.lowercased())
        #expect(parts.first?["changes"] as? Int == 2 && parts.first?["alreadyRecovered"] as? Int == 0)
        let authors = try #require(parts.first?["authors"] as? [[String: Any]])
        #expect(authors.count == 1 && authors.first?["author"] as? String == "alice" && authors.first?["changes"] as? Int == 2)
        let alone = try #require(parts.first?["onItsOwn"] as? [String: Any])
        #expect(alone["title"] as? String == "Home" && alone["changes"] as? Int == 2 && alone["intact"] as? Bool == true)
    }

    @Test("A glued-on notebook's append blocks stay with it, even when their row numbers would fit after the first notebook's")
    func gluedAppendBlocksStayWithTheirNotebook() throws {
        let dir = try TempDir()
        let work = try notebook("Work", notes: ["W1"])
        let home = try notebook("Home", notes: ["H1", "H2"])   // its third block starts at row 2, as the glued file's next row
        let both = try dir.write(work.bytes + home.bytes, "both.peernote")
        let r = pnmerge(["salvage", both, "-o", dir.path("out.peernote"), "--json"])
        #expect(r.status == 0, "\(r.err)")
        #expect(try dir.bytes("out.peernote") == work.bytes)
        let json = try #require(try parseJSON(r.out) as? [String: Any])
        let lost = try #require(json["lost"] as? [String: Any])
        #expect(lost["leftOutChanges"] as? Int == 3)
        #expect((lost["dropped"] as? [Any])?.isEmpty == true, "none of Home's changes is taken for one of Work's: \(lost)")
        let regions = try #require(json["regions"] as? [[String: Any]])
        #expect(regions.map { $0["kept"] as? Int } == [1, 1, 0, 0, 0])
    }

    @Test("Two copies of one notebook glued together: the second copy's changes are in the output, so nothing is lost, and the report says it is a copy")
    func twoCopies() throws {
        let dir = try TempDir()
        let work = try notebook("Work", notes: ["W1"])
        let both = try dir.write(work.bytes + work.bytes, "both.peernote")
        let r = pnmerge(["salvage", both, "-o", dir.path("out.peernote")])
        #expect(r.status == 0, "\(r.err)")
        #expect(r.out.contains("lost: nothing\n"), "\(r.out)")
        #expect(r.out.contains("copy  bytes \(work.bytes.count)-"), "\(r.out)")
        #expect(r.out.contains("left out: it starts a second copy of this notebook; its change is already in the output"), "\(r.out)")
        #expect(!r.out.contains("does not belong to this document's history"), "\(r.out)")
        let lost = try lostJSON(both, to: dir.path("out2.peernote"))
        #expect(lost["leftOutChanges"] as? Int == 0)
        let parts = try #require(lost["leftOut"] as? [[String: Any]])
        #expect(parts.first?["kind"] as? String == "copy" && parts.first?["changes"] as? Int == 2 && parts.first?["alreadyRecovered"] as? Int == 2)

        // A newer copy glued after an older one: the change only it holds is counted, with how to merge it in.
        let newer = try adding(["W2"], to: work.bytes)
        let grown = try dir.write(work.bytes + newer.bytes, "grown.peernote")
        let g = pnmerge(["salvage", grown, "-o", dir.path("out3.peernote")])
        #expect(g.out.contains("lost: 1 intact change of a second copy of this notebook at bytes \(work.bytes.count)-"), "\(g.out)")
        #expect(g.out.contains("pnmerge merge \(dir.path("out3.peernote")) notebook-at-\(work.bytes.count).peernote"), "\(g.out)")
    }

    @Test("Append blocks dropped together are reported with the whole run's counts")
    func groupedDropCounts() throws {
        let dir = try TempDir()
        let file = try notebook("Damage", notes: ["1", "2", "3", "4", "5"])
        var bytes = file.bytes
        bytes[file.blocks[2] + 30] ^= 0xFF   // the third block: the three after it depend on it
        let damaged = try dir.write(bytes, "damaged.peernote")
        let r = pnmerge(["salvage", damaged, "-o", dir.path("out.peernote")])
        #expect(r.out.contains("lost  bytes \(file.blocks[3])-\(bytes.count - 1) "), "\(r.out)")
        #expect(r.out.contains("3 append blocks, 0 of 3 changes recovered: 3 of their 3 changes were dropped (their history is incomplete)"), "\(r.out)")
        let j = pnmerge(["salvage", damaged, "-o", dir.path("out2.peernote"), "--json"])
        let regions = try #require((try parseJSON(j.out) as? [String: Any])?["regions"] as? [[String: Any]])
        #expect(regions.suffix(3).allSatisfy { $0["problem"] as? String == "1 of its 1 change was dropped (its history is incomplete)" }, "\(regions)")
    }

    @Test("A block that cannot be used because of another change of its block names that change first, in one sentence")
    func culpritNamedFirst() throws {
        let fixture = Binary.packageRoot.appendingPathComponent("Fixtures/damaged/unknown-note.peernote").path
        let dir = try TempDir()
        let r = pnmerge(["salvage", fixture, "-o", dir.path("out.peernote")])
        #expect(r.status == 65)
        let line = r.err
        #expect(line.contains("nothing can be recovered: the change at row 14 (12@a11ce001) cannot be used, because its ops do not apply"), "\(line)")
        #expect(line.components(separatedBy: "its ops do not apply").count == 2, "said once: \(line)")
        #expect(line.contains("an op edits note 9999@a11ce001, which does not exist"), "\(line)")
        #expect(line.contains("the document's first change cannot be used either"), "\(line)")
        #expect(line.split(separator: "\n").count == 1)
    }

    @Test("A block cut short gives the offset where it is cut, the one validate gives")
    func cutShortOffset() throws {
        let dir = try TempDir()
        let file = try notebook("Cut", notes: ["a", "b"])
        let damaged = try dir.write(Array(file.bytes.dropLast(20)), "cut.peernote")
        let v = pnmerge(["validate", damaged])
        let said = v.out + v.err
        let offset = said[try #require(said.range(of: ": offset "), "\(said)").upperBound...].prefix { $0.isNumber }
        #expect(!offset.isEmpty && Int(offset) != file.blocks[2], "validate names the place inside the block: \(said)")
        let r = pnmerge(["salvage", damaged, "-o", dir.path("out.peernote")])
        #expect(r.out.contains("block at offset \(file.blocks[2]): the block is cut short: "), "\(r.out)")
        #expect(r.out.contains("that remain (at offset \(offset))"), "validate says \(said); salvage says \(r.out)")
    }

    @Test("Trailing bytes that cannot hold a block are not counted as lost changes; a block cut short still is")
    func trailingJunk() throws {
        let dir = try TempDir()
        let file = try notebook("Junk", notes: ["a"])
        let junk = try dir.write(file.bytes + Array("hello junk\n".utf8), "junk.peernote")
        let r = pnmerge(["salvage", junk, "-o", dir.path("out.peernote")])
        #expect(r.status == 0)
        #expect(try dir.bytes("out.peernote") == file.bytes)
        #expect(r.out.contains("lost: 11 bytes of trailing data that hold no block; no change lost\n"), "\(r.out)")
        #expect(!r.out.contains("unknown number"), "\(r.out)")
        let j = pnmerge(["salvage", junk, "-o", dir.path("out2.peernote"), "--json"])
        let json = try #require(try parseJSON(j.out) as? [String: Any])
        let lost = try #require(json["lost"] as? [String: Any])
        #expect(lost["bytesWithoutChanges"] as? Int == 11 && lost["unreadableChangesExact"] as? Bool == true)
        let last = try #require((json["regions"] as? [[String: Any]])?.last)
        #expect(last["kind"] as? String == "damaged" && last["changes"] as? Int == 0)

        // The first bytes of a block (its magic, even part of it) may be what is left of a block cut short: not junk.
        let more = try notebook("Junk", notes: ["a", "b"])
        for keep in [3, 11] {
            let cut = try dir.write(Array(more.bytes[..<(more.blocks[2] + keep)]), "cut\(keep).peernote")
            let c = pnmerge(["salvage", cut, "-o", dir.path("cut\(keep).out")])
            #expect(c.out.contains("an unknown number of changes in \(keep) damaged bytes"), "\(keep): \(c.out)")
        }
        // A block whose magic was hit keeps its length: not junk either.
        var hit = more.bytes
        hit[more.blocks[2]] ^= 0xFF
        let h = pnmerge(["salvage", try dir.write(hit, "hit.peernote"), "-o", dir.path("hit.out")])
        #expect(h.out.contains("an unknown number of changes in \(hit.count - more.blocks[2]) damaged bytes"), "\(h.out)")
    }

    /// `bytes` with the byte at `offset` flipped.
    func hit(_ bytes: [UInt8], at offset: Int) -> [UInt8] {
        var b = bytes
        b[offset] ^= 0xFF
        return b
    }

    @Test("A damaged first base block of an older copy glued before a newer one: its append blocks are a copy, and nothing is counted lost; text and --json")
    func damagedEarlierCopy() throws {
        let dir = try TempDir()
        let work = try notebook("Work", notes: ["W1", "W2"])
        let newer = try adding(["W3"], to: work.bytes)
        let file = try dir.write(hit(work.bytes + newer.bytes, at: 60), "a.peernote")
        let r = pnmerge(["salvage", file, "-o", dir.path("a.out")])
        #expect(r.status == 0, "\(r.err)")
        #expect(try Document.load(dir.bytes("a.out")).changeCount == 4)
        #expect(r.out.contains("copy  bytes 0-\(work.blocks[1] - 1) "), "\(r.out)")
        #expect(r.out.contains("copy  bytes \(work.blocks[1])-\(work.bytes.count - 1) "), "\(r.out)")
        #expect(r.out.contains("their 2 changes are already in the output"), "\(r.out)")
        #expect(r.out.contains("lost: nothing\n"), "\(r.out)")
        #expect(r.out.contains("it starts with an earlier copy of this notebook whose base block is lost; the recovered notebook starts at offset \(work.bytes.count)"), "\(r.out)")
        let lost = try lostJSON(file, to: dir.path("a2.out"))
        #expect(lost["leftOutChanges"] as? Int == 0 && lost["unreadableChanges"] as? Int == 0 && lost["unreadableChangesExact"] as? Bool == true, "\(lost)")
        #expect(lost["start"] as? String == "earlier copy" && lost["baseOffset"] as? Int == work.bytes.count, "\(lost)")
        let parts = try #require(lost["leftOut"] as? [[String: Any]])
        #expect(parts.first?["changes"] as? Int == 2 && parts.first?["alreadyRecovered"] as? Int == 2, "\(parts)")
    }

    @Test("A damaged first base block before another notebook: the loss is at least its rows, and the report says the output may be another notebook; text and --json")
    func damagedStartBeforeAnotherNotebook() throws {
        let dir = try TempDir()
        let work = try notebook("Work", notes: ["W1", "W2"])
        let home = try notebook("Home", notes: ["H1"])
        let file = try dir.write(hit(work.bytes + home.bytes, at: 60), "b.peernote")
        let r = pnmerge(["salvage", file, "-o", dir.path("b.out")])
        #expect(r.status == 0, "\(r.err)")
        #expect(!r.out.contains("0 changes in"), "\(r.out)")
        #expect(r.out.contains("lost: at least 1 change in \(work.blocks[1]) damaged bytes (authors unknown); damaged bytes before the base block at offset \(work.bytes.count)"), "\(r.out)")
        #expect(r.out.contains("2 intact changes in append blocks at bytes \(work.blocks[1])-\(work.bytes.count - 1) whose base block is lost"), "\(r.out)")
        #expect(r.out.contains("the file does not start with the recovered notebook"), "\(r.out)")
        #expect(r.out.contains("so the output may be a different notebook"), "\(r.out)")
        let lost = try lostJSON(file, to: dir.path("b2.out"))
        #expect(lost["unreadableChanges"] as? Int == 1 && lost["unreadableChangesExact"] as? Bool == false, "\(lost)")
        #expect(lost["uncounted"] as? [String] == ["damaged bytes come before the base block"], "\(lost)")
        #expect(lost["start"] as? String == "unknown notebook" && lost["leftOutChanges"] as? Int == 2, "\(lost)")
    }

    /// Runs each command of a `to get it back:` line in `dir`, with the built pnmerge first on PATH.
    func runHint(_ out: String, in dir: TempDir) throws {
        _ = try Binary.require()
        let line = try #require(out.split(separator: "\n").first { $0.contains("back: ") }, "\(out)")
        let commands = try #require(line.components(separatedBy: "back: ").last).components(separatedBy: ", then ")
        try #require(commands.count >= 2, "\(line)")
        for command in commands {
            let r = try shell(#"cd "$1" && PATH="$2:$PATH" && "#+command, ["sh", dir.url.path, URL(fileURLWithPath: Binary.path).deletingLastPathComponent().path])
            #expect(r.status == 0, "\(command): \(String(decoding: r.err, as: UTF8.self))")
        }
    }

    @Test("Each command the report prints to get a left-out notebook or copy back runs as printed")
    func printedCommandsRun() throws {
        let dir = try TempDir()
        let work = try notebook("Work", notes: ["W1", "W2"])
        let home = try notebook("Home", notes: ["H1"])
        // Home's append block is damaged: it must be salvaged on its own.
        let d = try dir.write(hit(work.bytes + home.bytes, at: work.bytes.count + home.blocks[1] + 60), "d.peernote")
        let r = pnmerge(["salvage", d, "-o", dir.path("d.out")])
        #expect(r.out.contains("then pnmerge salvage notebook-at-\(work.bytes.count).peernote -o notebook-at-\(work.bytes.count)-salvaged.peernote"), "\(r.out)")
        try runHint(r.out, in: dir)
        #expect(try Document.load(dir.bytes("notebook-at-\(work.bytes.count)-salvaged.peernote")).title == "Home")

        // A newer copy whose last block is damaged: cut, salvage, then merge into the output.
        let copies = try TempDir()
        let newer = try adding(["W3", "W4"], to: work.bytes)
        let e = try copies.write(hit(work.bytes + newer.bytes, at: work.bytes.count + newer.blocks[1] + 60), "e.peernote")
        let c = pnmerge(["salvage", e, "-o", copies.path("e.out")])
        #expect(c.out.contains("pnmerge merge \(copies.path("e.out")) notebook-at-\(work.bytes.count)-salvaged.peernote"), "\(c.out)")
        try runHint(c.out, in: copies)
        #expect(try Document.load(copies.bytes("e.out")).changeCount == 4, "W3 is merged back in")

        // With -o -, nothing in the hint reads as a file name for the output.
        let s = pnmerge(["salvage", e, "-o", "-"])
        #expect(!s.err.contains("'the output'") && !s.err.contains("pnmerge merge -"), "\(s.err)")
        #expect(s.err.contains("then save what salvage wrote to standard output as a file and merge notebook-at-\(work.bytes.count)-salvaged.peernote into that file with pnmerge merge"), "\(s.err)")
    }

    @Test("Damaged bytes followed by other blocks are not called the end of the file, and a left-out notebook's damage is not the output's; text and --json")
    func damageNotAtTheEnd() throws {
        let dir = try TempDir()
        let work = try notebook("Work", notes: ["W1", "W2"])
        let home = try notebook("Home", notes: ["H1"])
        let e = try dir.write(hit(work.bytes + home.bytes + work.bytes, at: work.bytes.count + 62), "e.peernote")
        let r = pnmerge(["salvage", e, "-o", dir.path("e.out")])
        #expect(!r.out.contains("the file ends inside damaged bytes"), "\(r.out)")
        #expect(r.out.contains("an unknown number of changes in \(home.blocks[1]) damaged bytes (authors unknown); no later block of this notebook follows them"), "\(r.out)")
        let lost = try lostJSON(e, to: dir.path("e2.out"))
        #expect(lost["uncounted"] as? [String] == ["no later block of this notebook follows damaged bytes"] && lost["unreadableChangesExact"] as? Bool == false, "\(lost)")

        // Only the glued-on notebook's append block is damaged: that is its loss, counted with it.
        let d = try dir.write(hit(work.bytes + home.bytes, at: work.bytes.count + home.blocks[1] + 60), "d.peernote")
        let t = pnmerge(["salvage", d, "-o", dir.path("d.out")])
        #expect(t.out.contains("lost: 1 intact change of another notebook"), "\(t.out)")
        #expect(!t.out.contains("damaged bytes (authors unknown)"), "\(t.out)")
        let dj = pnmerge(["salvage", d, "-o", dir.path("d2.out"), "--json"])
        let dlost = try #require((try parseJSON(dj.out) as? [String: Any])?["lost"] as? [String: Any])
        #expect(dlost["unreadableChangesExact"] as? Bool == true && (dlost["uncounted"] as? [String])?.isEmpty == true, "\(dlost)")
    }

    @Test("Wording: counts agree with their nouns and verbs")
    func wordingAgrees() throws {
        let dir = try TempDir()
        let work = try notebook("Work", notes: ["W1", "W2"])
        let twice = pnmerge(["salvage", try dir.write(work.bytes + work.bytes, "twice.peernote"), "-o", dir.path("twice.out")])
        #expect(twice.out.contains("copy  bytes \(work.bytes.count + work.blocks[1])-\(2 * work.bytes.count - 1) "), "\(twice.out)")
        #expect(twice.out.contains("2 append blocks, 0 of 2 changes recovered: left out: part of the copy of this notebook that starts at offset \(work.bytes.count); their 2 changes are already in the output"), "\(twice.out)")
        let one = pnmerge(["salvage", try dir.write(work.bytes + [0x00], "one.peernote"), "-o", dir.path("one.out")])
        #expect(one.out.contains("lost: 1 byte of trailing data that holds no block; no change lost\n"), "\(one.out)")
        let middle = pnmerge(["salvage", try dir.write(hit(work.bytes, at: work.blocks[1] + 60), "middle.peernote"), "-o", dir.path("middle.out")])
        #expect(middle.out.contains("1 intact change dropped because its history is incomplete"), "\(middle.out)")
    }

    @Test("The built binary salvages a damaged fixture end to end")
    func binary() throws {
        let bin = try Binary.require()
        let dir = try TempDir()
        let fixture = Binary.packageRoot.appendingPathComponent("Fixtures/meeting-appended.peernote").path
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: fixture)))
        let damaged = try dir.write(Array(bytes.dropLast(3)), "damaged.peernote")
        let r = try bin.run(["salvage", damaged, "-o", dir.path("out.peernote")])
        #expect(r.status == 0, "\(r.err)")
        #expect(try bin.run(["validate", dir.path("out.peernote")]).status == 0)
        #expect(r.out.contains("recovered: "))
    }
}
