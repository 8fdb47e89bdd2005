import Foundation
import PeerNote
import PeerNoteCLISupport
import Testing
import TestSupport

/// Runs the built `pnmerge` binary (`swift build` puts it in `.build/debug/pnmerge`).
struct Binary {
    static let packageRoot = Tool.packageRoot
    static let path = Tool.pnmerge.path

    /// The binary, or a test failure that says how to build it.
    static func require() throws -> Binary {
        _ = try Tool.pnmerge.require()
        return Binary()
    }

    /// Runs `pnmerge ARGS` with `TZ=UTC` and `NO_COLOR=1`, reading `stdin` (empty when nil) from a file.
    func run(_ args: [String], stdin: [UInt8]? = nil) throws -> RunResult {
        var env = ProcessInfo.processInfo.environment
        env["TZ"] = "UTC"
        env["NO_COLOR"] = "1"
        return try Tool.pnmerge.run(args, environment: env, stdin: .file(stdin ?? []))
    }
}

extension Binary {
    /// Starts `pnmerge ARGS` in the background, output discarded.
    func start(_ args: [String]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Binary.path)
        process.arguments = args
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return process
    }

    #if os(Linux)
    /// Waits (up to 30 s) until `process` has the lock file of `target` open: with the lock held
    /// elsewhere, it is then waiting for it. (Compared by device and inode: the path may be
    /// spelled differently, through a symbolic link or with a trailing slash in PEERNOTE_LOCK_DIR.)
    func waitUntilWaiting(_ process: Process, forLockOf target: String) throws {
        let lockPath = FileLock.lockFile(for: target)
        var lockFile = stat()
        try #require(stat(lockPath, &lockFile) == 0, "no lock file at \(lockPath)")
        var waiting = false
        for _ in 0 ..< 3_000 where !waiting {
            let fdDir = "/proc/\(process.processIdentifier)/fd"
            let fds = (try? FileManager.default.contentsOfDirectory(atPath: fdDir)) ?? []
            waiting = fds.contains { fd in
                var open = stat()
                return stat(fdDir + "/" + fd, &open) == 0 && open.st_dev == lockFile.st_dev && open.st_ino == lockFile.st_ino
            }
            if !waiting { usleep(10_000) }
        }
        try #require(waiting, "\(process.arguments ?? []) never opened the lock file \(lockPath)")
    }
    #endif
}

@Suite("pnmerge binary, end to end")
struct EndToEndTests {
    @Test("Two merges into one file at the same time both land (the target is locked across load, merge and write)")
    func concurrentMerges() throws {
        let bin = try Binary.require()
        let dir = try TempDir()
        let s = try Diverged()
        try s.write(to: dir)
        let expected = try dir.write(s.merged().save(), "expected.peernote")
        let want = try bin.run(["show", "--format", "json", expected]).out
        for round in 0 ..< 3 {
            let target = try dir.write(s.base.save(), "target\(round).peernote")
            let first = try bin.start(["merge", target, dir.path("alice.peernote")])
            let second = try bin.start(["merge", target, dir.path("bob.peernote")])
            first.waitUntilExit()
            second.waitUntilExit()
            #expect(first.terminationStatus == 0 && second.terminationStatus == 0)
            #expect(try bin.run(["show", "--format", "json", target]).out == want, "round \(round)")
            #expect(try bin.run(["validate", target]).status == 0)
        }
    }

    #if os(Linux)
    @Test("A merge in place that waited for the lock reads MINE again: what another writer saved meanwhile is kept")
    func mineChangedWhileWaitingForLock() throws {
        let bin = try Binary.require()
        let dir = try TempDir()
        let s = try Diverged()
        try s.write(to: dir)
        let target = try dir.write(s.alice.save(), "target.peernote")
        // The merge reads and checks both files, then waits for the lock another writer holds.
        let (status, meanwhile) = try Self.runWhileLocked(bin, ["merge", target, dir.path("bob.peernote")], target: target)
        #expect(status == 0)

        let expected = try Document.load(try dir.bytes("alice.peernote"))
        try expected.merge(meanwhile)
        try expected.merge(s.bob)
        let result = try Document.load(try dir.bytes("target.peernote"))
        #expect(result.notebook == expected.notebook)
        #expect(result.notes.contains { $0.title == "Written meanwhile" })
        #expect(result.notes.contains { $0.title == "Boat" }, "bob's note")
    }

    /// Runs `pnmerge ARGS` while another writer holds `target`'s lock; once the run waits for
    /// it, that writer appends a note to `target` (as a program without the lock would) and
    /// lets the lock go. Returns the run's exit status and the document the writer saved.
    static func runWhileLocked(_ bin: Binary, _ args: [String], target: String) throws -> (status: Int32, meanwhile: Document) {
        var lock: FileLock? = try FileLock(for: target)
        let run = try bin.start(args)
        try bin.waitUntilWaiting(run, forLockOf: target)
        let meanwhile = try Document.load(try FileStore.read(target))
        meanwhile.clock = { at(11, 0) }
        meanwhile.addNote(title: "Written meanwhile", body: "keep me")
        try FileStore.writeAtomically(meanwhile.save(.incremental), to: target)
        #expect(lock != nil)
        lock = nil    // released: the run goes on
        run.waitUntilExit()
        return (run.terminationStatus, meanwhile)
    }

    @Test("A compact that waited for the lock reads the file again: what another writer saved meanwhile is kept")
    func compactChangedWhileWaitingForLock() throws {
        let bin = try Binary.require()
        let dir = try TempDir()
        let s = try Diverged()
        // A file of two blocks, which compact rewrites.
        let grown = try Document.load(s.alice.save())
        grown.clock = { at(10, 30) }
        grown.addNote(title: "Appended")
        let target = try dir.write(grown.save(.incremental), "target.peernote")
        let (status, meanwhile) = try Self.runWhileLocked(bin, ["compact", target], target: target)
        #expect(status == 0)
        let bytes = try dir.bytes("target.peernote")
        #expect(try Document.storageReport(bytes).blockCount == 1, "compacted")
        #expect(try Document.load(bytes).notebook == meanwhile.notebook)
        #expect(bytes == meanwhile.save(.compact), "the canonical form of what the file held once the lock was free")
    }
    #endif

    @Test("Merging a diverged pair in both orders gives the same notebook; merging again changes nothing")
    func mergeBothOrders() throws {
        let bin = try Binary.require()
        let dir = try TempDir()
        try Diverged().write(to: dir)
        let a = dir.path("alice.peernote"), b = dir.path("bob.peernote")

        let ab = try bin.run(["merge", a, b, "-o", dir.path("ab.peernote")])
        let ba = try bin.run(["merge", b, a, "-o", dir.path("ba.peernote")])
        #expect(ab.status == 0, "\(ab.err)")
        #expect(ba.status == 0, "\(ba.err)")
        #expect(ab.out.contains("note \"Old\": deleted by alice (10:02) while edited by bob (10:05)"))
        let showAB = try bin.run(["show", "--format", "json", dir.path("ab.peernote")])
        let showBA = try bin.run(["show", "--format", "json", dir.path("ba.peernote")])
        #expect(showAB.status == 0 && showBA.status == 0)
        #expect(showAB.out == showBA.out)
        let notebook = try #require(try parseJSON(showAB.out) as? [String: Any])
        #expect((notebook["notes"] as? [[String: Any]])?.map { $0["title"] as? String ?? "" }.contains("Boat") == true)

        // In place, then again: the second run is up to date and leaves the file byte-identical.
        let first = try bin.run(["merge", a, b])
        #expect(first.status == 0)
        let merged = try dir.bytes("alice.peernote")
        let again = try bin.run(["merge", a, b])
        #expect(again.status == 0)
        #expect(again.out.hasPrefix("Already up to date"))
        #expect(try dir.bytes("alice.peernote") == merged)
        let showInPlace = try bin.run(["show", "--format", "json", a])
        #expect(showInPlace.out == showAB.out)
    }

    @Test("diff lists the places both copies edited one passage under Check, as merge --dry-run does, in either order")
    func diffCheck() throws {
        let bin = try Binary.require()
        let dir = try TempDir()
        try OverlappingEdits().write(to: dir)
        let alice = dir.path("alice.peernote"), bob = dir.path("bob.peernote"), chen = dir.path("chen.peernote")
        for (a, b) in [(alice, bob), (bob, alice)] {
            let diff = try bin.run(["diff", a, b]), merge = try bin.run(["merge", "--dry-run", a, b])
            #expect(diff.status == 0 && merge.status == 0, "\(diff.err)\(merge.err)")
            #expect(diff.out.contains(OverlappingEdits.check + "\n"), "\(diff.out)")
            #expect(section("Check (", of: diff.out) == section("Check (", of: merge.out), "\(diff.out)\n\(merge.out)")
        }
        let quiet = try bin.run(["diff", alice, chen])
        #expect(quiet.status == 0 && quiet.out.contains(" lacks ") && !quiet.out.contains("Check"), "\(quiet.out)")
    }

    @Test("An unrelated pair is refused with exit 2 and both files stay byte-identical")
    func unrelated() throws {
        let bin = try Binary.require()
        let dir = try TempDir()
        try Diverged().write(to: dir)
        let other = try dir.write(unrelatedDocument().save(), "work.peernote")
        let a = dir.path("alice.peernote")
        let beforeA = try dir.bytes("alice.peernote"), beforeOther = try dir.bytes("work.peernote")
        for args in [["merge", a, other], ["merge", other, a], ["merge", a, other, "-o", dir.path("out.peernote")], ["diff", a, other]] {
            let r = try bin.run(args)
            #expect(r.status == ExitStatus.unrelated.rawValue, "\(args)")
            #expect(r.err.split(separator: "\n").count == 1)
            #expect(r.err.contains("0c4b36e2-6c55-4d9a-8f0e-2b9c3e7d5a11") && r.err.contains("9a1e2f30-1111-4222-8333-944455556666"))
        }
        #expect(try dir.bytes("alice.peernote") == beforeA)
        #expect(try dir.bytes("work.peernote") == beforeOther)
        #expect(!FileManager.default.fileExists(atPath: dir.path("out.peernote")))
    }

    @Test("Damaged files are rejected by validate with exit 65 and a 'FILE: offset N:' line; a missing file gives 66")
    func damaged() throws {
        let bin = try Binary.require()
        let dir = try TempDir()
        let s = try Diverged()
        try s.write(to: dir)
        let good = s.alice.save()
        var flipped = good
        flipped[good.count - 10] ^= 0x01
        let damaged = [
            try dir.write(Array(good.prefix(good.count / 2)), "truncated.peernote"),
            try dir.write(flipped, "flipped.peernote"),
            try dir.write(Array("not a notebook".utf8), "text.peernote"),
        ]
        for file in damaged {
            let r = try bin.run(["validate", file])
            #expect(r.status == ExitStatus.invalidInput.rawValue, "\(file)")
            let line = r.err.trimmingCharacters(in: .newlines)
            #expect(!line.contains("\n"))
            #expect(line.range(of: "^\(NSRegularExpression.escapedPattern(for: file)): offset [0-9]+: .+$", options: .regularExpression) != nil, "\(line)")
            // Every other command refuses it too, naming it, without crashing.
            let show = try bin.run(["show", file])
            #expect(show.status == ExitStatus.invalidInput.rawValue)
            #expect(show.err.hasPrefix("pnmerge: \(file): offset "))
        }
        let missing = dir.path("missing.peernote")
        let r = try bin.run(["validate", missing])
        #expect(r.status == ExitStatus.noInput.rawValue)
        #expect(r.err == "\(missing): No such file or directory\n")
        let merge = try bin.run(["merge", dir.path("alice.peernote"), missing])
        #expect(merge.status == ExitStatus.noInput.rawValue)
        #expect(merge.err.contains(missing))
        let json = try bin.run(["validate", "--json", dir.path("alice.peernote")] + damaged + [missing])
        #expect(json.status == ExitStatus.invalidInput.rawValue)
        let results = try #require(try parseJSON(json.out) as? [[String: Any]])
        #expect(results.map { $0["valid"] as? Bool } == [true, false, false, false, false])
    }

    @Test("Every --json output parses, and stdin works with '-'")
    func jsonOutputs() throws {
        let bin = try Binary.require()
        let dir = try TempDir()
        try Diverged().write(to: dir)
        let a = dir.path("alice.peernote"), b = dir.path("bob.peernote")
        let runs = [
            try bin.run(["merge", "--dry-run", "--json", a, b]),
            try bin.run(["validate", "--json", a, b]),
            try bin.run(["inspect", "--json", a]),
            try bin.run(["show", "--format", "json", a]),
            try bin.run(["log", "--json", a]),
            try bin.run(["diff", "--json", a, b]),
            try bin.run(["inspect", "--json", "-"], stdin: try dir.bytes("bob.peernote")),
        ]
        for r in runs {
            #expect(r.status == 0, "\(r.err)")
            #expect(throws: Never.self) { _ = try parseJSON(r.out) }
        }
        let piped = try bin.run(["merge", a, b, "-o", "-"])
        #expect(piped.status == 0)
        let validated = try bin.run(["validate", "-"], stdin: piped.outBytes)
        #expect(validated.status == 0)
        #expect(validated.out == "<stdin>: valid\n")
    }

    @Test("Help, version and completion scripts")
    func helpAndCompletions() throws {
        let bin = try Binary.require()
        let help = try bin.run(["--help"])
        #expect(help.status == 0)
        #expect(help.out.contains("EXIT STATUS"))
        #expect(try bin.run(["--version"]).out.hasPrefix("pnmerge "))
        for shell in ["bash", "zsh", "fish"] {
            let r = try bin.run(["--generate-completion-script", shell])
            #expect(r.status == 0)
            #expect(r.out.contains("merge") && r.out.contains("dry-run"))
        }
        let usage = try bin.run(["merge"])
        #expect(usage.status == ExitStatus.usage.rawValue)
        let unknown = try bin.run(["frobnicate"])
        #expect(unknown.status == ExitStatus.usage.rawValue)
    }
}
