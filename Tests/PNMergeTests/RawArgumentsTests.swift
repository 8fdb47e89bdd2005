import Foundation
import PeerNote
import PeerNoteCLISupport
import Testing
import TestSupport

/// Creates a file whose name is `name`'s bytes (need not be UTF-8) in `dir`, holding `contents`.
/// Foundation and String paths cannot name such a file, so this goes through `open(2)` with a C string.
@discardableResult
func createFile(named name: [UInt8], in dir: String, contents: [UInt8] = []) throws -> [CChar] {
    let path = (Array(dir.utf8) + [UInt8(ascii: "/")] + name).map { CChar(bitPattern: $0) } + [0]
    let fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o644)
    try #require(fd >= 0, "cannot create the test file: \(String(cString: strerror(errno)))")
    defer { close(fd) }
    try #require(writeAll(contents, to: fd) == nil)
    return path
}

/// The bytes of the file at a C path.
func readFile(at path: [CChar]) throws -> [UInt8] {
    let fd = open(path, O_RDONLY)
    try #require(fd >= 0, "cannot open the test file: \(String(cString: strerror(errno)))")
    defer { close(fd) }
    var out: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        try #require(n >= 0)
        if n == 0 { return out }
        out += buffer[0 ..< n]
    }
}

/// Runs a shell script (`$0` is the first of `args`), for arguments that are not UTF-8: Process
/// and Subprocess take Strings, which cannot hold them, so the script makes them with printf.
func shell(_ script: String, _ args: [String] = []) throws -> Subprocess.Result {
    try Subprocess.run(["sh", "-c", script] + (args.isEmpty ? ["sh"] : args))
}

@Suite("Arguments and names that are not UTF-8")
struct RawArgumentsTests {
    @Test("UTF-8 is checked on the bytes: stray, overlong, surrogate, too large and cut-short sequences are not UTF-8")
    func validity() {
        #expect(UTF8Bytes.isValid([UInt8]()))
        #expect(UTF8Bytes.isValid(Array("notes.peernote".utf8)))
        #expect(UTF8Bytes.isValid(Array("Überblick 会议 🎉".utf8)))
        for bad: [UInt8] in [[0xFF], [0xFF, 0xFE], [0x6E, 0x80], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80],
                             [0xC3], Array("caf".utf8) + [0xE9]] {
            #expect(!UTF8Bytes.isValid(bad), "\(bad)")
        }
    }

    @Test("Shown for a message: UTF-8 as it is, each other byte as \\xFF, control characters made visible")
    func shown() {
        #expect(UTF8Bytes.shown(Array("plain é.peernote".utf8)) == "plain é.peernote")
        #expect(UTF8Bytes.shown([0xFF, 0xFE]) == "\\xFF\\xFE")
        #expect(UTF8Bytes.shown(Array("nonutf".utf8) + [0xFF] + Array(".peernote".utf8)) == "nonutf\\xFF.peernote")
        #expect(UTF8Bytes.shown(Array("caf".utf8) + [0xE9, 0x0A]) == "caf\\xE9\\n", "Latin-1 é, then a line break")
        #expect(UTF8Bytes.shown([0x1B, 0x5B, 0x32, 0x4A, 0x05]) == "\\u{1b}[2J\\u{5}", "an escape sequence cannot act on the terminal")
        #expect(UTF8Bytes.shown([0xC3]) == "\\xC3", "a sequence cut short")
        #expect(UTF8Bytes.shown(Array("é".utf8) + [0xC3]) == "é\\xC3")
        #expect(UTF8Bytes.shown([0x0F]) == "\\u{f}")
        #expect(UTF8Bytes.shown([0x01, 0x80]) == "\\u{1}\\x80")
    }

    @Test("The first argument after the program name that is not UTF-8 is refused: its position, its bytes escaped, what to do")
    func refusal() {
        let program: [UInt8] = Array("/opt/bin/pn".utf8) + [0xFF]
        // The program name is not an argument: a tool installed under such a path still runs.
        #expect(RawArguments.firstInvalid([program, Array("validate".utf8), Array("a.peernote".utf8)]) == nil)
        #expect(RawArguments.refusal([program], tool: "pnmerge") == nil)

        let title: [[UInt8]] = [Array("peernote".utf8), Array("add".utf8), Array("u1.peernote".utf8), Array("--title".utf8), [0xFF, 0xFE],
                                Array("--body".utf8), [0xFF]]
        #expect(RawArguments.firstInvalid(title) == .init(position: 4, bytes: [0xFF, 0xFE], previous: Array("--title".utf8)))
        #expect(RawArguments.refusal(title, tool: "peernote", namesFile: { _ in false })
            == "peernote: argument 4 (after --title) is not valid UTF-8: \\xFF\\xFE (bytes that are not UTF-8 shown as \\xNN); "
            + "give it as UTF-8 text (for a file whose name is not UTF-8, rename the file first)")

        let file: [[UInt8]] = [Array("pnmerge".utf8), Array("validate".utf8), Array("nonutf".utf8) + [0xFF] + Array(".peernote".utf8)]
        #expect(RawArguments.refusal(file, tool: "pnmerge", namesFile: { $0 == file[2] })
            == "pnmerge: argument 2 is not valid UTF-8: nonutf\\xFF.peernote (bytes that are not UTF-8 shown as \\xNN); "
            + "it names a file: rename the file to a UTF-8 name (for example with mv) and give that name")

        let joined: [[UInt8]] = [Array("peernote".utf8), Array("--title=".utf8) + [0xE9]]
        let line = RawArguments.refusal(joined, tool: "peernote", namesFile: { _ in false })
        #expect(line?.hasPrefix("peernote: argument 1 is not valid UTF-8: --title=\\xE9 (") == true, "\(line ?? "nil")")
        for line in [RawArguments.refusal(title, tool: "t"), RawArguments.refusal(file, tool: "t")] {
            #expect(line?.contains("\n") == false)
        }
    }

    @Test("Whether an argument names a file is looked up with its own bytes")
    func namesExistingFile() throws {
        let dir = try TempDir()
        let name: [UInt8] = Array("nonutf".utf8) + [0xFF] + Array(".peernote".utf8)
        let path = Array(dir.url.path.utf8) + [UInt8(ascii: "/")] + name
        #expect(!RawArguments.namesExistingFile(path))
        try createFile(named: name, in: dir.url.path)
        #expect(RawArguments.namesExistingFile(path))
        #expect(!RawArguments.namesExistingFile(Array(dir.url.path.utf8) + Array("/nonutf\u{FFFD}.peernote".utf8)),
                "the repaired name is another file")
        #expect(!RawArguments.namesExistingFile([]))
        #expect(!RawArguments.namesExistingFile(path + [0] + Array("x".utf8)))
    }

    @Test("A MINE that is a link to a name that is not UTF-8 is refused at once (74), nothing written; in a folder whose name is not UTF-8, a link is followed")
    func linkToNonUTF8Name() throws {
        _ = try Binary.require()
        let dir = try TempDir()
        let s = try Diverged()
        let mine = s.alice.save(), theirs = s.bob.save()
        let name: [UInt8] = Array("caf".utf8) + [0xE9] + Array(".peernote".utf8)
        let target = try createFile(named: name, in: dir.url.path, contents: mine)
        _ = try dir.write(theirs, "theirs.peernote")
        try #require(symlink(name.map { CChar(bitPattern: $0) } + [0], dir.path("link.peernote")) == 0)
        // Before: a 10 s wait for "…/caf\u{FFFD}.peernote" to come back, then exit 74 and a
        // conflict copy under that repaired name.
        let start = Date()
        let r = try shell(#"cd "$1" && exec "$0" merge link.peernote theirs.peernote"#, [Binary.path, dir.url.path])
        #expect(Date().timeIntervalSince(start) < 5)
        #expect(r.status == ExitStatus.ioError.rawValue, "\(String(decoding: r.err, as: UTF8.self))")
        #expect(String(decoding: r.err, as: UTF8.self) == "pnmerge: link.peernote: is a symbolic link to a name that is not valid UTF-8; not written (rename the file it points to)\n")
        #expect(try readFile(at: target) == mine)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path).count == 3, "nothing else was made")

        // A link in a folder whose name is not UTF-8 (the working directory): its target is
        // found beside it, and the merge writes through it (before: "the folder …/d\u{FFFD} does
        // not exist", exit 74).
        _ = try dir.write(mine, "mine.peernote")
        let merged = try shell(#"cd "$1" && mkdir "$(printf 'd\351')" && cd "$(printf 'd\351')" && cp ../mine.peernote n.peernote && ln -s n.peernote l.peernote && "$0" merge l.peernote ../theirs.peernote >/dev/null && test -L l.peernote && cp n.peernote ../merged.peernote"#,
                               [Binary.path, dir.url.path])
        #expect(merged.status == 0, "\(String(decoding: merged.err, as: UTF8.self))")
        let result = try Document.load(try dir.bytes("merged.peernote"))
        let expected = try Document.load(mine)
        try expected.merge(Document.load(theirs))
        #expect(result.changeCount == expected.changeCount && result.notebook == expected.notebook)
    }

    @Test("pnmerge refuses an argument that is not UTF-8 with one line and exit 64, before parsing; the file is still there")
    func pnmergeBinary() throws {
        _ = try Binary.require()
        let dir = try TempDir()
        let s = try Diverged()
        let name: [UInt8] = Array("nonutf".utf8) + [0xFF] + Array(".peernote".utf8)
        try createFile(named: name, in: dir.url.path, contents: s.alice.save())
        // Before the check, the repaired name gave "nonutf\u{FFFD}.peernote: No such file or directory" (exit 66).
        let r = try shell(#"cd "$1" && exec "$0" validate "$(printf 'nonutf\377.peernote')""#, [Binary.path, dir.url.path])
        let err = String(decoding: r.err, as: UTF8.self)
        #expect(r.status == ExitStatus.usage.rawValue, "\(err)")
        #expect(err == "pnmerge: argument 2 is not valid UTF-8: nonutf\\xFF.peernote (bytes that are not UTF-8 shown as \\xNN); "
            + "it names a file: rename the file to a UTF-8 name (for example with mv) and give that name\n")
        #expect(r.out.isEmpty)
        // Renamed, it validates.
        let renamed = try shell(#"cd "$1" && mv -- "$(printf 'nonutf\377.peernote')" renamed.peernote && exec "$0" validate renamed.peernote"#,
                                [Binary.path, dir.url.path])
        #expect(renamed.status == 0, "\(String(decoding: renamed.err, as: UTF8.self))")
        // Options are checked too, and every subcommand (help included) is behind the check.
        let option = try shell(#"exec "$0" merge a.peernote b.peernote -o "$(printf '\351t\351.peernote')""#, [Binary.path])
        #expect(option.status == ExitStatus.usage.rawValue)
        #expect(String(decoding: option.err, as: UTF8.self).hasPrefix("pnmerge: argument 5 (after -o) is not valid UTF-8: \\xE9t\\xE9.peernote ("))
    }
}
