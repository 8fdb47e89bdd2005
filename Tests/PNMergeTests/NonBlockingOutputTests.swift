import Foundation
import PeerNote
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Both tools' results to a standard output that a parent process left non-blocking (O_NONBLOCK
/// on the pipe, as some runtimes hand it to children): a full pipe is waited on, not reported as
/// a failure that cuts the output short.
@Suite("Output to a non-blocking pipe")
struct NonBlockingOutputTests {
    /// Runs `tool ARGS` with standard output a non-blocking pipe that is read only after a pause
    /// (so that it fills); returns the exit status and everything read.
    static func runNonBlocking(_ tool: Tool, _ args: [String]) throws -> (status: Int32, out: [UInt8]) {
        var fds: [Int32] = [0, 0]
        try #require(pipe(&fds) == 0)
        let flags = fcntl(fds[1], F_GETFL)
        try #require(fcntl(fds[1], F_SETFL, flags | O_NONBLOCK) == 0)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try tool.require().path)
        process.arguments = args
        process.standardOutput = FileHandle(fileDescriptor: fds[1], closeOnDealloc: false)
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        var env = ProcessInfo.processInfo.environment
        env["TZ"] = "UTC"
        env["NO_COLOR"] = "1"
        process.environment = env
        try process.run()
        close(fds[1])
        usleep(300_000)
        let out = FileHandle(fileDescriptor: fds[0], closeOnDealloc: true).readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, Array(out))
    }

    @Test("pnmerge show and peernote export write all of a large notebook and exit 0")
    func largeOutput() throws {
        let dir = try TempDir()
        let doc = Document(title: "Many")
        for i in 0 ..< 2_000 {
            doc.addNote(title: "N\(i)", body: String(repeating: "text \(i) ", count: 30), created: Date(timeIntervalSince1970: 1_700_000_000))
        }
        let file = try dir.write(doc.save(), "big.peernote")
        for (tool, args) in [(Tool.pnmerge, ["show", file]), (Tool.peernote, ["export", file]), (Tool.peernote, ["list", file, "--json"])] {
            let expected = try tool.run(args, environment: ["TZ": "UTC", "NO_COLOR": "1"], stdin: .file([]))
            #expect(expected.status == 0)
            #expect(expected.out.utf8.count > 256 * 1024, "more than a pipe holds")
            let r = try Self.runNonBlocking(tool, args)
            #expect(r.status == 0, "\(tool.name) \(args[0])")
            #expect(r.out == Array(expected.out.utf8), "\(tool.name) \(args[0])")
        }
    }
}
