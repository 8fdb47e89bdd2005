import Foundation
import PeerNote
import Testing
import TestSupport

/// Runs any program with output captured through files (so large output cannot block).
enum Command {
    static func run(_ executable: String, _ args: [String], in directory: String, environment: [String: String],
                    stdin: [UInt8] = []) throws -> RunResult {
        let dir = try TempDir()
        let outPath = dir.path("stdout"), errPath = dir.path("stderr"), inPath = dir.path("stdin")
        try Data().write(to: URL(fileURLWithPath: outPath))
        try Data().write(to: URL(fileURLWithPath: errPath))
        try Data(stdin).write(to: URL(fileURLWithPath: inPath))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = args
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        process.environment = environment
        let out = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
        let err = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
        let input = try FileHandle(forReadingFrom: URL(fileURLWithPath: inPath))
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try process.run()
        process.waitUntilExit()
        try out.close(); try err.close(); try input.close()
        let outBytes = try dir.bytes("stdout")
        return RunResult(status: process.terminationStatus, out: String(decoding: outBytes, as: UTF8.self),
                         err: String(decoding: try dir.bytes("stderr"), as: UTF8.self), outBytes: outBytes)
    }
}

/// A real git repository in a temporary directory, with its own HOME (so no personal git config leaks in)
/// and the built pnmerge on PATH, as a user who installed it would have.
final class GitRepo {
    let home: TempDir
    let dir: TempDir
    let environment: [String: String]
    var root: String { dir.url.path }

    /// `withPnmergeOnPath: false` leaves the build directory off PATH (git-setup must then name the binary by path).
    init(withPnmergeOnPath: Bool = true) throws {
        _ = try Binary.require()
        home = try TempDir()
        dir = try TempDir()
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("GIT_") && $0.key != "XDG_CONFIG_HOME" }
        let binDir = (Binary.path as NSString).deletingLastPathComponent
        let systemPath = "/usr/local/bin:/usr/bin:/bin"
        env["PATH"] = withPnmergeOnPath ? binDir + ":" + (env["PATH"] ?? systemPath) : systemPath
        env["HOME"] = home.url.path
        env["GIT_CONFIG_NOSYSTEM"] = "1"
        env["GIT_EDITOR"] = "true"
        env["GIT_TERMINAL_PROMPT"] = "0"
        env["LC_ALL"] = "C"
        env["TZ"] = "UTC"
        env["NO_COLOR"] = "1"
        environment = env
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/git") || FileManager.default.isExecutableFile(atPath: "/usr/local/bin/git"),
                     "git is needed for these tests (apt-get install git)")
        try git("init", "-q", "-b", "main")
        try git("config", "user.name", "Test User")
        try git("config", "user.email", "test@example.com")
        try git("config", "commit.gpgsign", "false")
    }

    /// Runs `git ARGS` in the repository; fails the test unless it exits 0.
    @discardableResult
    func git(_ args: String..., sourceLocation: SourceLocation = #_sourceLocation) throws -> RunResult {
        let r = try tryGit(args)
        try #require(r.status == 0, "git \(args.joined(separator: " ")) exited \(r.status): \(r.err)\(r.out)", sourceLocation: sourceLocation)
        return r
    }

    /// Runs `git ARGS`, whatever its exit status.
    func tryGit(_ args: [String]) throws -> RunResult {
        try Command.run("/usr/bin/env", ["git"] + args, in: root, environment: environment)
    }

    /// Runs the built pnmerge in the repository with this environment.
    func pnmerge(_ args: [String], in directory: String? = nil) throws -> RunResult {
        try Command.run(Binary.path, args, in: directory ?? root, environment: environment)
    }

    func path(_ name: String) -> String { dir.path(name) }
    func bytes(_ name: String) throws -> [UInt8] { try dir.bytes(name) }

    /// Loads a notebook from the work tree, lets `edit` change it as `author`, and writes it back (appending).
    func edit(_ name: String, author: String, _ edit: (Document) throws -> Void) throws {
        let document = try Document.open(path(name))
        document.author = author
        try edit(document)
        try document.write(to: path(name), mode: .incremental)
    }

    /// `pnmerge show --format json` of a work-tree file, parsed.
    func notebookJSON(_ name: String) throws -> [String: Any] {
        let r = try pnmerge(["show", "--format", "json", name])
        try #require(r.status == 0, "\(r.err)")
        return try #require(try parseJSON(r.out) as? [String: Any])
    }
}
