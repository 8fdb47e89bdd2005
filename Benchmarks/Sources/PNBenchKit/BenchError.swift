import ArgumentParser
import Foundation

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
        FileHandle.standardError.write(Data("pnbench: \(error.description)\n".utf8))
        throw ExitCode(error.status)
    }
}

/// Writes `text` and a newline to stdout.
func emit(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}
