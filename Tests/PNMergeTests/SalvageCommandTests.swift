import Foundation
import PeerNote
import Testing
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
        #expect(text.out.contains("1 intact change dropped because their history is incomplete (alice 1)"), "\(text.out)")
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
