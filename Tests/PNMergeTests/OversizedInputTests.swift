import Foundation
@testable import PeerNote
import Testing
import TestSupport

/// A file over `FileStore.maxFileSize` (1 GiB) given to the tools: refused at once from its size,
/// with one line naming it, even under a memory limit far below a gigabyte (not read up to
/// its first gigabyte before being refused, which under `ulimit -v` kills the tool with "failed
/// to allocate", exit 134). The file is sparse: it costs no disk.
@Suite("Inputs over the size limit")
struct OversizedInputTests {
    /// A sparse 3 GiB file, `big.peernote`, and a small valid notebook beside it, in a new folder.
    static func folder() throws -> (dir: TempDir, big: String, small: String) {
        let dir = try TempDir()
        let big = dir.path("big.peernote")
        let fd = open(big, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        try #require(fd >= 0)
        defer { close(fd) }
        try #require(ftruncate(fd, 3 << 30) == 0)
        let small = try dir.write(Document(title: "Small", author: "a").save(.compact), "small.peernote")
        return (dir, big, small)
    }

    /// Runs `tool ARGS` (with `< input` when given) under `ulimit -v 600000` (about 586 MB of
    /// address space): its status and standard error.
    static func runLimited(_ tool: String, _ args: [String], input: String? = nil, kilobytes: Int = 600_000) throws -> (status: Int32, err: String) {
        let bash = "/bin/bash"
        try #require(FileManager.default.isExecutableFile(atPath: bash), "ulimit needs \(bash)")
        let executable = Binary.packageRoot.appendingPathComponent(".build/debug/\(tool)").path
        try #require(FileManager.default.isExecutableFile(atPath: executable), "\(tool) is not built; run `swift build` first")
        let script = "ulimit -v \(kilobytes) && exec \"$@\"" + (input == nil ? "" : " < \"$INPUT\"")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: bash)
        process.arguments = ["-c", script, "bash", executable] + args
        var env = ProcessInfo.processInfo.environment
        env["INPUT"] = input
        env["PEERNOTE_AUTHOR"] = "tester"
        process.environment = env
        let errFile = try TempDir()
        let errPath = errFile.path("stderr")
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)
        let err = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
        process.standardOutput = FileHandle.nullDevice
        process.standardError = err
        try process.run()
        process.waitUntilExit()
        try err.close()
        let status = process.terminationReason == .exit ? process.terminationStatus : 128 + process.terminationStatus
        return (status, String(decoding: try errFile.bytes("stderr"), as: UTF8.self))
    }

    static let tooLarge = "is larger than \(FileStore.maxFileSize) bytes"

    @Test("The memory limits of the process's control groups: cgroup v2 memory.max and v1 memory.limit_in_bytes, the least up the tree; no limit, 'max' and v1's 'unlimited' are none (not memory.current, which counts page cache and would refuse notebooks in a busy container)")
    func cgroupLimits() throws {
        let root = try TempDir()
        func put(_ relative: String, _ value: String) throws {
            let path = root.path(relative)
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data(value.utf8).write(to: URL(fileURLWithPath: path))
        }
        let base = root.url.path
        try put("memory.max", "max\n")
        try put("user.slice/memory.max", "4294967296\n")
        try put("user.slice/app/memory.max", "max\n")
        try put("user.slice/app/memory.current", "4294000000\n")
        #expect(MemoryBudget.cgroupLimit("0::/user.slice/app\n", root: base) == 4_294_967_296, "the parent's limit, the group's use not taken off")
        #expect(MemoryBudget.cgroupLimit("0::/\n", root: base) == nil)
        try put("memory/docker/abc/memory.limit_in_bytes", "536870912\n")
        try put("memory/memory.limit_in_bytes", "9223372036854771712\n")
        #expect(MemoryBudget.cgroupLimit("12:cpu,cpuacct:/docker/abc\n4:memory:/docker/abc\n1:name=systemd:/\n", root: base) == 536_870_912)
        #expect(MemoryBudget.cgroupLimit("4:memory:/\n", root: base) == nil, "v1's 'unlimited' is no limit")
        #expect(MemoryBudget.cgroupLimit("0::/nowhere\n", root: base) == nil)
        #expect(MemoryBudget.available() > 0)
    }

    @Test("Memory the process already holds is not counted as available to the next document it reads (a merge reads two)")
    func heldMemoryIsNotAvailable() {
        let before = MemoryBudget.available()
        // 256 MB, touched so that it is resident.
        var held = [UInt8](repeating: 1, count: 256 << 20)
        held[held.count - 1] = 2
        let during = MemoryBudget.available()
        #expect(MemoryBudget.residentBytes() >= 256 << 20)
        #expect(during + (200 << 20) <= before, "available \(before) before, \(during) while 256 MB are held")
        withExtendedLifetime(held) {}
    }

    @Test("A small file whose text inflates past the memory the process may use is refused before it is inflated (65, one line), not a fatal error")
    func inflatesPastMemory() throws {
        let dir = try TempDir()
        let doc = Document(title: "Big", author: "a")
        doc.addNote(title: "z", body: String(repeating: "a", count: 15_000_000))
        let path = try dir.write(doc.save(.compact), "big.peernote")
        #expect(try dir.bytes("big.peernote").count < 40_000, "a thousandfold compression")
        // Under about 146 MB of address space: 15 MB of text needs about 257 MB by the estimate.
        for (tool, args) in [("pnmerge", ["validate", path]), ("pnmerge", ["show", path]), ("pnmerge", ["merge", path, path, "--dry-run"]),
                             ("pnmerge", ["salvage", path, "-o", dir.path("s.peernote")]), ("peernote", ["list", path])] {
            let r = try Self.runLimited(tool, args, kilobytes: 150_000)
            #expect(r.status == 65, "\(tool) \(args): \(r.err)")
            #expect(r.err.contains("big.peernote: reading it needs about 257 MB of memory, more than the "), "\(tool) \(args): \(r.err)")
            #expect(r.err.contains("this process can use; nothing was read"), "\(r.err)")
            #expect(r.err.split(separator: "\n").count == 1, "\(r.err)")
        }
        #expect(!FileManager.default.fileExists(atPath: dir.path("s.peernote")))
        // With room enough it reads (the check does not refuse what fits).
        let roomy = try Self.runLimited("pnmerge", ["validate", path], kilobytes: 2_000_000)
        #expect(roomy.status == 0, "\(roomy.err)")
        // The library's own estimate and check.
        #expect(MemoryBudget.needed(inflating: 15_000_000) == 15_000_000 * 16 + (16 << 20))
        #expect(MemoryBudget.needed(inflating: .max) == .max)
        #expect(throws: Never.self) { try MemoryBudget.check(inflating: 1 << 20, offset: 0) }
        // An app's write(to:) over a file too large to read here does not take it for damage
        // (which it would keep aside and replace): it refuses, as for a newer format.
        let refusal = try #require(Document.unreadableHere(.needsMoreMemory(needed: 2_000_000_000, available: 1_000_000_000)))
        #expect(refusal.hasPrefix("holds a notebook this process cannot read (reading it needs about 2.0 GB of memory, more than the 1.0 GB"), "\(refusal)")
        #expect(Document.unreadableHere(.unsupportedVersion(9)) != nil)
        #expect(Document.unreadableHere(.invalidDocument(offset: 3, message: "damaged")) == nil)
        #expect(MemoryBudget.megabytes(1_990_000_000) == "2.0 GB" && MemoryBudget.megabytes(1_940_000_000) == "1.9 GB" && MemoryBudget.megabytes(196_777_216) == "197 MB")
    }

    @Test("The library refuses a file over the limit from its size, having read nothing")
    func refusedFromSize() throws {
        let (dir, big, _) = try Self.folder()
        defer { withExtendedLifetime(dir) {} }
        #expect(throws: FileError.tooLarge(path: big, limit: FileStore.maxFileSize)) { try FileStore.read(big) }
        #expect(FileError.tooLarge(path: big, limit: FileStore.maxFileSize).message == Self.tooLarge)
        // What is left from the offset counts: this is how standard input redirected from a file is read.
        let fd = open(big, O_RDONLY)
        try #require(fd >= 0)
        defer { close(fd) }
        #expect(throws: FileError.tooLarge(path: "-", limit: FileStore.maxFileSize)) { try FileStore.readToEnd(fd, path: "-") }
        #expect(FileError.tooLarge(path: "-", limit: FileStore.maxFileSize).message == "input " + Self.tooLarge)
        #expect(lseek(fd, 0, SEEK_CUR) == 0, "nothing was read")
    }

    @Test("pnmerge validate, merge, git-driver and peernote list and add refuse it under a 600 MB limit: one line, exit 66 (the git driver's 1)")
    func toolsUnderMemoryLimit() throws {
        let (dir, big, small) = try Self.folder()
        for (tool, args, input, status) in [("pnmerge", ["validate", big], nil, 66), ("pnmerge", ["validate", "-"], big, 66),
                                            ("pnmerge", ["merge", small, big, "-o", dir.path("out.peernote")], nil, 66),
                                            ("pnmerge", ["git-driver", small, small, big, "notes.peernote"], nil, 1),
                                            ("peernote", ["list", big], nil, 66), ("peernote", ["list", "-"], big, 66),
                                            ("peernote", ["add", small, "--title", "T", "--body-file", big], nil, 66)] as [(String, [String], String?, Int32)] {
            let r = try Self.runLimited(tool, args, input: input)
            let what = "\(tool) \(args.joined(separator: " "))\(input == nil ? "" : " < big")"
            #expect(r.status == status, "\(what): \(r.err)")
            #expect(r.err.contains(Self.tooLarge) && r.err.split(separator: "\n").count == 1, "\(what): \(r.err)")
        }
        #expect(!FileManager.default.fileExists(atPath: dir.path("out.peernote")))
        #expect(try Document.load(dir.bytes("small.peernote")).notebook.notes.isEmpty, "nothing was added")
    }

    @Test("pnmerge sync reports it and leaves it alone: one line, exit 66")
    func syncSkipsIt() throws {
        let (dir, _, _) = try Self.folder()
        let r = try Self.runLimited("pnmerge", ["sync", dir.url.path])
        #expect(r.err.contains("big.peernote: " + Self.tooLarge + "; left alone"), "\(r.err)")
        #expect(r.status == 66, "\(r.err)")
    }
}
