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

/// Why a file could not be read or written: one case for each thing that happens, each naming
/// the file (`path`) and carrying what the message needs (an `errno`, a folder, the document
/// error that made a save not load). The message is built in one place, `description`
/// (`FILE: what happened`, then what became of the file where the case says it: `; not written`,
/// `; not changed`). Messages state the problem; advice that names a command of the tools is
/// added by the command libraries. A caller decides on the case, never on the text.
public enum FileError: Error, Equatable, Sendable, CustomStringConvertible {
    // Reading.
    /// The file, or a folder on its path, does not exist (`ENOENT`).
    case missing(path: String)
    /// A system call reading the file (`stat`, `open`, `read`, `opendir`) failed with `errno`
    /// (other than `ENOENT`: `missing`).
    case notReadable(path: String, errno: Int32)
    /// A folder where a file was expected.
    case isDirectory(path: String)
    /// Neither a regular file nor, where `pipesAllowed`, a FIFO.
    case notRegularFile(path: String, pipesAllowed: Bool)
    /// Larger than `limit` bytes (`FileStore.maxFileSize`); `-` is standard input.
    case tooLarge(path: String, limit: Int)
    /// Not a folder where a notebook folder was expected.
    case notAFolder(path: String)
    /// Holds a notebook that does not load (damaged, or a newer format version); not changed.
    case doesNotLoad(path: String, PeerNoteError)

    // Replacing or creating.
    /// A regular file without write permission for anyone; not changed.
    case readOnly(path: String)
    /// A regular file this user may not write (`access(2)` failed with `errno`); not changed.
    case notWritable(path: String, errno: Int32)
    /// Neither a regular file, a folder, a character device nor a FIFO (a socket, a block device).
    case notReplaceable(path: String)
    /// A character device or FIFO that could not be opened for writing.
    case cannotOpenForWriting(path: String, errno: Int32)
    /// A system call of the write failed with `errno`.
    case failed(path: String, SystemCall, errno: Int32)
    /// Something (even a dangling link) is at a path that is only ever created.
    case alreadyExists(path: String)
    /// The file could not be linked or renamed to its name (`errno`).
    case cannotCreate(path: String, errno: Int32)
    /// The folder the file goes in does not exist.
    case folderMissing(path: String, folder: String)
    /// What should be the folder the file goes in is not a folder.
    case folderNotAFolder(path: String, folder: String)
    /// No temporary file could be made in `folder` (`errno`).
    case cannotCreateTemporary(path: String, folder: String, errno: Int32)
    /// The notebook folder could not be made (`mkdir` failed with `errno`).
    case cannotCreateFolder(path: String, errno: Int32)
    /// A symbolic link on the way names its target in bytes that are not UTF-8; not written.
    case linkNotUTF8(path: String)
    /// A symbolic link that leads back to itself; not written.
    case linkLoop(path: String)
    /// The bytes about to be written would not load (`Document.checkLoadable`); nothing was
    /// written, and the inputs are at fault, not the disk.
    case wouldNotLoad(path: String, PeerNoteError)
    /// What a write could not put in place could not be kept as a conflict copy beside it either.
    case cannotMakeConflictCopy(path: String)

    // Another writer meanwhile.
    /// A FIFO or a device took the place of the regular file that was read.
    case becameSpecial(path: String)
    /// The file changed while being written, and the version written meanwhile could not be
    /// exchanged back (`errno`); it is kept as `keptAs`.
    case changedNotPutBack(path: String, errno: Int32, keptAs: String)
    /// The file changed twice while being written; the version written meanwhile is kept as
    /// `keptAs`; not written.
    case changedTwice(path: String, keptAs: String)
    /// The file changed while being written, and what it held then could not be read back
    /// (`reading`); not written.
    indirect case changedUnreadable(path: String, reading: FileError)

    // Notebook folders.
    /// The notebook folder holds another notebook (no shared history); nothing was changed.
    case anotherNotebook(path: String)
    /// The document cannot be merged into the notebook folder's chain; nothing was changed.
    case cannotAddToFolder(path: String, PeerNoteError)
    /// Chunk `chunk` could not be linked into the notebook folder (`errno`); nothing was changed.
    case cannotAddChunk(path: String, chunk: String, errno: Int32)
    /// A single file could not be made a notebook folder in place (`InPlaceConversion`); not changed.
    case conversionFailed(path: String, ConversionStep)

    // The document's lock.
    /// The lock could not be taken (`flock` failed with `errno`; nil: no lock file was found).
    case cannotLock(path: String, errno: Int32?)
    /// `PEERNOTE_LOCK_DIR` is set to a relative path.
    case lockFolderNotAbsolute(path: String, folder: String)
    /// The lock folder could not be made (`errno`).
    case cannotCreateLockFolder(path: String, folder: String, errno: Int32)
    /// The lock folder is not safe to use (see `LockFolderProblem`).
    case unsafeLockFolder(path: String, folder: String, LockFolderProblem)
    /// The lock file could not be opened or made (`errno`).
    case cannotCreateLockFile(path: String, lockFile: String, errno: Int32)

    /// A system call of a write.
    public enum SystemCall: String, Equatable, Sendable {
        case write, fsync, dup, close, rename
    }

    /// Where making a notebook folder of a single file in place stopped (nothing changed at the file).
    public enum ConversionStep: Equatable, Sendable {
        /// The hidden folder beside the file could not be made (`errno`).
        case folderNotMade(errno: Int32)
        /// The notebook could not be written into the new folder.
        indirect case folderNotWritten(FileError)
        /// The folder made from the file does not read back holding all of it.
        case readBackIncomplete
        /// The file changed while it was being converted.
        case changedMeanwhile
        /// The file could not be moved aside (`errno`).
        case notMovedAside(errno: Int32)
        /// The folder could not take the file's name (`errno`).
        case notPutInPlace(errno: Int32)
    }

    /// Why the lock folder cannot be trusted.
    public enum LockFolderProblem: Equatable, Sendable {
        case unreadable(errno: Int32)
        case symbolicLink
        case notAFolder
        case otherOwner(owner: UInt32, user: UInt32)
        case writableByOthers(mode: UInt32)
    }

    /// What the message says became of the file.
    public enum Aftermath: Equatable, Sendable {
        /// Nothing: the message is the problem alone.
        case unstated
        /// `; not written`.
        case notWritten
        /// `; not changed` (a file the writer refused to touch).
        case notChanged
    }

    /// The error for a failed `stat`, `open` or `read` of `path` with `errno`: `missing` for
    /// `ENOENT`, else `notReadable`.
    static func reading(_ path: String, errno e: Int32) -> FileError {
        e == ENOENT ? .missing(path: path) : .notReadable(path: path, errno: e)
    }

    /// The file the error names.
    public var path: String {
        get {
            switch self {
            case .missing(let p), .notReadable(let p, _), .isDirectory(let p), .notRegularFile(let p, _), .tooLarge(let p, _),
                 .notAFolder(let p), .doesNotLoad(let p, _), .readOnly(let p), .notWritable(let p, _), .notReplaceable(let p),
                 .cannotOpenForWriting(let p, _), .failed(let p, _, _), .alreadyExists(let p), .cannotCreate(let p, _),
                 .folderMissing(let p, _), .folderNotAFolder(let p, _), .cannotCreateTemporary(let p, _, _), .cannotCreateFolder(let p, _),
                 .linkNotUTF8(let p), .linkLoop(let p), .wouldNotLoad(let p, _), .cannotMakeConflictCopy(let p), .becameSpecial(let p),
                 .changedNotPutBack(let p, _, _), .changedTwice(let p, _), .changedUnreadable(let p, _), .anotherNotebook(let p),
                 .cannotAddToFolder(let p, _), .cannotAddChunk(let p, _, _), .conversionFailed(let p, _), .cannotLock(let p, _),
                 .lockFolderNotAbsolute(let p, _), .cannotCreateLockFolder(let p, _, _), .unsafeLockFolder(let p, _, _),
                 .cannotCreateLockFile(let p, _, _):
                p
            }
        }
        set {
            switch self {
            case .missing: self = .missing(path: newValue)
            case .notReadable(_, let e): self = .notReadable(path: newValue, errno: e)
            case .isDirectory: self = .isDirectory(path: newValue)
            case .notRegularFile(_, let pipes): self = .notRegularFile(path: newValue, pipesAllowed: pipes)
            case .tooLarge(_, let limit): self = .tooLarge(path: newValue, limit: limit)
            case .notAFolder: self = .notAFolder(path: newValue)
            case .doesNotLoad(_, let e): self = .doesNotLoad(path: newValue, e)
            case .readOnly: self = .readOnly(path: newValue)
            case .notWritable(_, let e): self = .notWritable(path: newValue, errno: e)
            case .notReplaceable: self = .notReplaceable(path: newValue)
            case .cannotOpenForWriting(_, let e): self = .cannotOpenForWriting(path: newValue, errno: e)
            case .failed(_, let call, let e): self = .failed(path: newValue, call, errno: e)
            case .alreadyExists: self = .alreadyExists(path: newValue)
            case .cannotCreate(_, let e): self = .cannotCreate(path: newValue, errno: e)
            case .folderMissing(_, let f): self = .folderMissing(path: newValue, folder: f)
            case .folderNotAFolder(_, let f): self = .folderNotAFolder(path: newValue, folder: f)
            case .cannotCreateTemporary(_, let f, let e): self = .cannotCreateTemporary(path: newValue, folder: f, errno: e)
            case .cannotCreateFolder(_, let e): self = .cannotCreateFolder(path: newValue, errno: e)
            case .linkNotUTF8: self = .linkNotUTF8(path: newValue)
            case .linkLoop: self = .linkLoop(path: newValue)
            case .wouldNotLoad(_, let e): self = .wouldNotLoad(path: newValue, e)
            case .cannotMakeConflictCopy: self = .cannotMakeConflictCopy(path: newValue)
            case .becameSpecial: self = .becameSpecial(path: newValue)
            case .changedNotPutBack(_, let e, let k): self = .changedNotPutBack(path: newValue, errno: e, keptAs: k)
            case .changedTwice(_, let k): self = .changedTwice(path: newValue, keptAs: k)
            case .changedUnreadable(_, let r): self = .changedUnreadable(path: newValue, reading: r)
            case .anotherNotebook: self = .anotherNotebook(path: newValue)
            case .cannotAddToFolder(_, let e): self = .cannotAddToFolder(path: newValue, e)
            case .cannotAddChunk(_, let c, let e): self = .cannotAddChunk(path: newValue, chunk: c, errno: e)
            case .conversionFailed(_, let s): self = .conversionFailed(path: newValue, s)
            case .cannotLock(_, let e): self = .cannotLock(path: newValue, errno: e)
            case .lockFolderNotAbsolute(_, let f): self = .lockFolderNotAbsolute(path: newValue, folder: f)
            case .cannotCreateLockFolder(_, let f, let e): self = .cannotCreateLockFolder(path: newValue, folder: f, errno: e)
            case .unsafeLockFolder(_, let f, let p): self = .unsafeLockFolder(path: newValue, folder: f, p)
            case .cannotCreateLockFile(_, let l, let e): self = .cannotCreateLockFile(path: newValue, lockFile: l, errno: e)
            }
        }
    }

    /// The `errno` of the system call that failed, where one did.
    public var code: Int32? {
        switch self {
        case .missing: ENOENT
        case .notReadable(_, let e), .notWritable(_, let e), .cannotOpenForWriting(_, let e), .failed(_, _, let e), .cannotCreate(_, let e),
             .cannotCreateTemporary(_, _, let e), .cannotCreateFolder(_, let e), .changedNotPutBack(_, let e, _), .cannotAddChunk(_, _, let e),
             .cannotCreateLockFolder(_, _, let e), .cannotCreateLockFile(_, _, let e):
            e
        case .cannotLock(_, let e): e
        default: nil
        }
    }

    /// Whether the file does not exist (an app's "open, or create it if missing").
    public var isMissing: Bool { if case .missing = self { true } else { false } }

    /// Whether the write was refused because the bytes it would write do not load
    /// (`Document.checkLoadable`): nothing was written, and the input is at fault, not the disk.
    public var resultWouldNotLoad: Bool { if case .wouldNotLoad = self { true } else { false } }

    /// What the message says became of the file.
    public var aftermath: Aftermath { parts.aftermath }

    /// The message without the path: what happened, then what became of the file.
    public var message: String {
        let (problem, aftermath, note) = parts
        let said = switch aftermath {
        case .unstated: ""
        case .notWritten: "; not written"
        case .notChanged: "; not changed"
        }
        return problem + said + (note.map { " (\($0))" } ?? "")
    }

    /// `FILE: what happened` (`message` after the path).
    public var description: String { "\(path): \(message)" }

    /// The message in its parts: what happened; what became of the file; a note on it, in
    /// parentheses after the aftermath.
    var parts: (problem: String, aftermath: Aftermath, note: String?) {
        func text(_ e: Int32) -> String { String(cString: strerror(e)) }
        switch self {
        case .missing: return (text(ENOENT), .unstated, nil)
        case .notReadable(_, let e): return (text(e), .unstated, nil)
        case .isDirectory: return ("is a directory", .unstated, nil)
        case .notRegularFile(_, let pipes): return (pipes ? "is not a regular file or a pipe" : "is not a regular file", .unstated, nil)
        case .tooLarge(let path, let limit): return (path == "-" ? "input is larger than \(limit) bytes" : "is larger than \(limit) bytes", .unstated, nil)
        case .notAFolder: return ("is not a folder", .unstated, nil)
        case .doesNotLoad(_, let e): return (e.description, .notChanged, nil)
        case .readOnly: return ("is read-only", .notChanged, "chmod u+w makes it writable")
        case .notWritable(_, let e): return ("cannot be written: \(text(e))", .notChanged, nil)
        case .notReplaceable: return ("is not a regular file; refusing to replace it", .unstated, nil)
        case .cannotOpenForWriting(_, let e): return ("cannot open for writing: \(text(e))", .unstated, nil)
        case .failed(_, let call, let e): return ("\(call.rawValue) failed: \(text(e))", .unstated, nil)
        case .alreadyExists: return ("already exists; refusing to overwrite it", .unstated, nil)
        case .cannotCreate(_, let e): return ("cannot create: \(text(e))", .unstated, nil)
        case .folderMissing(_, let folder): return ("the folder \(folder) does not exist", .unstated, nil)
        case .folderNotAFolder(_, let folder): return ("\(folder) is not a folder", .unstated, nil)
        case .cannotCreateTemporary(_, let folder, let e): return ("cannot create a temporary file in \(folder): \(text(e))", .unstated, nil)
        case .cannotCreateFolder(_, let e): return ("cannot create the folder: \(text(e))", .unstated, nil)
        case .linkNotUTF8: return ("is a symbolic link to a name that is not valid UTF-8", .notWritten, "rename the file it points to")
        case .linkLoop: return ("is a symbolic link that leads back to itself (\(text(ELOOP)))", .notWritten, nil)
        case .wouldNotLoad(_, let e): return ("the result would not load (\(e.description))", .notWritten, "nothing was changed")
        case .cannotMakeConflictCopy: return ("cannot make a conflict copy beside it", .unstated, nil)
        case .becameSpecial: return ("is no longer a regular file (a FIFO or a device took its place)", .unstated, nil)
        case .changedNotPutBack(_, let e, let kept):
            return ("changed while being written, and could not be put back (\(text(e))); the version written meanwhile is kept as \(kept)", .unstated, nil)
        case .changedTwice(_, let kept): return ("changed twice while being written", .notWritten, "a version written meanwhile is kept as \(kept)")
        case .changedUnreadable(_, let reading): return ("changed while being written, and \(reading.message)", .notWritten, nil)
        case .anotherNotebook: return ("holds another notebook (no shared history with the one being written)", .notWritten, "nothing was changed")
        case .cannotAddToFolder(_, let e): return ("cannot add to this notebook folder: \(e)", .notWritten, "nothing was changed")
        case .cannotAddChunk(_, let chunk, let e): return ("cannot add chunk \(chunk): \(text(e))", .notWritten, "nothing was changed")
        case .conversionFailed(_, let step):
            let problem = switch step {
            case .folderNotMade(let e): "cannot make a folder beside it: \(text(e))"
            case .folderNotWritten(let error): "cannot write the notebook folder: \(error.message)"
            case .readBackIncomplete: "the notebook folder made from it does not read back whole"
            case .changedMeanwhile: "changed while it was being converted"
            case .notMovedAside(let e): "cannot move it aside: \(text(e))"
            case .notPutInPlace(let e): "cannot put the notebook folder in its place: \(text(e))"
            }
            return (problem, .notChanged, nil)
        case .cannotLock(_, let e): return (e.map { "cannot lock: \(text($0))" } ?? "cannot lock", .unstated, nil)
        case .lockFolderNotAbsolute(_, let folder):
            return ("PEERNOTE_LOCK_DIR is not an absolute path (\(folder)): set it to one, such as \"$HOME/.peernote-locks\", or unset it", .unstated, nil)
        case .cannotCreateLockFolder(_, let folder, let e): return ("cannot create the lock folder \(folder): \(text(e))", .unstated, nil)
        case .unsafeLockFolder(_, let folder, let problem):
            let why = switch problem {
            case .unreadable(let e): "cannot read it: \(text(e))"
            case .symbolicLink: "it is a symbolic link"
            case .notAFolder: "it is not a folder"
            case .otherOwner(let owner, let user): "it belongs to user \(owner), not to user \(user)"
            case .writableByOthers(let mode): "others can write to it (mode \(String(mode & 0o777, radix: 8)))"
            }
            return ("refusing the lock folder \(folder): \(why) (remove it, or set PEERNOTE_LOCK_DIR to a private folder for every run)", .unstated, nil)
        case .cannotCreateLockFile(_, let lockFile, let e): return ("cannot create lock file \(lockFile): \(text(e))", .unstated, nil)
        }
    }
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
