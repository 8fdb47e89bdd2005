import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What can go wrong in `pnbench`, with the exit status each gets (the project's table:
/// 64 usage, 65 invalid input, 66 missing input, 70 internal failure, 74 write error).
enum BenchError: Error, CustomStringConvertible {
    case usage(String)
    case missingTrace(path: String, message: String)
    case invalidTrace(path: String, message: String)
    /// The library refused an edit of a valid trace, or a replay went wrong.
    case replayFailed(String)
    case writeFailed(String)

    var description: String {
        switch self {
        case .usage(let m): m
        case .missingTrace(let path, let m): "\(path): \(m)"
        case .invalidTrace(let path, let m): "\(path): \(m)"
        case .replayFailed(let m): m
        case .writeFailed(let m): m
        }
    }

    var status: Int32 {
        switch self {
        case .usage: 64
        case .invalidTrace: 65
        case .missingTrace: 66
        case .replayFailed: 70
        case .writeFailed: 74
        }
    }
}

/// Runs a command body, turning a `BenchError` into one line on stderr and its exit status.
func reportingErrors(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let error as BenchError {
        writeStandardError("pnbench: \(error.description)\n")
        throw ExitCode(error.status)
    }
}

/// Writes `text` and a newline to stdout.
func emit(_ text: String) {
    print(text)
}

/// Writes `text` to stderr, unbuffered.
func writeStandardError(_ text: String) {
    var bytes = Array(text.utf8)[...]
    while !bytes.isEmpty {
        let n = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        if n > 0 { bytes = bytes.dropFirst(n) } else if n < 0 && errno == EINTR { continue } else { return }
    }
}
