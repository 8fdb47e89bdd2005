import Foundation
import Testing
import TestSupport

/// An interactive shell in a pseudo-terminal (through util-linux's `script`), typed into as a
/// person types: for completion scripts, which only run inside the shell's line editor.
///
/// Output is collected on a thread of its own; `waitFor` returns once the text holds what a
/// test looks for, or fails after `timeout` with what the terminal showed.
final class ShellSession: @unchecked Sendable {
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private let lock = NSLock()
    private var buffer = Data()
    private let name: String

    /// The path of `program` on `PATH`, or a test failure that says how to install it: a test
    /// that needs a shell fails without one, it is not skipped.
    static func require(_ program: String, package: String? = nil) throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for dir in path.split(separator: ":") where FileManager.default.isExecutableFile(atPath: "\(dir)/\(program)") {
            return "\(dir)/\(program)"
        }
        throw SupportError("\(program) is not installed, and this test runs the completion scripts in it: apt-get install \(package ?? program) (make deps installs it)")
    }

    /// Starts `command` (a shell command line) in a pseudo-terminal, in `directory`, with `environment`.
    init(_ command: String, name: String, in directory: String, environment: [String: String]) throws {
        self.name = name
        process.executableURL = URL(fileURLWithPath: try Self.require("script", package: "bsdutils"))
        // -q: no start and end lines; -f: flush each write; -e: the shell's exit status.
        process.arguments = ["-qfec", command, "/dev/null"]
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        process.environment = environment
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let handle = output.fileHandleForReading
        Thread.detachNewThread { [self] in
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                lock.withLock { buffer.append(data) }
            }
        }
    }

    /// Everything the terminal has shown so far, as text.
    var text: String { lock.withLock { String(decoding: buffer, as: UTF8.self) } }

    /// Types `keys` (a tab asks for completions).
    func type(_ keys: String) {
        input.fileHandleForWriting.write(Data(keys.utf8))
    }

    /// Waits until `done` holds for the text shown after `offset` characters, and returns that
    /// text; after `timeout` seconds, throws with what was shown.
    @discardableResult
    func waitFor(after offset: Int = 0, timeout: TimeInterval = 60, _ what: String, _ done: (String) -> Bool) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let shown = String(text.dropFirst(offset))
            if done(shown) { return shown }
            guard Date() < deadline, process.isRunning else {
                throw SupportError("\(name): no \(what) within \(Int(timeout)) s; the terminal showed: \(shown.debugDescription)")
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    /// Clears the line, leaves the shell, and waits for it (ending it after 10 s).
    func close() {
        type("\u{15}exit\r")
        try? input.fileHandleForWriting.close()
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }
}
