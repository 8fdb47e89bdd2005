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
import CFileSystem

/// Why a file could not be read or written. Messages name the file.
///
/// `problem` says what went wrong (`is a directory`, `rename failed: …`); `aftermath` whether
/// the message also says what became of the file, so that a caller that adds its own words
/// about it (a write that kept a copy aside instead) can tell without reading the text.
public struct FileError: Error, Equatable, Sendable, CustomStringConvertible {
    public var path: String
    /// What went wrong, without what became of the file.
    public var problem: String
    /// What the message says became of the file, after `problem`.
    public var aftermath: Aftermath
    /// The `errno` of the system call that failed, where one did: `ENOENT` when the file (or
    /// a folder on its path) does not exist (`isMissing`), `EACCES` when it may not be read.
    public var code: Int32?
    /// Whether the write was refused because the bytes it would write do not load
    /// (`Document.checkLoadable`): nothing was written, and the input is at fault, not the disk.
    public var resultWouldNotLoad = false

    /// What a `FileError`'s message says became of the file.
    public enum Aftermath: Equatable, Sendable {
        /// Nothing: the message is the problem alone.
        case unstated
        /// `; not written`, then `hint` in parentheses if there is one.
        case notWritten(hint: String?)
        /// `; not changed`, then `hint` in parentheses if there is one (a file the writer refused to touch).
        case notChanged(hint: String?)

        var suffix: String {
            switch self {
            case .unstated: ""
            case .notWritten(let hint): "; not written" + (hint.map { " (\($0))" } ?? "")
            case .notChanged(let hint): "; not changed" + (hint.map { " (\($0))" } ?? "")
            }
        }
    }

    public init(path: String, message: String, code: Int32? = nil) {
        self.init(path: path, problem: message, aftermath: .unstated, code: code)
    }

    public init(path: String, problem: String, aftermath: Aftermath, code: Int32? = nil) {
        self.path = path
        self.problem = problem
        self.aftermath = aftermath
        self.code = code
    }

    /// `problem`, then what became of the file (`aftermath`).
    public var message: String { problem + aftermath.suffix }
    /// Whether the file does not exist (an app's "open, or create it if missing").
    public var isMissing: Bool { code == ENOENT }
    public var description: String { "\(path): \(message)" }
}

/// A failure to open a document file: the file itself, or its contents.
public enum DocumentFileError: Error, Equatable, Sendable, CustomStringConvertible {
    case file(FileError)
    case document(path: String, PeerNoteError)

    /// `FILE: offset N: what is wrong` or `FILE: what is wrong`.
    public var description: String {
        switch self {
        case .file(let e): e.description
        case .document(let path, let e): "\(path): \(e)"
        }
    }
}

// The errors' messages, for `localizedDescription` (what Foundation, SwiftUI and AppKit show).
extension FileError: LocalizedError {
    public var errorDescription: String? { description }
}

extension DocumentFileError: LocalizedError {
    public var errorDescription: String? { description }
}
