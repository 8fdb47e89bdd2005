import Foundation
import PeerNote
import PeerNoteCLISupport
import Testing
import TestSupport

/// Where `pnmerge` writes: a FIFO or device named by `-o` is written into (never replaced by a
/// regular file), a read-only document is left alone, and a binary document is not written to a
/// terminal.
@Suite("Output safety")
struct OutputSafetyTests {
    @Test("-o naming a FIFO writes the merged document into it; the FIFO stays a FIFO")
    func fifoOutput() throws {
        let dir = try TempDir()
        let s = try Diverged()
        try s.write(to: dir)
        let fifo = dir.path("pipe")
        try #require(mkfifo(fifo, 0o600) == 0)
        // A reader that does not block, so that the writer's open succeeds at once.
        let reader = open(fifo, O_RDONLY | O_NONBLOCK)
        try #require(reader >= 0)
        defer { close(reader) }

        let r = pnmerge(["merge", dir.path("alice.peernote"), dir.path("bob.peernote"), "-o", fifo])
        #expect(r.status == 0, "\(r.err)")
        var st = stat()
        #expect(lstat(fifo, &st) == 0 && (st.st_mode & S_IFMT) == S_IFIFO, "still a FIFO")
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(reader, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            received += chunk[0 ..< n]
        }
        #expect(received == (try s.merged()).save(.compact))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path("")).filter { $0.contains(".tmp-") }.isEmpty, "no temporary file left")
    }

    @Test("-o naming a symbolic link that loops is refused (73); both links stay links")
    func loopingLinkOutput() throws {
        let dir = try TempDir()
        try Diverged().write(to: dir)
        let one = dir.path("loop1"), two = dir.path("loop2")
        try FileManager.default.createSymbolicLink(atPath: two, withDestinationPath: one)
        try FileManager.default.createSymbolicLink(atPath: one, withDestinationPath: two)
        let r = pnmerge(["merge", dir.path("alice.peernote"), dir.path("bob.peernote"), "-o", one])
        #expect(r.status == 73, "\(r.err)")
        #expect(r.err == "pnmerge: \(one): already exists and cannot be read (Too many levels of symbolic links); not replaced (choose another output)\n")
        var st = stat()
        #expect(lstat(one, &st) == 0 && st.st_mode & S_IFMT == S_IFLNK)
        #expect(lstat(two, &st) == 0 && st.st_mode & S_IFMT == S_IFLNK)
    }

    @Test("-o naming a folder is refused naming it (73, as any OUT not replaced); nothing is written")
    func folderOutput() throws {
        let dir = try TempDir()
        try Diverged().write(to: dir)
        let folder = dir.path("sub")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let r = pnmerge(["merge", dir.path("alice.peernote"), dir.path("bob.peernote"), "-o", folder])
        #expect(r.status == 73, "as every OUT that is not replaced")
        #expect(r.err == "pnmerge: \(folder): is a directory; not replaced (name a file as OUT)\n", "\(r.err)")
        let dry = pnmerge(["merge", dir.path("alice.peernote"), dir.path("bob.peernote"), "-o", folder, "--dry-run"])
        #expect(dry.status == 73, "\(dry.err)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
    }

    @Test("A read-only MINE is not merged into (exit 74, bytes unchanged); -o onto a read-only file likewise")
    func readOnlyTarget() throws {
        let dir = try TempDir()
        try Diverged().write(to: dir)
        let mine = dir.path("alice.peernote")
        let before = try dir.bytes("alice.peernote")
        try #require(chmod(mine, 0o444) == 0)
        let r = pnmerge(["merge", mine, dir.path("bob.peernote")])
        #expect(r.status == 74, "\(r.err)")
        #expect(r.err.contains("\(mine): is read-only; not changed"), "\(r.err)")
        #expect(try dir.bytes("alice.peernote") == before)
        var st = stat()
        #expect(stat(mine, &st) == 0 && st.st_mode & 0o777 == 0o444)

        let out = try dir.write([1, 2, 3], "out.peernote")
        try #require(chmod(out, 0o400) == 0)
        let o = pnmerge(["merge", dir.path("bob.peernote"), mine, "-o", out])
        #expect(o.status == 74, "\(o.err)")
        #expect(try dir.bytes("out.peernote") == [1, 2, 3])
        // Writable again: the merge goes through.
        try #require(chmod(mine, 0o644) == 0)
        #expect(pnmerge(["merge", mine, dir.path("bob.peernote")]).status == 0)
    }

    @Test("A new OUT of merge -o or salvage -o gets the input's permission bits (less the umask): a private notebook stays private")
    func newOutputKeepsPrivacy() throws {
        let dir = try TempDir()
        try Diverged().write(to: dir)
        let mine = dir.path("alice.peernote")
        try #require(chmod(mine, 0o600) == 0)
        let mask = umask(0)
        umask(mask)
        func mode(_ path: String) -> mode_t {
            var st = stat()
            return stat(path, &st) == 0 ? st.st_mode & 0o777 : 0
        }
        let out = dir.path("merged.peernote")
        let r = pnmerge(["merge", mine, dir.path("bob.peernote"), "-o", out])
        #expect(r.status == 0, "\(r.err)")
        #expect(mode(out) == 0o600 & ~mask)

        // An existing OUT keeps its own bits.
        try #require(chmod(out, 0o644) == 0)
        #expect(pnmerge(["merge", mine, dir.path("bob.peernote"), "-o", out]).status == 0)
        #expect(mode(out) == 0o644)

        // Merged in place (an appended block), then cut short inside that block.
        let appended = try dir.write(try dir.bytes("alice.peernote"), "appended.peernote")
        #expect(pnmerge(["merge", appended, dir.path("bob.peernote")]).status == 0)
        let damaged = try dir.write(Array(try dir.bytes("appended.peernote").dropLast(7)), "damaged.peernote")
        try #require(chmod(damaged, 0o640) == 0)
        let saved = dir.path("saved.peernote")
        let s = pnmerge(["salvage", damaged, "-o", saved])
        #expect(s.status == 0, "\(s.err)")
        #expect(mode(saved) == 0o640 & ~mask)
    }

    @Test("The report names what happened to MINE: merged into it in place, merged with THEIRS for -o, would merge for a dry run")
    func reportHeader() throws {
        let dir = try TempDir()
        try Diverged().write(to: dir)
        let mine = dir.path("alice.peernote"), theirs = dir.path("bob.peernote")
        let dry = pnmerge(["merge", "--dry-run", mine, theirs])
        #expect(dry.out.hasPrefix("Would merge into \(mine):\n"), "\(dry.out)")
        let dryOut = pnmerge(["merge", "--dry-run", mine, theirs, "-o", dir.path("o.peernote")])
        #expect(dryOut.out.hasPrefix("Would merge \(mine) with:\n"), "\(dryOut.out)")
        let out = pnmerge(["merge", mine, theirs, "-o", dir.path("o.peernote")])
        #expect(out.out.hasPrefix("Merged \(mine) with:\n"), "\(out.out)")
        let inPlace = pnmerge(["merge", mine, theirs])
        #expect(inPlace.out.hasPrefix("Merged into \(mine):\n"), "\(inPlace.out)")
    }

    @Test("Suggested commands quote their paths: a shell given the quoted word gets the path back as it was")
    func shellQuoting() throws {
        #expect(ShellQuote.word("notes.peernote") == "notes.peernote")
        #expect(ShellQuote.word("dir/a-b_c@1%2+3=4:5,6.peernote") == "dir/a-b_c@1%2+3=4:5,6.peernote")
        #expect(ShellQuote.word("my notes.peernote") == "'my notes.peernote'")
        // A name with a control character is quoted $'…' (one line in a message): bash's and zsh's
        // syntax, not plain sh's.
        #expect(ShellQuote.word("new\nline.peernote") == "$'new\\nline.peernote'")
        #expect(ShellQuote.word("a\u{1B}'\\") == "$'a\\x1b\\'\\\\'")
        // A name that starts with a dash is not taken for an option; standard input stays `-`.
        #expect(ShellQuote.path("-x.peernote") == "./-x.peernote")
        #expect(ShellQuote.path("- x") == "'./- x'")
        #expect(ShellQuote.path("-") == "-")
        #expect(ShellQuote.path("/abs/-x") == "/abs/-x")
        for word in ["my notes.peernote", "it's.peernote", "$(rm -rf x)", "a\"b`c`", "", "-x", "tab\there", "ünï code", "a'b'c",
                     "new\nline", "esc\u{1B}[2J", "cr\r'q'\\"] {
            let process = Process()
            let control = word.unicodeScalars.contains { $0.value < 0x20 }
            process.executableURL = URL(fileURLWithPath: control ? "/bin/bash" : "/bin/sh")
            process.arguments = ["-c", "printf %s " + ShellQuote.word(word)]
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            let out = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            #expect(String(decoding: out, as: UTF8.self) == word, "\(ShellQuote.word(word))")
        }
    }

    #if os(Linux)
    // util-linux's script(1) (Debian: bsdutils, an essential package); other systems' script
    // takes other options.
    @Test("-o - refuses to write a binary document to a terminal (run under script(1), which gives it one)")
    func terminalOutput() throws {
        let script = "/usr/bin/script"
        guard FileManager.default.isExecutableFile(atPath: script) else {
            Issue.record("script(1) is not installed at \(script) (Debian: bsdutils); this test needs it to give pnmerge a terminal")
            return
        }
        let bin = try Binary.require()
        let dir = try TempDir()
        try Diverged().write(to: dir)
        let command = "'\(Binary.path)' merge '\(dir.path("alice.peernote"))' '\(dir.path("bob.peernote"))' -o -"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: script)
        // -q: no banner; -e: script's status is the command's; the typescript goes nowhere.
        process.arguments = ["-qec", command, "/dev/null"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 64, "\(output)")
        #expect(output.contains("standard output is a terminal: refusing to write a binary document to it"), "\(output)")
        // A document starts with CBOR tags 55799 and "pnot": none of its bytes reached the terminal.
        #expect(!output.contains("pnot"), "no document bytes")
        // Through a pipe, the same command writes the document.
        let piped = try bin.run(["merge", dir.path("alice.peernote"), dir.path("bob.peernote"), "-o", "-"])
        #expect(piped.status == 0)
        #expect(try Document.load(piped.outBytes).notes.count > 0)
    }
    #endif
}
