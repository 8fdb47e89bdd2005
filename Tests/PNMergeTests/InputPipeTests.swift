import Foundation
import PeerNote
import Testing
import TestSupport

/// Inputs that are pipes: a shell's process substitution (`<(git show laptop:notes.peernote)`)
/// is read like a file wherever the file is only read, and refused where the result would be
/// written back into it.
@Suite("Input pipes")
struct InputPipeTests {
    /// Runs `script` with bash (for `<(…)`), with `$PNMERGE` the built pnmerge.
    private func bash(_ script: String, in dir: TempDir) throws -> (status: Int32, out: String, err: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", script]
        process.currentDirectoryURL = URL(fileURLWithPath: dir.path(""))
        var env = ProcessInfo.processInfo.environment
        env["PNMERGE"] = Binary.path
        process.environment = env
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let o = out.fileHandleForReading.readDataToEndOfFile(), e = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: e, as: UTF8.self))
    }

    @Test("THEIRS from <(cat …) merges in place; validate, show and diff read pipes too")
    func theirsFromProcessSubstitution() throws {
        _ = try Binary.require()
        let dir = try TempDir()
        let s = try Diverged()
        try s.write(to: dir)
        let r = try bash(#""$PNMERGE" merge alice.peernote <(cat bob.peernote)"#, in: dir)
        #expect(r.status == 0, "\(r.err)")
        let merged = try Document.load(dir.bytes("alice.peernote"))
        #expect(merged.notebook == (try s.merged()).notebook)

        let v = try bash(#""$PNMERGE" validate <(cat bob.peernote)"#, in: dir)
        #expect(v.status == 0, "\(v.err)")
        let show = try bash(#""$PNMERGE" show <(cat bob.peernote)"#, in: dir)
        #expect(show.status == 0 && show.out.contains("Boat"), "\(show.err)")
        // A damaged notebook read from a pipe: no salvage command naming the pipe, which is gone by then.
        let appended = try [UInt8](Data(contentsOf: Binary.packageRoot.appendingPathComponent("Fixtures/meeting-appended.peernote")))
        _ = try dir.write(Array(appended.dropLast(20)), "trunc.peernote")
        let file = try bash(#""$PNMERGE" validate trunc.peernote"#, in: dir)
        #expect(file.status == 65 && file.err.contains("'pnmerge salvage trunc.peernote -o NEW.peernote' recovers"), "\(file.err)")
        let damaged = try bash(#""$PNMERGE" validate <(cat trunc.peernote)"#, in: dir)
        #expect(damaged.status == 65 && !damaged.err.contains("pnmerge salvage"), "\(damaged.err)")
        // '-' on a pipe (as the pre-commit hook reads the staged blob) names no command either,
        // for validate and for the commands that load through Inputs; '-' redirected from a
        // file does, since '< FILE' can be given again.
        for command in ["validate", "show"] {
            let piped = try bash(#"cat trunc.peernote | "$PNMERGE" "# + command + " -", in: dir)
            #expect(piped.status == 65 && piped.err.contains("<stdin>: offset ") && !piped.err.contains("salvage"), "\(command): \(piped.err)")
            let redirected = try bash(#""$PNMERGE" "# + command + " - < trunc.peernote", in: dir)
            #expect(redirected.status == 65 && redirected.err.contains("; 'pnmerge salvage - -o NEW.peernote' recovers its "), "\(command): \(redirected.err)")
        }
        let diff = try bash(#""$PNMERGE" diff <(cat base.peernote) <(cat bob.peernote)"#, in: dir)
        #expect(diff.status == 0 && diff.out.contains("Boat"), "\(diff.out)\(diff.err)")
    }

    @Test("MINE as a pipe: merged with -o; refused in place (66, nothing written), as compact refuses a pipe")
    func minePipe() throws {
        _ = try Binary.require()
        let dir = try TempDir()
        let s = try Diverged()
        try s.write(to: dir)
        let out = try bash(#""$PNMERGE" merge <(cat alice.peernote) bob.peernote -o out.peernote"#, in: dir)
        #expect(out.status == 0, "\(out.err)")
        #expect(try Document.load(dir.bytes("out.peernote")).notebook == (try s.merged()).notebook)

        let fifo = dir.path("mine.fifo")
        try #require(mkfifo(fifo, 0o600) == 0)
        let inPlace = try bash(#""$PNMERGE" merge mine.fifo bob.peernote"#, in: dir)
        #expect(inPlace.status == 66, "\(inPlace.err)")
        #expect(inPlace.err == "pnmerge: mine.fifo: is a pipe, and a merge in place writes the result back to MINE: give -o OUT (or -o - for standard output); nothing was written\n")
        var st = stat()
        #expect(lstat(fifo, &st) == 0 && st.st_mode & S_IFMT == S_IFIFO, "still a FIFO")

        let dry = try bash(#""$PNMERGE" merge mine.fifo bob.peernote --dry-run"#, in: dir)
        #expect(dry.status == 66 && dry.err.contains("is a pipe, and a merge in place writes the result back to MINE"), "a dry run says what the run would: \(dry.err)")

        // The same pipe twice: refused naming it, not read as an empty second file (or waited on).
        let twice = try bash(#""$PNMERGE" merge alice.peernote /dev/fd/3 /dev/fd/3 3< <(cat bob.peernote)"#, in: dir)
        #expect(twice.status == 64 && twice.err == "pnmerge: /dev/fd/3: the same pipe is given twice; a pipe can be read only once\n", "\(twice.err)")
        let stdinTwice = try bash(#"cat bob.peernote | "$PNMERGE" diff - /dev/stdin"#, in: dir)
        #expect(stdinTwice.status == 64 && stdinTwice.err.contains("the same pipe is given twice"), "\(stdinTwice.err)")
        let fifoTwice = try bash(#""$PNMERGE" validate mine.fifo mine.fifo"#, in: dir)
        #expect(fifoTwice.status == 64 && fifoTwice.err.contains("mine.fifo: the same pipe is given twice"), "\(fifoTwice.err)")

        let compact = try bash(#""$PNMERGE" compact mine.fifo"#, in: dir)
        #expect(compact.status == 66, "\(compact.err)")
        #expect(compact.err.contains("mine.fifo: is a pipe, and this command writes the file back: it needs a regular file"), "\(compact.err)")
    }

    @Test("A notebook read through a name of a file descriptor (/dev/stdin < FILE) gets no command naming that name: it is another file in the next command")
    func descriptorNamesGetNoCommands() throws {
        _ = try Binary.require()
        let dir = try TempDir()
        let s = try Diverged()
        _ = try dir.write(try s.merged().save(), "merged.peernote")
        let named = try bash(#""$PNMERGE" show merged.peernote"#, in: dir)
        #expect(named.status == 0 && named.out.contains("resolve: peernote resolve merged.peernote"), "the file's own name gets the commands: \(named.out)")
        for path in ["/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"] {
            let r = try bash("\"$PNMERGE\" show \(path) < merged.peernote", in: dir)
            #expect(r.status == 0 && r.out.contains("Conflicts (2):"), "\(path): \(r.err)")
            #expect(!r.out.contains("peernote resolve"), "\(path): \(r.out)")
        }
    }
}

@Suite("File-size limit")
struct FileSizeLimitTests {
    @Test("A write past 'ulimit -f' fails with a message naming the file (exit 74), MINE intact, no temporary file left")
    func ulimit() throws {
        _ = try Binary.require()
        let dir = try TempDir()
        // Text that does not compress much: about 110 KiB in a file each, 220 KiB merged.
        var rng = SystemRandomNumberGenerator()
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .")
        func text() -> String { String((0 ..< 150_000).map { _ in alphabet[Int.random(in: 0 ..< alphabet.count, using: &rng)] }) }
        let big = Document(title: "Big", author: "a")
        big.addNote(title: "N", body: text())
        let other = big.fork(author: "b")
        other.addNote(title: "M", body: text())
        _ = try dir.write(big.save(), "mine.peernote")
        _ = try dir.write(other.save(), "theirs.peernote")
        let before = try dir.bytes("mine.peernote")
        let process = Process()
        // SIGXFSZ as a shell gives it (the test runner may ignore it, and an ignored signal stays
        // ignored in its children); 200 blocks of 1 KiB: more than either input, less than their merge.
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["--default-signal=XFSZ", "/bin/bash", "-c",
                             "ulimit -f 200; exec \"$0\" merge mine.peernote theirs.peernote -o out.peernote", Binary.path]
        process.currentDirectoryURL = URL(fileURLWithPath: dir.path(""))
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        try #require(before.count < 200 * 1024, "the inputs fit the limit")
        #expect(process.terminationStatus == 74, "\(message)")
        #expect(message.hasPrefix("pnmerge: ") && message.contains("out.peernote") && message.contains("File too large"), "\(message)")
        #expect(try dir.bytes("mine.peernote") == before)
        let left = try FileManager.default.contentsOfDirectory(atPath: dir.path("")).sorted()
        #expect(left == ["mine.peernote", "theirs.peernote"], "\(left)")
    }
}
