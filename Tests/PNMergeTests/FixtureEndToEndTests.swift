import Foundation
import Testing
import TestSupport

/// The built binary on the bundled `Fixtures/`, as the pnmerge issue asks.
@Suite("pnmerge binary on Fixtures/")
struct FixtureEndToEndTests {
    static let fixtures = Binary.packageRoot.appendingPathComponent("Fixtures")

    /// Copies fixtures into a temporary directory (the originals are never written).
    func copies(_ names: [String]) throws -> (TempDir, [String]) {
        let dir = try TempDir()
        var paths: [String] = []
        for n in names {
            let bytes = try Data(contentsOf: Self.fixtures.appendingPathComponent(n))
            paths.append(try dir.write(Array(bytes), n))
        }
        return (dir, paths)
    }

    @Test("Each diverged pair merges to the same notebook in both orders; merging again changes nothing",
          arguments: [("grocery-laptop.peernote", "grocery-phone.peernote"), ("meeting-alice.peernote", "meeting-bob.peernote")])
    func divergedPairs(a: String, b: String) throws {
        let bin = try Binary.require()
        let (dir, paths) = try copies([a, b])
        let ab = dir.path("ab.peernote"), ba = dir.path("ba.peernote")
        let r1 = try bin.run(["merge", paths[0], paths[1], "-o", ab])
        let r2 = try bin.run(["merge", paths[1], paths[0], "-o", ba])
        #expect(r1.status == 0, "\(r1.err)")
        #expect(r2.status == 0, "\(r2.err)")
        let showAB = try bin.run(["show", "--format", "json", ab])
        let showBA = try bin.run(["show", "--format", "json", ba])
        #expect(showAB.status == 0 && !showAB.out.isEmpty)
        #expect(showAB.out == showBA.out)
        // Merging again (in place) is a success that writes nothing.
        let before = try dir.bytes("ab.peernote")
        let again = try bin.run(["merge", ab, paths[1]])
        #expect(again.status == 0)
        #expect(again.out.contains("up to date"))
        #expect(try dir.bytes("ab.peernote") == before)
    }

    @Test("README.md's sample merge prints what the README shows, byte for byte")
    func readmeSampleMerge() throws {
        _ = try Binary.require()
        let readme = try String(contentsOf: Binary.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let command = "$ pnmerge merge Fixtures/meeting-alice.peernote Fixtures/meeting-bob.peernote -o meeting.peernote\n"
        let start = try #require(readme.range(of: command), "README.md no longer shows the sample merge")
        let end = try #require(readme[start.upperBound...].range(of: "```\n"))
        let shown = String(readme[start.upperBound ..< end.lowerBound])
        // The same command, in a folder laid out as the repository is (the originals are never written).
        let dir = try TempDir()
        try FileManager.default.createDirectory(atPath: dir.path("Fixtures"), withIntermediateDirectories: true)
        for n in ["meeting-alice.peernote", "meeting-bob.peernote"] {
            _ = try dir.write(Array(try Data(contentsOf: Self.fixtures.appendingPathComponent(n))), "Fixtures/" + n)
        }
        var env = ProcessInfo.processInfo.environment
        env["TZ"] = "UTC"
        env["NO_COLOR"] = "1"
        let r = try Command.run(Binary.path, ["merge", "Fixtures/meeting-alice.peernote", "Fixtures/meeting-bob.peernote", "-o", "meeting.peernote"],
                                in: dir.url.path, environment: env)
        #expect(r.status == 0, "\(r.err)")
        #expect(r.out == shown)
    }

    @Test("The unrelated pair is refused with exit 2 and nothing written")
    func unrelatedPair() throws {
        let bin = try Binary.require()
        let (dir, paths) = try copies(["unrelated-a.peernote", "unrelated-b.peernote"])
        let a = try dir.bytes("unrelated-a.peernote"), b = try dir.bytes("unrelated-b.peernote")
        let r = try bin.run(["merge", paths[0], paths[1]])
        #expect(r.status == 2)
        #expect(r.err.contains("unrelated-a.peernote") && r.err.contains("unrelated-b.peernote"))
        #expect(try dir.bytes("unrelated-a.peernote") == a)
        #expect(try dir.bytes("unrelated-b.peernote") == b)
        let out = dir.path("out.peernote")
        #expect(try bin.run(["merge", paths[0], paths[1], "-o", out]).status == 2)
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    /// The table in Fixtures/README.md: file → documented error text.
    static func documentedErrors() throws -> [(file: String, offset: String?, message: String)] {
        let text = try String(contentsOf: fixtures.appendingPathComponent("README.md"), encoding: .utf8)
        var out: [(String, String?, String)] = []
        for line in text.split(separator: "\n") where line.hasPrefix("| `damaged/") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 3, let q1 = cells[2].firstIndex(of: "\""), let q2 = cells[2].lastIndex(of: "\""), q1 < q2 else { continue }
            let file = cells[0].trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            let message = String(cells[2][cells[2].index(after: q1) ..< q2])
            let offset = cells[2].hasPrefix("offset ") ? String(cells[2].dropFirst(7).prefix { $0.isNumber }) : nil
            out.append((file, offset, message))
        }
        return out
    }

    @Test("A write without an author shows as <no author>, inside the parentheses that hold its time (not '((no author), 09:00)')")
    func noAuthor() throws {
        let bin = try Binary.require()
        let r = try bin.run(["show", Self.fixtures.appendingPathComponent("fuzz/register-flood.peernote").path])
        #expect(r.status == 0, "\(r.err)")
        #expect(r.out.contains("notebook: title \"Flood\" (<no author>, 09:00) vs \"t\" (<no author>, 09:00), showing \"t\""), "\(r.out)")
        #expect(!r.out.contains("(("), "\(r.out)")
    }

    @Test("validate rejects every damaged fixture with its documented error")
    func damaged() throws {
        let bin = try Binary.require()
        let documented = try Self.documentedErrors()
        #expect(documented.count >= 12)
        for (file, offset, message) in documented {
            let path = Self.fixtures.appendingPathComponent(file).path
            let r = try bin.run(["validate", path])
            #expect(r.status == 65, "\(file): exit \(r.status)")
            let expectedLine = offset.map { "\(path): offset \($0): \(message)" } ?? "\(path): \(message)"
            #expect(r.err.split(separator: "\n").map(String.init).contains(expectedLine), "\(file): got \(r.err)")
        }
    }
}
