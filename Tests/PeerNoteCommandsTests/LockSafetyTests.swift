import Foundation
import PeerNote
import Testing
import TestSupport

/// The lock folder and lock files, seen through the built `peernote`: a folder another user
/// could have planted is refused, lock files are never followed through links, a writer that
/// waits for another says so, and option values may begin with a dash.
@Suite("Lock safety and dash values (end to end)")
struct LockSafetyTests {
    /// A private lock folder `run/peernote-locks` for `PEERNOTE_LOCK_DIR` (made, or not, by `prepare`).
    private func runtime(in dir: TempDir, _ prepare: (String) throws -> Void) throws -> [String: String] {
        let run = dir.file("run")
        try FileManager.default.createDirectory(atPath: run, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try prepare(run + "/peernote-locks")
        return ["PEERNOTE_LOCK_DIR": run + "/peernote-locks"]
    }

    /// Where peernote, run with `runtime(in: dir)`, keeps the lock of `document` (the file's
    /// name is the same whatever the folder: a hash of the document's real path).
    private static func lockFile(of document: String, in dir: TempDir) throws -> String {
        let name = try #require(FileLock.lockFile(for: document).split(separator: "/").last)
        return dir.file("run/peernote-locks/\(name)")
    }

    /// What `running` has written on standard error once it says it waits (or after 30 seconds).
    private static func stderrOnceWaiting(_ running: Binary.Running) -> String {
        var said = ""
        for _ in 0 ..< 3_000 where !said.contains("waiting") {
            said = String(decoding: (try? Data(contentsOf: URL(fileURLWithPath: running.errPath))) ?? Data(), as: UTF8.self)
            if !said.contains("waiting") { usleep(10_000) }
        }
        return said
    }

    @Test("Lock files do not pile up: the holder removes its lock file when it lets go")
    func lockFilesRemoved() throws {
        let dir = try TempDir()
        let env = try runtime(in: dir) { _ in }
        #expect(try Binary.run(["new", "n.peernote", "--title", "T"], in: dir, env: env).status == 0)
        #expect(try Binary.run(["add", "n.peernote", "--title", "a"], in: dir, env: env).status == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.file("run/peernote-locks")).isEmpty)
        // Writers that meet, each waiting for the one before: all land, and no lock file is left.
        let runs = try (0 ..< 6).map { try Binary.start(["add", "n.peernote", "--title", "t\($0)"], in: dir, env: env) }
        for r in runs { #expect(try r.finish().status == 0) }
        #expect(try Document.load(Array(dir.bytes("n.peernote"))).notes.count == 7)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.file("run/peernote-locks")).isEmpty)
    }

    @Test("A lock folder others can write to, or a link in its place, is refused: exit 74, the file unchanged")
    func unsafeLockFolder() throws {
        let dir = try TempDir()
        #expect(try Binary.run(["new", "n.peernote", "--title", "T"], in: dir).status == 0)
        let before = try dir.bytes("n.peernote")

        let open = try runtime(in: dir) { locks in
            try FileManager.default.createDirectory(atPath: locks, withIntermediateDirectories: false)
            #expect(chmod(locks, 0o777) == 0)
        }
        let r = try Binary.run(["add", "n.peernote", "--title", "x"], in: dir, env: open)
        #expect(r.status == 74, "\(r.err)")
        #expect(r.err.contains("refusing the lock folder") && r.err.contains("others can write to it (mode 777)"), "\(r.err)")
        #expect(try dir.bytes("n.peernote") == before)

        let elsewhere = try TempDir(), other = try TempDir()
        let linked = try runtime(in: other) { locks in
            try FileManager.default.createSymbolicLink(atPath: locks, withDestinationPath: elsewhere.path)
        }
        let l = try Binary.run(["add", "n.peernote", "--title", "x"], in: dir, env: linked)
        #expect(l.status == 74, "\(l.err)")
        #expect(l.err.contains("it is a symbolic link"), "\(l.err)")
        #expect(try elsewhere.entries().isEmpty, "nothing is created through the link")
        #expect(try dir.bytes("n.peernote") == before)
    }

    @Test("A lock folder that cannot be created is named with the system's reason; a relative PEERNOTE_LOCK_DIR is refused, not passed over (not ignored without a word)")
    func lockFolderCannotBeCreated() throws {
        let dir = try TempDir()
        let missing = dir.file("no/such/run")
        let r = try Binary.run(["new", "n.peernote", "--title", "T"], in: dir, env: ["PEERNOTE_LOCK_DIR": missing + "/peernote-locks/"])
        #expect(r.status == 74)
        #expect(r.err == "peernote: n.peernote: cannot create the lock folder \(missing)/peernote-locks: No such file or directory\n", "\(r.err)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("n.peernote")))
        // A relative one would give writers in different folders different locks: refused, the
        // file left as it was, nothing created.
        #expect(try Binary.run(["new", "r.peernote", "--title", "T"], in: dir).status == 0)
        let before = try dir.bytes("r.peernote")
        let relative = try Binary.run(["add", "r.peernote", "--title", "U"], in: dir, env: ["PEERNOTE_LOCK_DIR": "run-relative"])
        #expect(relative.status == 74)
        #expect(relative.err == "peernote: r.peernote: PEERNOTE_LOCK_DIR is not an absolute path (run-relative): set it to one, such as \"$HOME/.peernote-locks\", or unset it\n", "\(relative.err)")
        #expect(try dir.bytes("r.peernote") == before)
        #expect(!FileManager.default.fileExists(atPath: dir.file("run-relative")))
    }

    @Test("A lock file replaced by a symbolic link is not followed: nothing is created where it points")
    func lockFileLink() throws {
        let dir = try TempDir()
        let env = try runtime(in: dir) { _ in }
        #expect(try Binary.run(["new", "n.peernote", "--title", "T"], in: dir, env: env).status == 0)
        let lockFile = try Self.lockFile(of: dir.file("n.peernote"), in: dir)
        let planted = dir.file("planted")
        try FileManager.default.createSymbolicLink(atPath: lockFile, withDestinationPath: planted)
        let before = try dir.bytes("n.peernote")

        let r = try Binary.run(["add", "n.peernote", "--title", "x"], in: dir, env: env)
        #expect(r.status == 74, "\(r.err)")
        #expect(r.err.contains("cannot create lock file"), "\(r.err)")
        #expect(!FileManager.default.fileExists(atPath: planted))
        #expect(try dir.bytes("n.peernote") == before)
    }

    @Test("A writer that finds the document locked says it waits, then writes once the lock is free")
    func waitingIsSaid() throws {
        let dir = try TempDir()
        let env = try runtime(in: dir) { _ in }
        #expect(try Binary.run(["new", "n.peernote", "--title", "T"], in: dir, env: env).status == 0)
        // Hold the document's lock the way another peernote would: flock on its lock file.
        let lockFile = try Self.lockFile(of: dir.file("n.peernote"), in: dir)
        let fd = open(lockFile, O_RDWR | O_CREAT, 0o600)
        try #require(fd >= 0)
        defer { close(fd) }
        #expect(flock(fd, LOCK_EX) == 0)

        let running = try Binary.start(["add", "n.peernote", "--title", "Later"], in: dir, env: env)
        let said = Self.stderrOnceWaiting(running)
        #expect(said.contains("n.peernote: waiting for another peernote or pnmerge to finish writing it"), "\(said)")
        #expect(running.process.isRunning, "it waits while the lock is held")
        #expect(flock(fd, LOCK_UN) == 0)
        let r = try running.finish()
        #expect(r.status == 0, "\(r.err)")
        #expect(try Document.load(Array(dir.bytes("n.peernote"))).notes.map(\.title) == ["Later"])
    }

    @Test("Runs of two users on one shared notebook lose nothing: their locks differ, but a write that finds the file changed merges it first")
    func sharedDocumentWriters() throws {
        let dir = try TempDir()
        // Two users' runs: each has its own lock folder, as /tmp/peernote-locks-UID is per user.
        let alice = ["PEERNOTE_LOCK_DIR": dir.file("alice-locks")], bob = ["PEERNOTE_LOCK_DIR": dir.file("bob-locks")]
        #expect(try Binary.run(["new", "n.peernote", "--title", "T"], in: dir, env: alice).status == 0)
        let doc = dir.file("n.peernote")
        try #require(chmod(doc, 0o664) == 0)
        let runs = try (0 ..< 8).map { try Binary.start(["add", "n.peernote", "--title", "t\($0)"], in: dir, env: $0 % 2 == 0 ? alice : bob) }
        for r in runs {
            let result = try r.finish()
            #expect(result.status == 0, "\(result.err)")
        }
        let titles = try Document.load(Array(dir.bytes("n.peernote"))).notes.map(\.title)
        #expect(Set(titles) == Set((0 ..< 8).map { "t\($0)" }), "\(titles)")
        var st = stat()
        #expect(stat(doc, &st) == 0 && st.st_mode & 0o777 == 0o664, "the file stays group-writable")
    }

    @Test("Many users' runs at once on one shared notebook: every run exits 0 with its note in the file, and nothing is left beside it")
    func manyWritersWithoutACommonLock() throws {
        let dir = try TempDir()
        #expect(try Binary.run(["new", "n.peernote", "--title", "T"], in: dir).status == 0)
        let writers = 16, rounds = 2
        // Each run has a lock folder of its own, as runs of as many users would.
        let env = try (0 ..< writers).map { i in
            let locks = dir.file("locks/\(i)")
            try FileManager.default.createDirectory(atPath: locks, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            return ["PEERNOTE_LOCK_DIR": locks]
        }
        for round in 0 ..< rounds {
            let runs = try (0 ..< writers).map { try Binary.start(["add", "n.peernote", "--title", "r\(round)w\($0)"], in: dir, env: env[$0]) }
            for r in runs {
                let result = try r.finish()
                #expect(result.status == 0, "\(result.err)")
            }
        }
        let titles = try Document.load(Array(dir.bytes("n.peernote"))).notes.map(\.title)
        let expected = (0 ..< rounds).flatMap { round in (0 ..< writers).map { "r\(round)w\($0)" } }
        #expect(titles.count == expected.count && Set(titles) == Set(expected), "\(titles.sorted())")
        #expect(try dir.entries() == ["locks", "n.peernote"], "no conflict copy, nothing kept aside")
    }

    @Test("XDG_RUNTIME_DIR does not move the lock: a cron job or sudo -u run waits for the desktop session's")
    func lockIgnoresRuntimeDir() throws {
        let dir = try TempDir()
        #expect(try Binary.run(["new", "n.peernote", "--title", "T"], in: dir).status == 0)
        // This process holds the lock as a run without XDG_RUNTIME_DIR would.
        var lock: FileLock? = try FileLock(for: dir.file("n.peernote"))
        let run = dir.file("xdg")
        try FileManager.default.createDirectory(atPath: run, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let running = try Binary.start(["add", "n.peernote", "--title", "Later"], in: dir, env: ["XDG_RUNTIME_DIR": run])
        let said = Self.stderrOnceWaiting(running)
        #expect(said.contains("waiting for another peernote or pnmerge"), "\(said)")
        #expect(running.process.isRunning, "it waits while the lock is held")
        lock = nil
        _ = lock
        let r = try running.finish()
        #expect(r.status == 0, "\(r.err)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: run).isEmpty, "nothing is made in XDG_RUNTIME_DIR")
    }

    @Test("Option values may begin with a dash: a body that is a list, a title, a tag; a negative index is out of range")
    func dashValues() throws {
        let dir = try TempDir()
        #expect(try Binary.run(["new", "d.peernote", "--title", "-n-"], in: dir).status == 0)
        let add = try Binary.run(["add", "d.peernote", "--title", "-draft-", "--body", "- milk\n- eggs", "--tag", "-x", "-m", "-m"], in: dir)
        #expect(add.status == 0, "\(add.err)")
        let d = try Document.load(Array(dir.bytes("d.peernote")))
        #expect(d.title == "-n-")
        #expect(d.notes.map(\.title) == ["-draft-"])
        #expect(d.notes.first?.body == "- milk\n- eggs")
        #expect(d.notes.first?.tags == ["-x"])
        // A note named with a leading dash comes after `--` (it is an argument, not an option value).
        let edit = try Binary.run(["edit", "d.peernote", "--body", "-1 degrees", "--add-tag", "-y", "--", "-draft-"], in: dir)
        #expect(edit.status == 0, "\(edit.err)")
        #expect(try Document.load(Array(dir.bytes("d.peernote"))).notes.first?.body == "-1 degrees")
        let move = try Binary.run(["move", "d.peernote", "--to", "-1", "--", "-draft-"], in: dir)
        #expect(move.status == 64)
        #expect(move.err.contains("--to must be 0 or more"), "\(move.err)")
    }
}
