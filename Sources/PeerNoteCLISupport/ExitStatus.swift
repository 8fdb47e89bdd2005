import ArgumentParser
import PeerNote

/// The exit codes of `pnmerge` and `peernote`: the one table (man/pnmerge.1 repeats it).
///
/// | code | meaning |
/// |------|---------|
/// | 0    | success (including "already up to date") |
/// | 1    | the operation found conflicts it could not resolve (git merge driver: a conflict git should mark) |
/// | 2    | the documents are unrelated (no shared history); nothing was written |
/// | 64   | usage error: bad arguments or options |
/// | 65   | invalid or damaged input document, or one only a newer version can handle (a newer format version; copies holding different values of one field a newer version wrote); or a result that would not load, which is then not written |
/// | 66   | an input file is missing, unreadable, or not a regular file |
/// | 73   | an output file could not be created because it exists |
/// | 74   | I/O error while writing (or the file kept changing for 60 s, was moved away or deleted and did not come back in 10 s, or became another notebook, garbage or a folder while being written: the change is kept in a conflict copy the message names) |
public enum ExitStatus: Int32, CaseIterable, Sendable {
    case success = 0
    case conflict = 1
    case unrelated = 2
    case usage = 64
    case invalidInput = 65
    case noInput = 66
    case cannotCreate = 73
    case ioError = 74

    public var exitCode: ExitCode { ExitCode(rawValue) }

    public var meaning: String {
        switch self {
        case .success: "success"
        case .conflict: "conflicts that need a person (git merge driver)"
        case .unrelated: "the documents share no history; nothing was written"
        case .usage: "usage error"
        case .invalidInput: "invalid or damaged document, or one only a newer version can handle"
        case .noInput: "input file missing, unreadable or of a kind not read there"
        case .cannotCreate: "output file already exists"
        case .ioError: "I/O error while writing"
        }
    }
}

/// A failure a command reports: one line on stderr, then exit with `status`.
public struct CLIFailure: Error, CustomStringConvertible, Sendable {
    public var status: ExitStatus
    public var message: String

    public init(_ status: ExitStatus, _ message: String) {
        self.status = status
        self.message = message
    }

    public var description: String { message }

    /// Maps library errors to a message and exit status.
    public init(_ error: DocumentFileError) {
        switch error {
        case .file(let e):
            self.init(.noInput, e.description)
        case .document(let path, let e):
            switch e {
            case .unrelated: self.init(.unrelated, "\(path): \(e)")
            default: self.init(.invalidInput, "\(path): \(e)\(SalvageHint.suffix(for: e, path: path))")
            }
        }
    }

    public init(writing error: FileError) {
        // A result that would not load is the inputs' doing (their history asks for more than a
        // file may), not the disk's.
        self.init(error.resultWouldNotLoad ? .invalidInput : .ioError, error.description)
    }

    /// A write through the library's write loop that did not put the document in place (74),
    /// saying which command merges in a change it left in a conflict copy.
    public init(writing error: WriteError) {
        if error.resultWouldNotLoad {
            self.init(.invalidInput, error.describe(mergedBy: "pnmerge sync"))
            return
        }
        self.init(.ioError, error.describe(mergedBy: "pnmerge sync"))
    }
}

extension PeerNoteError {
    /// The error in the tools' words: the library's line, and, for a field only a newer
    /// version can merge, which tool can.
    public var toolText: String {
        if case .fieldConflict = self { return description + " (a newer pnmerge can)" }
        return description
    }
}
