#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import PeerNote
import PeerNoteCLISupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a command's results, errors and binary output go, and where standard input comes from.
///
/// The tool uses `StandardStreams`; tests run commands in-process with a `CapturedOutput`.
public protocol OutputSink: Sendable {
    /// Writes text to the results stream (standard output); a failure has status 74.
    func write(_ text: String) throws(CLIFailure)
    /// Writes raw bytes to the results stream (a document written with `-o -`).
    func writeBytes(_ bytes: [UInt8]) throws(CLIFailure)
    /// Writes text to the error stream (standard error).
    func writeError(_ text: String)
    /// All of standard input; a failure has status 66.
    func readInput() throws(CLIFailure) -> [UInt8]
    /// Whether results may be coloured.
    var colorEnabled: Bool { get }
    /// The time zone used for times shown to people (JSON always uses UTC).
    var timeZone: DisplayTimeZone { get }
    /// Whether the results stream is a terminal (a binary document is not written to one).
    var resultsAreTerminal: Bool { get }
    /// Whether standard input is a regular file (`< FILE`): only then does a salvage hint name
    /// `-` (`SalvageHint`), since a pipe's bytes are gone once read.
    var standardInputIsFile: Bool { get }
}

extension OutputSink {
    public var resultsAreTerminal: Bool { false }
    public var standardInputIsFile: Bool { false }
}

extension Console {
    /// Refuses (usage, before any work) to write a binary document to a terminal, as gzip does.
    static func checkBinaryOutputAllowed() throws(CLIFailure) {
        if current.resultsAreTerminal {
            throw CLIFailure(.usage, "standard output is a terminal: refusing to write a binary document to it (redirect it to a file or a pipe, or give -o FILE)")
        }
    }
}

/// The process's real standard output, standard error and standard input.
public struct StandardStreams: OutputSink {
    public init() {}

    public func write(_ text: String) throws(CLIFailure) {
        try writeBytes(Array(text.utf8))
    }

    public func writeBytes(_ bytes: [UInt8]) throws(CLIFailure) {
        if let failure = writeAll(bytes, to: 1) {
            throw CLIFailure(.ioError, "standard output: write failed: \(POSIXText.describe(failure))")
        }
    }

    public func writeError(_ text: String) {
        writeAll(Array(text.utf8), to: 2)
    }

    public func readInput() throws(CLIFailure) -> [UInt8] {
        do { return try FileStore.readStandardInput() } catch {
            throw CLIFailure(.noInput, "<stdin>: \(error.message)")
        }
    }

    public var colorEnabled: Bool { Terminal.colorEnabled(fileDescriptor: 1) }
    public var timeZone: DisplayTimeZone { .local }
    public var resultsAreTerminal: Bool { isatty(1) == 1 }
    public var standardInputIsFile: Bool { SalvageHint.standardInputIsFile() }
}

/// Collects everything a command writes, for running commands in-process (tests, embedding).
public final class CapturedOutput: OutputSink, @unchecked Sendable {
    // @unchecked: every access to the mutable buffers goes through `lock`.
    private let lock = Lock()
    private var out: [UInt8] = []
    private var err = ""
    private let input: [UInt8]
    public let colorEnabled: Bool
    public let timeZone: DisplayTimeZone
    public let standardInputIsFile: Bool

    /// - Parameters:
    ///   - input: what the command reads as standard input (`-`).
    ///   - inputIsFile: whether that input stands for a regular file (`< FILE`) rather than a pipe.
    ///   - color: whether to colour results (as on a terminal).
    ///   - timeZone: the time zone for human-readable times (UTC by default, for reproducible output).
    public init(input: [UInt8] = [], inputIsFile: Bool = false, color: Bool = false, timeZone: DisplayTimeZone = .utc) {
        self.input = input
        self.standardInputIsFile = inputIsFile
        self.colorEnabled = color
        self.timeZone = timeZone
    }

    public func write(_ text: String) throws(CLIFailure) { lock.withLock { out += Array(text.utf8) } }
    public func writeBytes(_ bytes: [UInt8]) throws(CLIFailure) { lock.withLock { out += bytes } }
    public func writeError(_ text: String) { lock.withLock { err += text } }
    public func readInput() throws(CLIFailure) -> [UInt8] { input }

    /// Everything written to standard output, as text.
    public var standardOutput: String { lock.withLock { String(decoding: out, as: UTF8.self) } }
    /// Everything written to standard output, as bytes.
    public var standardOutputBytes: [UInt8] { lock.withLock { out } }
    /// Everything written to standard error.
    public var standardError: String { lock.withLock { err } }
}

/// The sink the running command writes to (a task-local, so in-process runs in parallel tests stay apart).
public enum Console {
    @TaskLocal public static var current: any OutputSink = StandardStreams()
}
