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

/// A document read from a file (or standard input), with the bytes it came from.
struct LoadedDocument {
    /// The path as given on the command line (`-` for standard input).
    let path: String
    let bytes: [UInt8]
    let document: Document
    /// How messages name the document when not by its path (the git driver's temporary files are named by the tracked path).
    var label: String? = nil

    /// The name used in messages.
    var name: String { label ?? Inputs.displayName(path) }
}

/// A copy merged into MINE (a THEIRS), read and verified in full: held as what the merge takes
/// in from it (`MergeSource`: its notebook let go once verified), or whole when the merge may
/// build its result from it (`Inputs.loadForMerge`).
struct LoadedTheirs {
    enum Copy {
        case whole(Document)
        case history(MergeSource)
    }
    /// The path as given on the command line (`-` for standard input).
    let path: String
    let copy: Copy
    /// How messages name the copy when not by its path.
    var label: String? = nil

    /// The name used in messages.
    var name: String { label ?? Inputs.displayName(path) }

    var source: MergeSource {
        switch copy {
        case .whole(let document): document.mergeSource
        case .history(let source): source
        }
    }

    init(path: String, copy: Copy, label: String? = nil) {
        self.path = path
        self.copy = copy
        self.label = label
    }

    /// A copy loaded whole (the git driver's OTHER).
    init(_ loaded: LoadedDocument) {
        self.init(path: loaded.path, copy: .whole(loaded.document), label: loaded.label)
    }

    /// Whether a merge keeps the first THEIRS whole rather than as its history: when its file
    /// (`theirsBytes`) is larger than MINE's, which stands for its history being the longer,
    /// so that the result may be built from it.
    static func keepsWhole(theirsBytes: Int, mineBytes: Int) -> Bool { theirsBytes > mineBytes }
}

/// Reading input documents, with one-line errors that name the file.
enum Inputs {
    /// `<stdin>` for `-`, otherwise the path as given.
    /// How a file is named in reports and errors: `<stdin>` for `-`, control characters in a
    /// path shown escaped like document text (a file name can hold ESC sequences too).
    static func displayName(_ path: String) -> String { path == "-" ? "<stdin>" : DisplayText.oneLine(path) }

    /// The file's bytes, or a `noInput` (66) failure naming it (by `label` when given). A pipe
    /// (`<(git show main:notes.peernote)`, a named pipe) is read to its end, unless `pipes` is
    /// false: for a file that is written back (a merge in place, `compact`), which must be a
    /// regular file.
    ///
    /// A notebook folder (`NotebookFolder.isFolder`) gives the compact save of the notebook its
    /// chunks hold (each skipped chunk said on standard error): every command that reads a
    /// `.peernote` file reads a folder as that file.
    static func readBytes(_ path: String, label: String? = nil, pipes: Bool = true) throws(CLIFailure) -> [UInt8] {
        if path == "-" { return try Console.current.readInput() }
        if NotebookFolder.isFolder(path) { return try readFolder(path, label: label).document.save(.compact) }
        if !pipes, isPipe(path) {
            throw CLIFailure(.noInput, "\(label ?? displayName(path)): is a pipe, and this command writes the file back: it needs a regular file")
        }
        do { return try FileStore.read(path, pipes: pipes) } catch {
            throw CLIFailure(.noInput, "\(label ?? displayName(path)): \(error.message)")
        }
    }

    /// Reads a notebook folder, saying each chunk it skips on standard error (one line each).
    static func readFolder(_ path: String, label: String? = nil) throws(CLIFailure) -> NotebookFolder.Reading {
        let reading: NotebookFolder.Reading
        do { reading = try NotebookFolder(path).read() } catch {
            switch error {
            case .file(let e): throw CLIFailure(.noInput, "\(label ?? displayName(path)): \(e.message)")
            case .document(_, let e): throw CLIFailure(.invalidInput, "\(label ?? displayName(path)): \(e)")
            }
        }
        for line in FolderWarnings.lines(reading, folder: path) {
            Console.current.writeError(DisplayText.oneLine("pnmerge: warning: \(line)") + "\n")
        }
        return reading
    }

    /// Parses and verifies `bytes` read from `path`, or an `invalidInput` (65) failure naming it.
    static func parse(_ bytes: [UInt8], from path: String) throws(CLIFailure) -> Document {
        do { return try Document.load(bytes) } catch { throw invalid(error, path: path, bytes: bytes) }
    }

    /// The `invalidInput` (65) failure for a document that `path` (named by `label` when given)
    /// holds: `bytes`, whose intact changes, if damage comes after some, `pnmerge salvage` recovers
    /// (the line says so, unless a label names the file: git's temporary files cannot be salvaged by name).
    private static func invalid(_ error: PeerNoteError, path: String, label: String? = nil, bytes: [UInt8]) -> CLIFailure {
        let hint = label == nil ? SalvageHint.suffix(for: error, bytes: bytes, path: path, standardInputIsFile: Console.current.standardInputIsFile) : ""
        return CLIFailure(.invalidInput, "\(label ?? displayName(path)): \(error)\(hint)")
    }

    /// Reads and verifies a document (`pipes` as for `readBytes`). The document is freed only by
    /// the process's end when the run ends the process (`ProcessEnd`).
    static func load(_ path: String, pipes: Bool = true) throws(CLIFailure) -> LoadedDocument {
        let bytes = try readBytes(path, pipes: pipes)
        let document = try parse(bytes, from: path)
        ProcessEnd.keep(document)
        return LoadedDocument(path: path, bytes: bytes, document: document)
    }

    /// Reads every input, then verifies them one after another (`Document.load`).
    /// `labels` name the inputs in messages where given (else the path does). Fails as reading
    /// them one after another would: with the first input, in order, that cannot be read (66)
    /// or verified (65); the inputs after it are not verified. Pipes are read, except for the
    /// paths in `regularOnly` (files that are written back).
    static func loadAll(_ paths: [String], labels: [String?]? = nil, regularOnly: Set<String> = []) throws(CLIFailure) -> [LoadedDocument] {
        let names = labels ?? paths.map { _ in nil }
        precondition(names.count == paths.count, "one label per input")
        let read = try readAll(paths, labels: names, regularOnly: regularOnly)
        var loaded: [LoadedDocument] = []
        for ((path, label), result) in zip(zip(paths, names), read) {
            let bytes = try result.get()
            loaded.append(LoadedDocument(path: path, bytes: bytes, document: try verify(bytes, path: path, label: label), label: label))
        }
        return loaded
    }

    /// `loadAll(theirs + [mine])` for a merge into MINE, with each THEIRS held as what the merge
    /// takes in from it (`LoadedTheirs`): its notebook is let go as soon as it is verified, before
    /// the next copy is read, so the merge holds MINE's notebook and the others' histories, not a
    /// notebook per copy. The first THEIRS is kept whole when its file is larger than MINE's (a
    /// file's size stands for its history's length): the merge then builds its result from
    /// whichever of the two has the longer history, which takes in the other's changes. Every
    /// input's bytes are held until this returns. Fails as `loadAll` does.
    static func loadForMerge(mine: String, theirs: [String], regularOnly: Set<String> = []) throws(CLIFailure) -> (mine: LoadedDocument, theirs: [LoadedTheirs]) {
        let paths = theirs + [mine]
        let read = try readAll(paths, labels: paths.map { _ in nil }, regularOnly: regularOnly)
        let mineRead = (try? read[read.count - 1].get()) ?? []
        var others: [LoadedTheirs] = []
        for (i, (path, result)) in zip(theirs, read).enumerated() {
            let bytes = try result.get()
            let document = try verify(bytes, path: path, label: nil)
            let whole = i == 0 && LoadedTheirs.keepsWhole(theirsBytes: bytes.count, mineBytes: mineRead.count)
            let source: MergeSource
            if whole {
                others.append(LoadedTheirs(path: path, copy: .whole(document)))
                continue
            } else if theirs.count == 1 {
                // MINE, read next, is what it merges into: the blocks both files start with are
                // MINE's too, and THEIRS keeps only the changes after them.
                source = MergeSource.keepingHistory(of: document, sharingFileWith: mineRead)
            } else {
                source = MergeSource.keepingHistory(of: document)
            }
            others.append(LoadedTheirs(path: path, copy: .history(source)))
        }
        let mineBytes = try read[read.count - 1].get()
        return (LoadedDocument(path: mine, bytes: mineBytes, document: try verify(mineBytes, path: mine, label: nil)), others)
    }

    /// Every input's bytes, or why it cannot be read, read before any is verified: a file that
    /// cannot be read fails only once the ones before it have been verified (`loadAll`'s order).
    private static func readAll(_ paths: [String], labels: [String?], regularOnly: Set<String>) throws(CLIFailure) -> [Result<[UInt8], CLIFailure>] {
        try checkPipesUsedOnce(paths)
        var read: [Result<[UInt8], CLIFailure>] = []
        for (path, label) in zip(paths, labels) {
            do throws(CLIFailure) { read.append(.success(try readBytes(path, label: label, pipes: !regularOnly.contains(path)))) } catch { read.append(.failure(error)) }
        }
        return read
    }

    private static func verify(_ bytes: [UInt8], path: String, label: String?) throws(CLIFailure) -> Document {
        do throws(PeerNoteError) { return try Document.load(bytes) } catch { throw invalid(error, path: path, label: label, bytes: bytes) }
    }

    /// Whether `path` is a FIFO (a named pipe, or a shell's `<(command)`).
    static func isPipe(_ path: String) -> Bool {
        var st = stat()
        return path != "-" && stat(path, &st) == 0 && st.st_mode & S_IFMT == S_IFIFO
    }

    /// Whether `path` is something other than a file that `pnmerge show` could read again: a
    /// device (`/dev/null`), a FIFO, a socket or a folder, or a name of one of this process's
    /// file descriptors (`/dev/stdin`, `/dev/fd/3`, `/proc/self/fd/0`), which names another
    /// file in the next command a person runs, even when it is a regular file here (`< FILE`).
    /// False for a regular file, and for a path where nothing is.
    static func isNotAFile(_ path: String) -> Bool {
        if namesDescriptor(path) { return true }
        var st = stat()
        return path != "-" && stat(path, &st) == 0 && st.st_mode & S_IFMT != S_IFREG
    }

    /// Whether `path` is spelled as a name of a file descriptor of the process that opens it.
    static func namesDescriptor(_ path: String) -> Bool {
        ["/dev/stdin", "/dev/stdout", "/dev/stderr"].contains(path) || path.hasPrefix("/dev/fd/") || path.hasPrefix("/proc/self/fd/")
    }

    /// A pipe can be read once: the same one named twice (`/dev/fd/3 /dev/fd/3`, a named FIFO
    /// twice) would give its bytes to the first and nothing to the second, or wait forever.
    static func checkPipesUsedOnce(_ paths: [String]) throws(CLIFailure) {
        var seen: [(dev: UInt64, ino: UInt64, path: String)] = []
        for path in paths {
            // `-` is standard input: a pipe there is the one `/dev/stdin` names too.
            var st = stat()
            guard (path == "-" ? fstat(0, &st) : stat(path, &st)) == 0, st.st_mode & S_IFMT == S_IFIFO else { continue }
            if let first = seen.first(where: { $0.dev == UInt64(st.st_dev) && $0.ino == UInt64(st.st_ino) }) {
                let same = first.path == path ? displayName(path) : "\(displayName(first.path)) and \(displayName(path))"
                throw CLIFailure(.usage, "\(same): the same pipe is given twice; a pipe can be read only once")
            }
            seen.append((UInt64(st.st_dev), UInt64(st.st_ino), path))
        }
    }

    /// Standard input can be read once: `-` may name at most one input.
    static func checkStandardInputUsedOnce(_ paths: [String]) throws(CLIFailure) {
        if paths.filter({ $0 == "-" }).count > 1 {
            throw CLIFailure(.usage, "standard input (-) can be given only once")
        }
    }

    /// Whether two paths name the same existing file (same device and inode), or are the same text.
    static func sameFile(_ a: String, _ b: String) -> Bool {
        if a == b { return true }
        var x = stat(), y = stat()
        guard a != "-", b != "-", stat(a, &x) == 0, stat(b, &y) == 0 else { return false }
        return x.st_dev == y.st_dev && x.st_ino == y.st_ino
    }

    /// Takes the lock on `path` for a read-modify-write, saying on standard error when another
    /// pnmerge or peernote holds it (the wait then lasts until that one finishes).
    static func lock(_ path: String, cleaningUp: Bool = true) throws(FileError) -> FileLock {
        try FileLock(for: path, cleaningUp: cleaningUp) { lockFile in
            Console.current.writeError(DisplayText.oneLine("pnmerge: \(path): waiting for another pnmerge or peernote to finish writing it (lock \(lockFile))") + "\n")
        }
    }

    /// The file a write to `path` should replace: when `path` is a symbolic link, the file it points to,
    /// so that the atomic rename replaces that file and the link stays a link.
    static func writeTarget(_ path: String) -> String {
        // A link whose target is not UTF-8 gives `path` back: the write refuses it then.
        FileStore.resolvingSymlink(path)
    }

    /// The one-line reason two copies cannot be merged or compared, naming both files and both document ids.
    /// `action` completes "cannot …", e.g. `merge theirs.peernote into mine.peernote`.
    static func unrelatedReason(_ a: LoadedDocument, _ b: LoadedDocument, relation: HistoryRelation, action: String, nothingWritten: Bool) -> String {
        unrelatedReason(a.name, a.document.id, b.name, b.document.id, relation: relation, action: action, nothingWritten: nothingWritten)
    }

    /// `unrelatedReason` for MINE and a THEIRS of a merge.
    static func unrelatedReason(_ a: LoadedDocument, _ b: LoadedTheirs, relation: HistoryRelation, action: String, nothingWritten: Bool) -> String {
        unrelatedReason(a.name, a.document.id, b.name, b.source.id, relation: relation, action: action, nothingWritten: nothingWritten)
    }

    /// `unrelatedReason(_:_:relation:action:nothingWritten:)` for two documents named `nameA` and `nameB`.
    static func unrelatedReason(_ nameA: String, _ documentA: UUID, _ nameB: String, _ documentB: UUID, relation: HistoryRelation,
                                action: String, nothingWritten: Bool) -> String {
        let idA = documentA.uuidString.lowercased()
        let idB = documentB.uuidString.lowercased()
        let why: String
        switch relation {
        case .shared:
            why = "they share history"
        case .differentDocuments:
            why = "they are different documents with no shared history"
        case .differentOrigin(_, let g1, let g2):
            let (s1, s2) = distinguishable(g1, g2)
            why = "they carry the same document id but start from different first changes (\(s1) vs \(s2)), so they share no history"
        case .conflictingChange(let c):
            why = "both hold change \(c) with different content (one of them has been tampered with)"
        }
        return "cannot \(action): \(why) (\(nameA) is document \(idA), \(nameB) is document \(idB))" + (nothingWritten ? "; nothing was written" : "")
    }

    /// Two change ids as text that tells them apart: `seq@replica` with the replica's first 8
    /// hex digits, or as many more as it takes for two replica ids that begin alike.
    static func distinguishable(_ a: ChangeID, _ b: ChangeID) -> (String, String) {
        let ra = Array(a.replica.description), rb = Array(b.replica.description)
        var n = 8
        if a.seq == b.seq {
            while n < ra.count && ra[..<n] == rb[..<n] { n += 1 }
        }
        return ("\(a.seq)@" + String(ra.prefix(n)), "\(b.seq)@" + String(rb.prefix(n)))
    }

    /// Throws `unrelated` (exit 2) unless the two copies share history.
    static func requireShared(_ a: LoadedDocument, _ b: LoadedDocument, action: String, nothingWritten: Bool) throws(CLIFailure) {
        let relation = a.document.relation(to: b.document)
        guard relation == .shared else {
            throw CLIFailure(.unrelated, unrelatedReason(a, b, relation: relation, action: action, nothingWritten: nothingWritten))
        }
    }
}
