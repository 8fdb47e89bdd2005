import Foundation
import Testing
import TestSupport

/// Runs the built `peernote` binary.
enum Binary {
    /// `.build/debug/peernote` in this package.
    static var path: String { Tool.peernote.path }

    /// Fails the test clearly when the binary has not been built.
    static func require() throws -> String { try Tool.peernote.require().path }

    /// The environment runs get: no editor, a fixed author, no colour, plus `extra`.
    static func environment(_ extra: [String: String]) -> [String: String] {
        var env = ProcessInfo.processInfo.environment
        for key in ["VISUAL", "EDITOR", "PEERNOTE_AUTHOR", "NO_COLOR"] { env.removeValue(forKey: key) }
        env["PEERNOTE_AUTHOR"] = "tester"
        env["NO_COLOR"] = "1"
        for (k, v) in extra { env[k] = v }
        return env
    }

    /// Starts `peernote args…` in `dir`; call `finish` on the result.
    static func start(_ args: [String], in dir: TempDir, env: [String: String] = [:], stdin: String? = nil) throws -> Running {
        try Tool.peernote.start(args, in: dir.path, environment: environment(env), stdin: stdin.map { .pipe(Array($0.utf8)) } ?? .nullDevice)
    }

    /// Runs `peernote args…` in `dir` to the end.
    static func run(_ args: [String], in dir: TempDir, env: [String: String] = [:], stdin: String? = nil) throws -> RunResult {
        try start(args, in: dir, env: env, stdin: stdin).finish()
    }

    typealias Running = Tool.Running
}

/// Whether two notebook contents are the same scalar for scalar (String `==` would accept
/// canonically equivalent text).
func sameScalars(_ a: String, _ b: String) -> Bool {
    Array(a.unicodeScalars) == Array(b.unicodeScalars)
}
