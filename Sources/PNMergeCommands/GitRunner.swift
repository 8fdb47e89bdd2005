#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import PeerNoteCLISupport

/// Runs `git` (found on PATH) in a directory and collects what it prints, for `git-setup`.
struct GitRunner {
    /// The outcome of one git command.
    struct Result {
        var status: Int32
        var out: String
        var err: String

        /// Standard output without the final line break.
        var value: String { out.hasSuffix("\n") ? String(out.dropLast()) : out }
    }

    /// Where git runs (`git -C DIRECTORY …`).
    var directory: String

    /// Runs `git ARGS`; a git that cannot be started is exit 66 (git is an input this command needs).
    func run(_ args: [String]) throws(CLIFailure) -> Result {
        let ran: Subprocess.Result
        do { ran = try Subprocess.run(["git", "-C", directory] + args) } catch {
            if error.notFound { throw CLIFailure(.noInput, "cannot run git: it is not installed or not on PATH") }
            throw CLIFailure(.noInput, error.description)  // "cannot run git: Permission denied"
        }
        let result = Result(status: ran.status, out: String(decoding: ran.out, as: UTF8.self), err: String(decoding: ran.err, as: UTF8.self))
        if result.status == 127 { throw CLIFailure(.noInput, "cannot run git: it is not installed or not on PATH") }
        return result
    }

    /// Runs `git ARGS` and fails (exit 74, git's own message) unless it succeeds.
    @discardableResult
    func require(_ args: [String]) throws(CLIFailure) -> Result {
        let result = try run(args)
        guard result.status == 0 else {
            let why = result.err.trimmingWhitespace
            throw CLIFailure(.ioError, "git \(args.joined(separator: " ")) failed" + (why.isEmpty ? " (exit \(result.status))" : ": \(why)"))
        }
        return result
    }
}
