import Foundation
import PeerNote
@testable import PeerNoteCLISupport
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Crash safety of the two tools that write documents: killed at any moment, out of disk space,
/// or in a read-only folder, they leave every file either as it was or completely written.
///
/// Defaults keep the suite short; for a long run set `PEERNOTE_CRASH_RUNS` (kills per scenario,
/// default 6) and `PEERNOTE_CRASH_NOTES` (notes of about 4 KB in the base document, default 80).
@Suite("Crash safety", .serialized)
struct CrashSafetyTests {
    static let environment = ProcessInfo.processInfo.environment
    static let runs = Int(environment["PEERNOTE_CRASH_RUNS"] ?? "") ?? 6
    static let notes = Int(environment["PEERNOTE_CRASH_NOTES"] ?? "") ?? 80
    static let peernotePath = Binary.packageRoot.appendingPathComponent(".build/debug/peernote").path

    /// Deterministic text that does not compress much (so the files are large).
    static func text(_ seed: UInt64, _ length: Int) -> String {
        var x = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        var out = String.UnicodeScalarView()
        for i in 0 ..< length {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17
            out.append(i % 60 == 59 ? "\n" : Unicode.Scalar(UInt8(97 + x % 26)))
        }
        return String(out)
    }

    /// A large notebook and a copy that diverged from it with many more large notes and edits.
    static func largePair() throws -> (mine: Document, theirs: Document) {
        let mine = Document(title: "Large", author: "mia", replica: ReplicaID(high: 0x11, low: 1), time: at(9, 0))
        mine.clock = { at(9, 1) }
        for i in 0 ..< notes { mine.addNote(title: "Note \(i)", body: text(UInt64(i), 4_000)) }
        let theirs = mine.fork(author: "theo")
        theirs.clock = { at(10, 0) }
        for i in 0 ..< notes / 2 { theirs.addNote(title: "Their note \(i)", body: text(UInt64(10_000 + i), 4_000)) }
        for i in stride(from: 0, to: notes, by: 10) {
            let id = try theirs.findNote("Note \(i)").id
            try theirs.insertText(id, at: 100, "inserted by theo ")
        }
        return (mine, theirs)
    }

    /// Entries of `dir` that a killed writer may leave: its temporary file `.NAME.tmp-XXXXXX`, or
    /// `.NAME.swap-XXXXXX` (its result, or the version it replaced, when killed mid-exchange).
    static func staleTemporaries(_ dir: TempDir, of name: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: dir.url.path).filter { $0.hasPrefix(".\(name).tmp-") || $0.hasPrefix(".\(name).swap-") }
    }

    /// When to kill a run.
    enum KillMoment {
        /// After this many seconds.
        case after(Double)
        /// This many seconds after a file whose name starts with `prefix` appears in `directory`
        /// (the writer's temporary file: the kill lands while the new file is being written).
        case whileWriting(directory: String, prefix: String, plus: Double)
    }

    /// Starts `path args`, kills it with SIGKILL at `moment` (unless it ended first) and waits.
    /// Returns whether it was killed.
    static func runAndKill(_ path: String, _ args: [String], at moment: KillMoment) throws -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = args
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        switch moment {
        case .after(let delay):
            let deadline = Date().addingTimeInterval(delay)
            while process.isRunning && Date() < deadline { usleep(200) }
        case .whileWriting(let directory, let prefix, let plus):
            let deadline = Date().addingTimeInterval(120)
            while process.isRunning && Date() < deadline {
                if let names = try? FileManager.default.contentsOfDirectory(atPath: directory), names.contains(where: { $0.hasPrefix(prefix) }) {
                    usleep(useconds_t(plus * 1_000_000))
                    break
                }
                usleep(100)
            }
        }
        let killed = process.isRunning && kill(process.processIdentifier, SIGKILL) == 0
        process.waitUntilExit()
        return killed && process.terminationReason == .uncaughtSignal
    }

    /// When to kill run `run` of a command that takes `full` seconds and writes `name` in `dir`:
    /// in turn anywhere in the run, in its last quarter, and 0 to 3 ms after its temporary file
    /// appears (the runs are few, and a kill while the file is being written is the case that matters).
    static func killMoment(run: Int, full: Double, dir: String, name: String, using generator: inout SystemRandomNumberGenerator) -> KillMoment {
        switch run % 3 {
        case 0: .after(Double.random(in: 0 ... full * 1.1, using: &generator))
        case 1: .after(Double.random(in: full * 0.75 ... full * 1.3, using: &generator))
        default: .whileWriting(directory: dir, prefix: ".\(name).tmp-", plus: Double.random(in: 0 ... 0.003, using: &generator))
        }
    }

    /// Seconds `body` takes.
    /// The temporary files a killed writer left are stale (its lock on them died with it): once
    /// they are older than the cleanup's minimum age (backdated here), the next writer to take the
    /// document's lock removes them.
    static func expectRemovedByNextWriter(_ dir: TempDir, of names: [String], _ temps: [String]) throws {
        guard !temps.isEmpty else { return }
        for t in temps {
            try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-60)], ofItemAtPath: dir.path(t))
        }
        for name in names {
            let lock = try FileLock(for: dir.path(name))
            withExtendedLifetime(lock) {}
            #expect(try staleTemporaries(dir, of: name) == [], "\(name): stale temporary files left after a writer took the lock")
        }
    }

    static func time(_ body: () throws -> Void) rethrows -> Double {
        let start = Date()
        try body()
        return Date().timeIntervalSince(start)
    }

    @Test("pnmerge merge killed at random moments: MINE (in place) and OUT (-o) are each either untouched or the complete merge")
    func killMerge() throws {
        let bin = try Binary.require()
        let dir = try TempDir()
        let (mine, theirs) = try Self.largePair()
        let original = mine.save(.compact)
        let theirsBytes = theirs.save(.compact)
        let minePath = try dir.write(original, "mine.peernote")
        let theirsPath = try dir.write(theirsBytes, "theirs.peernote")
        let outPath = dir.path("out.peernote")
        let expected = try Document.load(original)
        try expected.merge(Document.load(theirsBytes))

        // One uninterrupted run of each kind: how long a run takes, and the exact bytes it writes.
        let inPlaceTime = try Self.time {
            let r = try bin.run(["merge", minePath, theirsPath])
            #expect(r.status == 0, "\(r.err)")
        }
        let mergedInPlace = try dir.bytes("mine.peernote")
        let compactTime = try Self.time {
            let r = try bin.run(["merge", minePath, theirsPath, "-o", outPath])
            #expect(r.status == 0, "\(r.err)")
        }
        let full = max(inPlaceTime, compactTime)
        var outcomes = [String: Int]()
        let mergedCompact = try dir.bytes("out.peernote")
        #expect(try Document.load(mergedInPlace).notebook == expected.notebook)
        #expect(mergedCompact == expected.save(.compact))

        var stale = 0
        var generator = SystemRandomNumberGenerator()
        for run in 0 ..< Self.runs * 2 {
            _ = try dir.write(original, "mine.peernote")
            try? FileManager.default.removeItem(atPath: outPath)
            let toOut = run % 2 == 1
            let moment = Self.killMoment(run: run / 2, full: full, dir: dir.url.path, name: toOut ? "out.peernote" : "mine.peernote", using: &generator)
            let killed = try Self.runAndKill(Binary.path, ["merge", minePath, theirsPath] + (toOut ? ["-o", outPath] : []), at: moment)
            let after = try dir.bytes("mine.peernote")
            #expect(try dir.bytes("theirs.peernote") == theirsBytes)
            if toOut {
                #expect(after == original, "-o never touches MINE")
                if FileManager.default.fileExists(atPath: outPath) {
                    #expect(try dir.bytes("out.peernote") == mergedCompact, "run \(run), killed \(moment): OUT is partial")
                    outcomes["OUT complete", default: 0] += 1
                } else {
                    outcomes["OUT absent", default: 0] += 1
                }
            } else if after == original {
                outcomes["MINE untouched", default: 0] += 1
            } else {
                #expect(after == mergedInPlace, "run \(run), killed \(moment): MINE is neither the original nor the merge")
                outcomes["MINE merged", default: 0] += 1
            }
            if !killed { outcomes["finished before the kill", default: 0] += 1 }
            // A killed writer may leave its temporary file; it never looks like a document.
            let temps = try Self.staleTemporaries(dir, of: "mine.peernote") + Self.staleTemporaries(dir, of: "out.peernote")
            #expect(temps.allSatisfy { !$0.hasSuffix(".peernote") })
            stale += temps.count
            try Self.expectRemovedByNextWriter(dir, of: ["mine.peernote", "out.peernote"], temps)
            let documents = try FileManager.default.contentsOfDirectory(atPath: dir.url.path).filter { $0.hasSuffix(".peernote") }
            #expect(Set(documents).isSubset(of: ["mine.peernote", "theirs.peernote", "out.peernote"]), "\(documents)")
        }
        print("pnmerge merge, \(Self.runs * 2) runs of \(String(format: "%.2f", full)) s killed at random: \(outcomes.sorted { $0.key < $1.key }), stale temporary files: \(stale)")
    }

    @Test("peernote edit killed at random moments: the file is either untouched or has the whole edit")
    func killEdit() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.peernotePath), "build peernote first (swift build)")
        let dir = try TempDir()
        let (mine, _) = try Self.largePair()
        let original = mine.save(.compact)
        let path = try dir.write(original, "notes.peernote")
        // 60 KB typed into the middle of the body (an edit that appends a sizeable block).
        let oldBody = try mine.findNote("Note 3").body
        let middle = oldBody.index(oldBody.startIndex, offsetBy: oldBody.count / 2)
        let newBody = String(oldBody[..<middle]) + Self.text(99, 60_000) + String(oldBody[middle...])
        let bodyPath = try dir.write(Array(newBody.utf8), "body.txt")
        let args = ["edit", path, "Note 3", "--body-file", bodyPath, "--title", "Note 3 (long)", "--author", "ed"]
        let full = try Self.time {
            let r = try Self.runAndKill(Self.peernotePath, args, at: .after(600))
            #expect(!r)
        }
        let edited = try Document.load(try dir.bytes("notes.peernote"))
        #expect(edited.notes[3].body == newBody && edited.notes[3].title == "Note 3 (long)")

        var outcomes = [String: Int]()
        var stale = 0
        var generator = SystemRandomNumberGenerator()
        for run in 0 ..< Self.runs {
            _ = try dir.write(original, "notes.peernote")
            let moment = Self.killMoment(run: run, full: full, dir: dir.url.path, name: "notes.peernote", using: &generator)
            _ = try Self.runAndKill(Self.peernotePath, args, at: moment)
            let after = try dir.bytes("notes.peernote")
            if after == original {
                outcomes["untouched", default: 0] += 1
            } else {
                let d = try Document.load(after)
                #expect(d.notebook.notes == edited.notebook.notes && d.changeCount == edited.changeCount,
                        "run \(run), killed \(moment): the file is neither the original nor the edit")
                outcomes["edited", default: 0] += 1
            }
            let temps = try Self.staleTemporaries(dir, of: "notes.peernote")
            #expect(temps.allSatisfy { !$0.hasSuffix(".peernote") })
            stale += temps.count
            try Self.expectRemovedByNextWriter(dir, of: ["notes.peernote"], temps)
        }
        print("peernote edit, \(Self.runs) runs of \(String(format: "%.2f", full)) s killed at random: \(outcomes.sorted { $0.key < $1.key }), stale temporary files: \(stale)")
    }

    @Test("pnmerge merge and peernote add on one file at the same moment: both land (they take the same lock)")
    func mergeAndEditAtOnce() throws {
        let bin = try Binary.require()
        try #require(FileManager.default.isExecutableFile(atPath: Self.peernotePath), "build peernote first (swift build)")
        let s = try Diverged()
        for round in 0 ..< 3 {
            let dir = try TempDir()
            try s.write(to: dir)
            let target = try dir.write(s.alice.save(), "target.peernote")
            let merge = try bin.start(["merge", target, dir.path("bob.peernote")])
            let add = Process()
            add.executableURL = URL(fileURLWithPath: Self.peernotePath)
            add.arguments = ["add", target, "--title", "Added meanwhile", "--body", "kept", "--author", "eve"]
            add.standardOutput = FileHandle.nullDevice
            add.standardError = FileHandle.nullDevice
            try add.run()
            merge.waitUntilExit()
            add.waitUntilExit()
            #expect(merge.terminationStatus == 0 && add.terminationStatus == 0)
            let result = try Document.load(try dir.bytes("target.peernote"))
            let merged = try s.merged()
            #expect(result.notes.contains { $0.title == "Added meanwhile" && $0.body == "kept" }, "round \(round)")
            #expect(result.notes.filter { $0.title != "Added meanwhile" } == merged.notes, "round \(round): every merged note is there")
        }
    }

    @Test("pnmerge merge interrupted (SIGINT, SIGTERM) while writing its temporary file removes it, and ends by that signal; MINE is untouched or merged")
    func interruptedWriteRemovesItsTemporary() throws {
        _ = try Binary.require()
        let dir = try TempDir()
        let (mine, theirs) = try Self.largePair()
        let original = mine.save(.compact)
        let minePath = dir.path("mine.peernote")
        let theirsPath = try dir.write(theirs.save(.compact), "theirs.peernote")
        _ = try dir.write(original, "mine.peernote")
        let r = try Binary().run(["merge", minePath, theirsPath])
        #expect(r.status == 0, "\(r.err)")
        let merged = try dir.bytes("mine.peernote")
        // Caught while the temporary file was there (just after the signal was sent): the handler
        // had it to remove. The other runs ended before, or after it was renamed.
        var caught = 0
        for run in 0 ..< Self.runs * 2 {
            _ = try dir.write(original, "mine.peernote")
            let signal = run % 2 == 0 ? SIGINT : SIGTERM
            // Spawned with default signal dispositions and none blocked, as from a shell (Foundation's
            // Process passes on what the test runner's thread blocks).
            var actions = Subprocess.FileActions()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
            let pid = try Subprocess.spawn([Binary.path, "merge", minePath, theirsPath], environment: nil, actions: &actions)
            var sent = false, there = false, status: Int32 = 0, ended = false
            let deadline = Date().addingTimeInterval(120)
            while Date() < deadline {
                if waitpid(pid, &status, WNOHANG) == pid { ended = true; break }
                let temps = try Self.staleTemporaries(dir, of: "mine.peernote").filter { $0.contains(".tmp-") }
                var st = stat()
                // Once the file has bytes, the writer has registered it (it does so before writing).
                if let temp = temps.first, lstat(dir.path(temp), &st) == 0, st.st_size > 0 {
                    sent = kill(pid, signal) == 0
                    if sent && lstat(dir.path(temp), &st) == 0 { caught += 1; there = true }
                    break
                }
                usleep(50)
            }
            if !ended { while waitpid(pid, &status, 0) < 0 && errno == EINTR {} }
            if sent {
                // Ended by the signal (its default action, once the handler is done); without the
                // temporary file there, it may have exited just before the signal was sent.
                #expect(status & 0x7F == signal || (!there && status == 0), "run \(run): wait status \(status)")
            }
            let left = try Self.staleTemporaries(dir, of: "mine.peernote").filter { $0.contains(".tmp-") }
            #expect(left.isEmpty, "run \(run): \(left) left by a writer interrupted by signal \(signal)")
            let after = try dir.bytes("mine.peernote")
            #expect(after == original || after == merged, "run \(run): MINE is neither the original nor the merge")
            // A .swap- file (interrupted mid-exchange) is left to the next writer's cleanup.
            for swap in try Self.staleTemporaries(dir, of: "mine.peernote") { try FileManager.default.removeItem(atPath: dir.path(swap)) }
        }
        #expect(caught > 0, "no run was interrupted while its temporary file was there (\(Self.runs * 2) runs)")
    }

    @Test("The next pnmerge merge or peernote add removes a killed writer's temporary file; one a live writer holds stays")
    func staleTemporariesRemovedByTools() throws {
        let bin = try Binary.require()
        try #require(FileManager.default.isExecutableFile(atPath: Self.peernotePath), "build peernote first (swift build)")
        let s = try Diverged()
        let dir = try TempDir()
        try s.write(to: dir)
        let target = try dir.write(s.alice.save(), "target.peernote")
        let partial = Array(s.bob.save().prefix(100))
        func temporary(_ name: String) throws -> String {
            let p = try dir.write(partial, name)
            try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-3_600)], ofItemAtPath: p)
            return p
        }
        _ = try temporary(".target.peernote.tmp-Dead01")
        let live = try temporary(".target.peernote.tmp-Live01")
        let liveFD = open(live, O_RDONLY | O_CLOEXEC)   // not inherited by processes other tests start
        try #require(liveFD >= 0 && flock(liveFD, LOCK_EX | LOCK_NB) == 0)
        let merged = try bin.run(["merge", target, dir.path("bob.peernote")])
        #expect(merged.status == 0, "\(merged.err)")
        #expect(try Self.staleTemporaries(dir, of: "target.peernote") == [".target.peernote.tmp-Live01"])
        #expect(try Document.load(try dir.bytes("target.peernote")).notebook == s.merged().notebook)

        // The live writer is gone: the next peernote command that writes the file removes its temporary.
        close(liveFD)
        _ = try temporary(".target.peernote.tmp-Dead02")
        let add = Process()
        add.executableURL = URL(fileURLWithPath: Self.peernotePath)
        add.arguments = ["add", target, "--title", "After", "--author", "eve"]
        add.standardOutput = FileHandle.nullDevice
        try add.run()
        add.waitUntilExit()
        #expect(add.terminationStatus == 0)
        #expect(try Self.staleTemporaries(dir, of: "target.peernote") == [])
        #expect(try Document.load(try dir.bytes("target.peernote")).notes.contains { $0.title == "After" })
    }

    // MARK: Read-only and full file systems

    /// Runs `/bin/mount` or `/bin/umount`; nil on success, else why not.
    static func mount(_ args: [String], tool: String = "mount") -> String? {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/\(tool)")
        p.arguments = args
        let err = Pipe()
        p.standardError = err
        p.standardOutput = FileHandle.nullDevice
        do { try p.run() } catch { return "\(tool) cannot run: \(error)" }
        p.waitUntilExit()
        let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return p.terminationStatus == 0 ? nil : "\(tool) \(args.joined(separator: " ")) failed: \(message.trimmingCharacters(in: .whitespacesAndNewlines))"
    }

    /// A tmpfs of `size` mounted on a fresh directory, unmounted by `release()`.
    final class SmallFileSystem {
        let dir: TempDir
        var path: String { dir.url.path }
        private var mounted = false

        init(size: String) throws {
            dir = try TempDir()
            if let why = CrashSafetyTests.mount(["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", dir.url.path]) {
                throw SkipReason(why)
            }
            mounted = true
        }

        func remountReadOnly() throws {
            if let why = CrashSafetyTests.mount(["-o", "remount,ro", dir.url.path]) { throw SkipReason(why) }
        }

        func release() {
            if mounted { _ = CrashSafetyTests.mount([dir.url.path], tool: "umount"); mounted = false }
        }

        deinit { release() }
    }

    /// Why a test could not set up its file system (it prints this and checks nothing else).
    struct SkipReason: Error, CustomStringConvertible {
        var description: String
        init(_ d: String) { description = d }
    }

    @Test("A read-only folder: merge, salvage and edit fail with a clear error (exit 74) and change nothing")
    func readOnlyFolder() throws {
        let bin = try Binary.require()
        let s = try Diverged()
        let fs: SmallFileSystem
        do { fs = try SmallFileSystem(size: "1m") } catch let skip as SkipReason {
            print("readOnlyFolder: not run: cannot mount a file system to make read-only (\(skip)); as root, chmod cannot make a folder read-only")
            return
        }
        defer { fs.release() }
        let mine = fs.path + "/mine.peernote"
        try Data(s.alice.save()).write(to: URL(fileURLWithPath: mine))
        let outside = try TempDir()
        try s.write(to: outside)
        do { try fs.remountReadOnly() } catch let skip as SkipReason {
            print("readOnlyFolder: not run: \(skip)")
            return
        }
        let before = try FileManager.default.contentsOfDirectory(atPath: fs.path)
        let original = s.alice.save()

        let merge = try bin.run(["merge", mine, outside.path("bob.peernote")])
        #expect(merge.status == 74)
        #expect(merge.err.contains(mine) && merge.err.contains("Read-only file system"), "\(merge.err)")
        #expect(merge.err.split(separator: "\n").count == 1)

        let salvage = try bin.run(["salvage", outside.path("bob.peernote"), "-o", fs.path + "/copy.peernote"])
        #expect(salvage.status == 74 && salvage.err.contains("Read-only file system"), "\(salvage.err)")

        let edit = Process()
        edit.executableURL = URL(fileURLWithPath: Self.peernotePath)
        edit.arguments = ["title", mine, "Renamed", "--author", "x"]
        let err = Pipe()
        edit.standardError = err
        edit.standardOutput = FileHandle.nullDevice
        try edit.run()
        edit.waitUntilExit()
        let editErr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(edit.terminationStatus == 74 && editErr.contains("Read-only file system"), "\(editErr)")

        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: mine))) == original)
        #expect(try FileManager.default.contentsOfDirectory(atPath: fs.path) == before)
    }

    @Test("A full disk: a merge whose result does not fit fails with a clear error (exit 74); MINE is intact and no temporary file is left")
    func fullDisk() throws {
        let bin = try Binary.require()
        let fs: SmallFileSystem
        do { fs = try SmallFileSystem(size: "64k") } catch let skip as SkipReason {
            print("fullDisk: not run: cannot mount a 64 KB tmpfs (\(skip))")
            return
        }
        defer { fs.release() }
        let mine = Document(title: "Small", author: "mia", replica: ReplicaID(high: 0x22, low: 2), time: at(9, 0))
        mine.addNote(title: "One", body: "short")
        let theirs = mine.fork(author: "theo")
        for i in 0 ..< 60 { theirs.addNote(title: "Big \(i)", body: Self.text(UInt64(i), 4_000)) }
        let original = mine.save(.compact)
        let minePath = fs.path + "/mine.peernote"
        try Data(original).write(to: URL(fileURLWithPath: minePath))
        let outside = try TempDir()
        let theirsPath = try outside.write(theirs.save(.compact), "theirs.peernote")
        try #require(theirs.save(.compact).count > 100_000, "the merge result must not fit in 64 KB")

        let r = try bin.run(["merge", minePath, theirsPath])
        #expect(r.status == 74)
        #expect(r.err.contains(minePath) && r.err.contains("No space left on device"), "\(r.err)")
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: minePath))) == original)
        let entries = try FileManager.default.contentsOfDirectory(atPath: fs.path).sorted()
        #expect(entries == ["mine.peernote"], "no temporary file is left: \(entries)")

        let salvage = try bin.run(["salvage", theirsPath, "-o", fs.path + "/copy.peernote"])
        #expect(salvage.status == 74 && salvage.err.contains("No space left on device"), "\(salvage.err)")
        #expect(!FileManager.default.fileExists(atPath: fs.path + "/copy.peernote"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: fs.path).sorted() == entries)
    }
}
