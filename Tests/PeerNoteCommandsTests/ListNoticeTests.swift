import Foundation
import PeerNote
import PeerNoteCLISupport
import Testing
import TestSupport
@testable import PeerNoteCommands
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What `peernote list` says besides the notes: open conflicts, an empty notebook.
@Suite("peernote list: the conflicts count and the empty listing")
struct ListNoticeTests {
    /// `m.peernote`: note "N" retitled and reprioritised on two copies, merged: two conflicts.
    func conflicted(_ dir: TempDir, name: String = "m.peernote") throws {
        let a = Document(title: "T", author: "alice")
        let n = a.addNote(title: "N", body: "abc")
        let b = a.fork(author: "bob")
        try a.setNoteTitle(n, "A")
        try a.setPriority(n, .high)
        try b.setNoteTitle(n, "B")
        try b.setPriority(n, .low)
        try a.merge(b)
        #expect(a.conflicts.count == 2)
        try FileStore.writeAtomically(a.save(), to: dir.file(name))
    }

    @Test("list ends with one line on standard error when the notebook has conflicts; standard output is the list alone")
    func listConflicts() throws {
        let dir = try TempDir()
        try conflicted(dir)
        let r = try Binary.run(["list", "m.peernote"], in: dir)
        #expect(r.status == 0)
        #expect(r.out.split(separator: "\n").count == 1, "\(r.out)")
        #expect(r.out.contains("  A  ") || r.out.contains("  B  "), "\(r.out)")
        #expect(r.err == "peernote: m.peernote: 2 conflicts (see: peernote conflicts m.peernote)\n")
        let deleted = try Binary.run(["list", "--deleted", "m.peernote"], in: dir)
        #expect(deleted.out.isEmpty)
        #expect(deleted.err == "peernote: m.peernote: 2 conflicts (see: peernote conflicts m.peernote)\n")

        try conflicted(dir, name: "my notes.peernote")
        let quoted = try Binary.run(["list", "my notes.peernote"], in: dir)
        #expect(quoted.err == "peernote: my notes.peernote: 2 conflicts (see: peernote conflicts 'my notes.peernote')\n")

        // Standard input is named as the other messages name it.
        #expect(PeerNoteCLI.List.conflictsLine(2, file: "-") == "<stdin>: 2 conflicts")
        #expect(PeerNoteCLI.List.conflictsLine(0, file: "m.peernote") == nil)
        // A name starting with a dash is given as ./NAME, which a pasted command does not take for an option.
        #expect(PeerNoteCLI.List.conflictsLine(1, file: "-c.peernote") == "-c.peernote: 1 conflict (see: peernote conflicts ./-c.peernote)")

        // A notebook without conflicts: no line.
        #expect(try Binary.run(["new", "c.peernote"], in: dir).status == 0)
        #expect(try Binary.run(["add", "c.peernote", "--title", "x"], in: dir).status == 0)
        let clean = try Binary.run(["list", "c.peernote"], in: dir)
        #expect(clean.err.isEmpty)
    }

    @Test("One conflict is '1 conflict'")
    func oneConflict() throws {
        let dir = try TempDir()
        let a = Document(title: "T", author: "alice")
        let n = a.addNote(title: "N", body: "abc")
        let b = a.fork(author: "bob")
        try a.setNoteTitle(n, "A")
        try b.setNoteTitle(n, "B")
        try a.merge(b)
        try FileStore.writeAtomically(a.save(), to: dir.file("one.peernote"))
        let r = try Binary.run(["list", "one.peernote"], in: dir)
        #expect(r.err == "peernote: one.peernote: 1 conflict (see: peernote conflicts one.peernote)\n")
    }

    @Test("list of an empty notebook prints nothing to a pipe or file, '(no notes)' to a terminal")
    func emptyList() throws {
        let dir = try TempDir()
        #expect(try Binary.run(["new", "e.peernote"], in: dir).status == 0)
        let piped = try Binary.run(["list", "e.peernote"], in: dir)
        #expect(piped.status == 0)
        #expect(piped.out.isEmpty)
        #expect(piped.err.isEmpty)

        #expect(try onTerminal(["list", "e.peernote"], in: dir) == "(no notes)\r\n")
        #expect(try onTerminal(["list", "--deleted", "e.peernote"], in: dir) == "(no deleted notes)\r\n")
        #expect(try Binary.run(["add", "e.peernote", "--title", "Only"], in: dir).status == 0)
        let one = try onTerminal(["list", "e.peernote"], in: dir)
        #expect(one.contains("Only") && !one.contains("(no notes)"), "\(one)")
    }

    /// What `peernote ARGS` writes when its standard output is a terminal (a pseudo-terminal,
    /// whose line discipline turns each line break into CR LF).
    func onTerminal(_ args: [String], in dir: TempDir) throws -> String {
        let master = open("/dev/ptmx", O_RDWR | O_NOCTTY)
        try #require(master >= 0)
        defer { close(master) }
        #if os(Linux)
        // grantpt, unlockpt and ptsname are not in Swift's Glibc module: their ioctls
        // (TIOCSPTLCK, TIOCGPTN), whose macros Swift cannot import.
        var unlock: Int32 = 0
        var number: UInt32 = 0
        try #require(ioctl(master, UInt(0x4004_5431), &unlock) == 0 && ioctl(master, UInt(0x8004_5430), &number) == 0)
        let name = "/dev/pts/\(number)"
        #else
        try #require(grantpt(master) == 0 && unlockpt(master) == 0)
        let name = try #require(ptsname(master).map { String(cString: $0) })
        #endif
        let terminal = try #require(FileHandle(forUpdatingAtPath: name))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try Binary.require())
        process.arguments = args
        process.currentDirectoryURL = URL(fileURLWithPath: dir.path)
        process.environment = Binary.environment([:])
        process.standardOutput = terminal
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try terminal.close()
        #expect(process.terminationStatus == 0)
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        // Everything the child wrote is in the master's buffer by now; read it without blocking.
        let flags = fcntl(master, F_GETFL)
        _ = fcntl(master, F_SETFL, flags | O_NONBLOCK)
        while true {
            let n = read(master, &buffer, buffer.count)
            if n <= 0 { break }
            out += buffer[0 ..< n]
        }
        return String(decoding: out, as: UTF8.self)
    }
}
