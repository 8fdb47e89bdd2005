import Foundation
import Testing

/// A fresh directory for one test, removed when the value is released.
final class TempDir {
    let path: String

    init() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("peernote-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        path = url.path
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func file(_ name: String) -> String { path + "/" + name }

    func write(_ name: String, _ text: String, executable: Bool = false) throws -> String {
        let p = file(name)
        try Data(text.utf8).write(to: URL(fileURLWithPath: p))
        if executable { try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: p) }
        return p
    }

    func bytes(_ name: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: file(name))) }

    /// Names of the entries in the directory.
    func entries() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: path).sorted() }
}

/// What a run of the binary did.
struct RunResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Runs the built `peernote` binary.
enum Binary {
    /// `.build/debug/peernote` in this package (found from this file's path).
    static var path: String {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".build/debug/peernote").path
    }

    /// Fails the test clearly when the binary has not been built.
    static func require() throws -> String {
        let p = path
        try #require(FileManager.default.isExecutableFile(atPath: p),
                     "the peernote binary is missing at \(p); run `swift build --build-tests` first")
        return p
    }

    /// The environment runs get: no editor, a fixed author, no colour, plus `extra`.
    static func environment(_ extra: [String: String]) -> [String: String] {
        var env = ProcessInfo.processInfo.environment
        for key in ["VISUAL", "EDITOR", "PEERNOTE_AUTHOR", "NO_COLOR"] { env.removeValue(forKey: key) }
        env["PEERNOTE_AUTHOR"] = "tester"
        env["NO_COLOR"] = "1"
        for (k, v) in extra { env[k] = v }
        return env
    }

    /// Starts `peernote args…`; call `finish` on the result.
    static func start(_ args: [String], in dir: TempDir, env: [String: String] = [:], stdin: String? = nil) throws -> Running {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try require())
        process.arguments = args
        process.currentDirectoryURL = URL(fileURLWithPath: dir.path)
        process.environment = environment(env)
        let id = UUID().uuidString
        let outPath = NSTemporaryDirectory() + "/pn-out-\(id)"
        let errPath = NSTemporaryDirectory() + "/pn-err-\(id)"
        try #require(FileManager.default.createFile(atPath: outPath, contents: nil))
        try #require(FileManager.default.createFile(atPath: errPath, contents: nil))
        let out = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
        let err = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
        process.standardOutput = out
        process.standardError = err
        var input: Pipe?
        if stdin != nil {
            let pipe = Pipe()
            process.standardInput = pipe
            input = pipe
        } else {
            process.standardInput = FileHandle.nullDevice
        }
        try process.run()
        if let stdin, let input {
            input.fileHandleForWriting.write(Data(stdin.utf8))
            try input.fileHandleForWriting.close()
        }
        return Running(process: process, outPath: outPath, errPath: errPath, handles: [out, err])
    }

    /// Runs `peernote args…` to the end.
    static func run(_ args: [String], in dir: TempDir, env: [String: String] = [:], stdin: String? = nil) throws -> RunResult {
        try start(args, in: dir, env: env, stdin: stdin).finish()
    }

    /// A started process whose output goes to temporary files.
    struct Running {
        let process: Process
        let outPath: String
        let errPath: String
        let handles: [FileHandle]

        func finish() throws -> RunResult {
            process.waitUntilExit()
            for h in handles { try h.close() }
            defer {
                try? FileManager.default.removeItem(atPath: outPath)
                try? FileManager.default.removeItem(atPath: errPath)
            }
            let out = try String(decoding: Data(contentsOf: URL(fileURLWithPath: outPath)), as: UTF8.self)
            let err = try String(decoding: Data(contentsOf: URL(fileURLWithPath: errPath)), as: UTF8.self)
            return RunResult(status: process.terminationStatus, stdout: out, stderr: err)
        }
    }
}

/// Whether two notebook contents are the same scalar for scalar (String `==` would accept
/// canonically equivalent text).
func sameScalars(_ a: String, _ b: String) -> Bool {
    Array(a.unicodeScalars) == Array(b.unicodeScalars)
}
