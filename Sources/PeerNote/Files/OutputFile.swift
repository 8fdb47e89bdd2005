#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a result was not written to an output file (`Document.writeAsOutput`): the file there
/// holds something the result does not (it is left as it is), or the write failed.
public enum OutputError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A symbolic link that loops: renaming over it would replace the link with a file.
    case loopingLink(path: String)
    case isDirectory(path: String)
    /// It exists and cannot be read.
    case unreadable(path: String, FileError)
    /// It exists and does not load: not a copy of this notebook.
    case notANotebook(path: String, PeerNoteError)
    /// It exists and holds a notebook this process cannot read, though it is not damaged (a
    /// newer format version, or one larger than the memory this process may use): it may be a
    /// copy of this notebook with changes the result lacks, so it is not replaced.
    case cannotReadHere(path: String, PeerNoteError)
    /// It is another notebook (no shared history).
    case otherNotebook(path: String)
    /// It is a copy of this notebook with changes (by author) or payload fields of a newer
    /// version that the result lacks.
    case holdsMore(path: String, changesByAuthor: [(author: String, count: Int)], fields: Int)
    /// The write itself failed; nothing was written.
    case write(FileError)

    public static func == (a: OutputError, b: OutputError) -> Bool { a.description == b.description }

    /// Whether the output was refused for what it holds (every case but `write`).
    public var isRefusal: Bool { if case .write = self { false } else { true } }

    /// One line naming the file; the tools add what to do instead.
    public var description: String {
        switch self {
        case .loopingLink(let p): "\(p): already exists and cannot be read (\(String(cString: strerror(ELOOP)))); not replaced"
        case .isDirectory(let p): "\(p): is a directory; not replaced"
        case .unreadable(let p, let e): "\(p): already exists and cannot be read (\(e.message)); not replaced"
        case .notANotebook(let p, let e): "\(p): already exists and is not a copy of this notebook (it does not load: \(e)); not replaced"
        case .cannotReadHere(let p, let e): "\(p): already exists and \(Document.unreadableHere(e) ?? "cannot be read here (\(e))"); not replaced"
        case .otherNotebook(let p): "\(p): already exists and is not a copy of this notebook; not replaced"
        case .holdsMore(let p, let changes, let fields):
            "\(p): already exists and holds \(changes.reduce(0) { $0 + $1.count }) changes and \(fields) fields the result lacks; not replaced"
        case .write(let e): e.description
        }
    }
}

extension Document {
    /// Writes `bytes` (this document's save) to `path`, an output that a merge, a salvage or an
    /// export names, replacing a file there only when this document holds all it holds: a copy
    /// of this notebook with no change and no payload field this document lacks, such as an
    /// earlier run's result of the same merge. Another notebook, a file that is not a notebook,
    /// one that cannot be read, or a copy with changes of its own is left as it is
    /// (`OutputError`). A missing output is created (with the permission bits of
    /// `permissionsLike`, less the umask); a FIFO or a character device is written into; a file
    /// that is not a regular file, or a read-only one, is refused by the write
    /// (`OutputError.write`). Call it holding the output's `FileLock`.
    public func writeAsOutput(_ bytes: [UInt8], to path: String, permissionsLike source: String? = nil) throws(OutputError) {
        try checkReplaceable(path, bytes: bytes)
        do { try FileStore.writeAtomically(bytes, to: path, permissionsLike: source) } catch { throw .write(error) }
    }

    /// `writeAsOutput(bytes, to: path, permissionsLike: source)`, with `bytes` (a save of this
    /// document) read back as `checkLoadable` reads them while they are written: the temporary
    /// file is written and flushed on another thread, and put in place only when they load
    /// (else `OutputError.write(.wouldNotLoad)`, naming `shown`, and nothing is written). A
    /// FIFO or a character device is written into once they have loaded. Returns the document
    /// read back, for a caller that lets go of it at another time (a tool ending its process).
    /// Call it holding the output's `FileLock`.
    @discardableResult
    public func writeLoadableOutput(_ bytes: [UInt8], to path: String, namedInErrors shown: String? = nil,
                                    permissionsLike source: String? = nil) throws(OutputError) -> Document {
        try checkReplaceable(path, bytes: bytes)
        do { return try Document.writeLoadable(bytes, to: path, namedInErrors: shown, permissionsLike: source) } catch { throw .write(error) }
    }

    /// `writeLoadableOutput(bytes, to: path, ...)` without `checkReplaceable`, for a caller
    /// that checked the output already and lets go of the document before the read-back (whose
    /// memory the read-back then reuses): writes `bytes`, read back as `checkLoadable` reads them
    /// while they are written, and returns the document read back. Call it holding the output's
    /// `FileLock`, after `checkReplaceable(path, bytes: bytes)` passed under it.
    public static func writeLoadable(_ bytes: [UInt8], to path: String, namedInErrors shown: String? = nil,
                                     permissionsLike source: String? = nil) throws(FileError) -> Document {
        try FileStore.writeAtomically(bytes, to: path, permissionsLike: source) { () throws(FileError) in
            try Document.checkedLoad(bytes, writingTo: shown ?? path)
        }
    }

    /// Throws unless `writeAsOutput` may replace the file at `path` (see there). `bytes`, this
    /// document's compact save when it is made already: an output holding exactly those bytes
    /// (the same merge run again; a compact save depends only on the changes it holds) passes
    /// without being loaded.
    public func checkReplaceable(_ path: String, bytes resultBytes: [UInt8]?) throws(OutputError) {
        var st = stat()
        guard stat(path, &st) == 0 else {
            if errno == ELOOP { throw .loopingLink(path: path) }
            return
        }
        if st.st_mode & S_IFMT == S_IFDIR { throw .isDirectory(path: path) }
        guard st.st_mode & S_IFMT == S_IFREG, st.st_mode & 0o222 != 0, access(path, W_OK) == 0 else { return }
        let bytes: [UInt8]
        do { bytes = try FileStore.read(path) } catch { throw .unreadable(path: path, error) }
        if let resultBytes, bytes == resultBytes { return }
        let existing: Document
        do { existing = try Document.load(bytes) } catch {
            // Not read here is not "not a notebook": it may hold changes the result lacks.
            if Document.unreadableHere(error) != nil { throw .cannotReadHere(path: path, error) }
            throw .notANotebook(path: path, error)
        }
        guard relation(to: existing) == .shared else { throw .otherNotebook(path: path) }
        let lacking = lacking(from: existing)
        let changes = lacking.changesByAuthor.reduce(0) { $0 + $1.count }
        guard changes > 0 || lacking.fields > 0 else { return }
        throw .holdsMore(path: path, changesByAuthor: lacking.changesByAuthor, fields: lacking.fields)
    }
}
