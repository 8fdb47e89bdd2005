import Foundation
import PeerNote
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Notebook folders through the built tools: every peernote command and every pnmerge command
/// that reads or writes a `.peernote` file takes a folder, and a writer killed at any moment
/// leaves a folder that reads as before or after its write.
@Suite("Notebook folders through the tools", .serialized)
struct NotebookFolderToolTests {
    static var environment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        for key in ["VISUAL", "EDITOR", "NO_COLOR", "PEERNOTE_DEVICE"] { env.removeValue(forKey: key) }
        env["PEERNOTE_AUTHOR"] = "tester"
        env["NO_COLOR"] = "1"
        return env
    }

    static func peernote(_ args: [String], in dir: TempDir) throws -> RunResult {
        try Tool.peernote.run(args, in: dir.path, environment: environment)
    }

    static func pnmerge(_ args: [String], in dir: TempDir) throws -> RunResult {
        try Tool.pnmerge.run(args, in: dir.path, environment: environment)
    }

    static func chunks(_ path: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasSuffix(".pnchunk") && !$0.hasPrefix(".") }.sorted()
    }

    static func titles(_ path: String) throws -> [String] { try Document.open(path).notes.map(\.title) }

    @Test("every peernote command works on a notebook folder, each edit adding one chunk")
    func peernoteCommands() throws {
        let dir = try TempDir()
        let folder = dir.path("Trip.peernote")
        var r = try Self.peernote(["new", "Trip.peernote", "--folder", "--title", "Trip"], in: dir)
        #expect(r.status == 0, "\(r.err)")
        #expect(try Self.chunks(folder).count == 1)
        r = try Self.peernote(["add", "Trip.peernote", "--title", "Packing", "--tag", "todo", "--body", "passport\ncharger"], in: dir)
        #expect(r.status == 0, "\(r.err)")
        // Named as a shell completes a folder, with a '/'.
        r = try Self.peernote(["add", "Trip.peernote/", "--title", "Flights", "--at", "0"], in: dir)
        #expect(r.status == 0, "\(r.err)")
        #expect(try Self.chunks(folder).count == 3)
        for args in [["edit", "Trip.peernote", "Packing", "--add-tag", "urgent"], ["move", "Trip.peernote", "Packing", "--to", "0"],
                     ["title", "Trip.peernote", "Lisbon"], ["rm", "Trip.peernote", "Flights"], ["restore", "Trip.peernote", "Flights"]] {
            r = try Self.peernote(args, in: dir)
            #expect(r.status == 0, "\(args): \(r.err)")
        }
        #expect(try Self.chunks(folder).count == 8)
        let d = try Document.open(folder)
        #expect(d.title == "Lisbon")
        #expect(d.notes.map(\.title) == ["Packing", "Flights"])
        #expect(d.notes.first?.tags.sorted() == ["todo", "urgent"])
        for (args, expected) in [(["list", "Trip.peernote"], "Packing"), (["show", "Trip.peernote", "Packing"], "charger"),
                                 (["search", "Trip.peernote", "charger"], "charger"), (["log", "Trip.peernote", "Packing"], "tester"),
                                 (["blame", "Trip.peernote", "Packing"], "passport"), (["export", "Trip.peernote"], "Packing"),
                                 (["conflicts", "Trip.peernote"], "")] {
            r = try Self.peernote(args, in: dir)
            #expect(r.status == 0, "\(args): \(r.err)")
            #expect(expected.isEmpty || r.out.contains(expected), "\(args): \(r.out)")
            #expect(r.err.isEmpty || args[0] == "conflicts", "\(args): \(r.err)")
        }
        // `new --folder` refuses what exists, and a name that is not NAME.peernote.
        #expect(try Self.peernote(["new", "Trip.peernote", "--folder"], in: dir).status == 73)
        #expect(try Self.peernote(["new", "Trip", "--folder"], in: dir).status == 64)
    }

    @Test("pnmerge validate, inspect, show, log, diff, merge into and from, compact, convert and salvage take a folder")
    func pnmergeCommands() throws {
        let dir = try TempDir()
        let folder = dir.path("Trip.peernote")
        #expect(try Self.peernote(["new", "Trip.peernote", "--folder", "--title", "Trip"], in: dir).status == 0)
        #expect(try Self.peernote(["add", "Trip.peernote", "--title", "Packing"], in: dir).status == 0)
        // Folder into a file, and the file edited on its own.
        var r = try Self.pnmerge(["convert", "Trip.peernote", "trip.peernote"], in: dir)
        #expect(r.status == 0, "\(r.err)")
        #expect(try Self.titles(dir.path("trip.peernote")) == ["Packing"])
        #expect(try Self.peernote(["add", "trip.peernote", "--title", "From the file"], in: dir).status == 0)
        for (args, expected) in [(["validate", "Trip.peernote/"], "valid"), (["inspect", "Trip.peernote"], "Trip"),
                                 (["show", "Trip.peernote"], "Packing"), (["log", "Trip.peernote"], "tester"),
                                 (["diff", "Trip.peernote", "trip.peernote"], "From the file")] {
            r = try Self.pnmerge(args, in: dir)
            #expect(r.status == 0, "\(args): \(r.err)")
            #expect(r.out.contains(expected), "\(args): \(r.out)")
        }
        // Merge into the folder: one chunk more, nothing replaced.
        let before = try Self.chunks(folder)
        r = try Self.pnmerge(["merge", "Trip.peernote", "trip.peernote"], in: dir)
        #expect(r.status == 0, "\(r.err)")
        let after = try Self.chunks(folder)
        #expect(after.count == before.count + 1 && Set(before).isSubset(of: after))
        #expect(try Self.titles(folder) == ["Packing", "From the file"])
        // Merge from the folder into a file.
        #expect(try Self.peernote(["add", "Trip.peernote", "--title", "In the folder"], in: dir).status == 0)
        r = try Self.pnmerge(["merge", "trip.peernote", "Trip.peernote"], in: dir)
        #expect(r.status == 0, "\(r.err)")
        #expect(try Self.titles(dir.path("trip.peernote")) == ["Packing", "From the file", "In the folder"])
        // A file into a new folder; an unrelated file is refused.
        r = try Self.pnmerge(["convert", "trip.peernote", "Copy.peernote"], in: dir)
        #expect(r.status == 0, "\(r.err)")
        #expect(try Self.titles(dir.path("Copy.peernote")) == ["Packing", "From the file", "In the folder"])
        try dir.write(Document(title: "Other").save(), "other.peernote")
        #expect(try Self.pnmerge(["convert", "other.peernote", "Copy.peernote"], in: dir).status == 2)
        // Compact: one root, the old chunks removed once the grace period (0 here) is over.
        r = try Self.pnmerge(["compact", "Trip.peernote", "--grace", "0"], in: dir)
        #expect(r.status == 0, "\(r.err)")
        #expect(try Self.chunks(folder).count == 1)
        #expect(try Self.titles(folder) == ["Packing", "From the file", "In the folder"])
        // With the default grace period, a new root is written and nothing removed yet.
        #expect(try Self.peernote(["add", "Trip.peernote", "--title", "Later"], in: dir).status == 0)
        r = try Self.pnmerge(["compact", "Trip.peernote"], in: dir)
        #expect(r.status == 0 && r.out.contains("removed 0 chunks"), "\(r.out)")
        #expect(try Self.chunks(folder).count == 3)
        // A damaged chunk: validate says so (65), reading goes on without it, salvage recovers
        // what is intact of it.
        let beforeCut = Set(try Self.chunks(folder))
        #expect(try Self.peernote(["add", "Trip.peernote", "--title", "Cut", "--body", String(repeating: "text ", count: 400)], in: dir).status == 0)
        let added = Set(try Self.chunks(folder)).subtracting(beforeCut)
        #expect(added.count == 1)
        let newest = try #require(added.first)
        let bytes = try dir.bytes("Trip.peernote/\(newest)")
        try dir.write(Array(bytes.prefix(bytes.count - 40)), "Trip.peernote/\(newest)")
        r = try Self.pnmerge(["validate", "Trip.peernote"], in: dir)
        #expect(r.status == 65 && r.err.contains(newest), "\(r.err)")
        r = try Self.peernote(["list", "Trip.peernote"], in: dir)
        #expect(r.status == 0 && !r.out.contains("Cut") && r.err.contains("pnmerge salvage"), "\(r.err)")
        #expect(r.err.contains("pnmerge salvage Trip.peernote/\(newest) -o OUT"), "\(r.err)")
        r = try Self.pnmerge(["salvage", "Trip.peernote", "-o", "rescued.peernote"], in: dir)
        #expect(r.status == 0, "\(r.err)")
        #expect(try Self.titles(dir.path("rescued.peernote")).contains("Later"))
        r = try Self.pnmerge(["salvage", "Trip.peernote/\(newest)", "-o", "rescued2.peernote"], in: dir)
        #expect(r.status == 0, "\(r.err)")
        #expect(try dir.bytes("rescued2.peernote") == dir.bytes("rescued.peernote"))
        #expect(FileManager.default.fileExists(atPath: folder + "/" + newest))
    }

    @Test("peernote add on a folder killed at random moments leaves it reading as before or after")
    func killWriter() throws {
        let dir = try TempDir()
        let folder = dir.path("Big.peernote")
        let big = Document(title: "Big", author: "tester")
        for i in 0 ..< 60 { big.addNote(title: "Note \(i)", body: String(repeating: "line \(i) of a note\n", count: 200)) }
        try NotebookFolder.create(at: folder, big)
        let bin = try Tool.peernote.require().path
        var generator = SystemRandomNumberGenerator()
        // A body that does not compress, so that the chunk takes a while to write.
        var x: UInt64 = 0x9E37_79B9_7F4A_7C15
        let body = String((0 ..< 800_000).map { i -> Character in
            x ^= x << 13; x ^= x >> 7; x ^= x << 17
            return i % 70 == 69 ? "\n" : Character(Unicode.Scalar(UInt8(33 + x % 90)))
        })
        let bodyFile = try dir.write("body.txt", body)
        let start = Date()
        #expect(try Self.peernote(["add", "Big.peernote", "--title", "Timing", "--body-file", "body.txt"], in: dir).status == 0)
        let full = Date().timeIntervalSince(start)
        var killed = 0
        for run in 0 ..< 8 {
            let before = Set(try Self.titles(folder))
            let listed = Set(try FileManager.default.contentsOfDirectory(atPath: folder))
            let title = "Run \(run)"
            let process = Process()
            process.executableURL = URL(fileURLWithPath: bin)
            process.arguments = ["add", folder, "--title", title, "--body-file", bodyFile]
            process.environment = Self.environment
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            let deadline = Date().addingTimeInterval(run % 2 == 0 ? Double.random(in: 0 ... full * 1.1, using: &generator) : 120)
            while process.isRunning && Date() < deadline {
                // Odd runs: the moment a new file (the temporary chunk) appears, plus up to 3 ms.
                if run % 2 == 1, let names = try? FileManager.default.contentsOfDirectory(atPath: folder), !Set(names).subtracting(listed).isEmpty {
                    usleep(useconds_t.random(in: 0 ... 3_000, using: &generator))
                    break
                }
                usleep(100)
            }
            if process.isRunning && kill(process.processIdentifier, SIGKILL) == 0 { killed += 1 }
            process.waitUntilExit()
            let reading = try NotebookFolder(folder).read()
            #expect(reading.warnings.isEmpty, "\(reading.warnings)")
            let now = Set(reading.document.notes.map(\.title))
            #expect(now == before || now == before.union([title]), "run \(run): neither before nor after the write")
        }
        #expect(killed > 0)
    }
}
