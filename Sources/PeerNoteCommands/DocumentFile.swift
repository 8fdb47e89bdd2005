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

/// Reading, creating and updating document files the way every peernote command does:
/// updates run load-edit-write under the file's lock and write atomically, so a failed
/// command leaves the file as it was and concurrent commands lose nothing.
enum DocumentFile {
    /// Loads a document (`-` is standard input). It is freed only by the process's end when the
    /// run ends the process (`ProcessEnd`).
    static func open(_ path: String, pipes: Bool = false) throws(CLIFailure) -> Document {
        let document = try load(path, pipes: pipes)
        ProcessEnd.keep(document)
        return document
    }

    private static func load(_ path: String, pipes: Bool) throws(CLIFailure) -> Document {
        try requireName(path)
        if NotebookFolder.isFolder(path) { return try readFolder(path).document }
        guard path == "-" else {
            // Shown, not refused: it is one side's version, which a reader may look at.
            if let line = GitUnmergedNotebook.check(path) { Terminal.error(DisplayText.oneLine("peernote: warning: \(line)")) }
            guard pipes else {
                do { return try Document.open(path) } catch { throw CLIFailure(error) }
            }
            // Read-only commands read a pipe too (`peernote list <(git show main:notes.peernote)`).
            let bytes: [UInt8]
            do { bytes = try FileStore.read(path, pipes: true) } catch { throw CLIFailure(DocumentFileError.file(error)) }
            do { return try Document.load(bytes) } catch { throw CLIFailure(DocumentFileError.document(path: path, error)) }
        }
        let bytes: [UInt8]
        do { bytes = try FileStore.readStandardInput() } catch { throw CLIFailure(DocumentFileError.file(error)) }
        do { return try Document.load(bytes) } catch { throw CLIFailure(DocumentFileError.document(path: TextFile.displayName(path), error)) }
    }

    /// Reads a notebook folder, saying each chunk it skips on standard error (one line each).
    static func readFolder(_ path: String) throws(CLIFailure) -> NotebookFolder.Reading {
        let reading: NotebookFolder.Reading
        do { reading = try NotebookFolder(path).read() } catch { throw CLIFailure(error) }
        for line in FolderWarnings.lines(reading, folder: path) { Terminal.error(DisplayText.oneLine("peernote: warning: \(line)")) }
        return reading
    }

    /// `update` for a notebook folder: under the folder's lock, read it, edit, and add one chunk
    /// holding the change (nothing in the folder is replaced).
    static func updateFolder(_ path: String, author: String, _ edit: (Document) throws -> Void) throws -> Bool {
        let lock: FileLock
        do { lock = try Self.lock(FileStore.resolvingSymlink(path)) } catch { throw CLIFailure(writing: error) }
        return try withExtendedLifetime(lock) { () throws -> Bool in
            let document = try readFolder(path).document
            document.author = author
            let before = document.changeCount
            do { try edit(document) } catch let error as PeerNoteError { throw CLIFailure(error, path: path) }
            guard document.changeCount != before else { return false }
            do throws(WriteError) { try document.write(to: path) } catch { throw CLIFailure(writing: error) }
            return true
        }
    }

    /// Takes the lock on `path`, saying on standard error when another peernote or pnmerge
    /// holds it (the wait then lasts until that one finishes).
    static func lock(_ path: String) throws(FileError) -> FileLock {
        try FileLock(for: path) { lockFile in
            Terminal.error(DisplayText.oneLine("peernote: \(path): waiting for another peernote or pnmerge to finish writing it (lock \(lockFile))"))
        }
    }

    /// Loads the document at `path` under its lock, lets `edit` change it, and writes it back
    /// (appending one block) when the edit recorded a change. Returns whether it did.
    @discardableResult
    static func update(_ path: String, author: String, _ edit: (Document) throws -> Void) throws -> Bool {
        try requireName(path)
        if NotebookFolder.isFolder(path) { return try updateFolder(path, author: author, edit) }
        let target = try editablePath(path)
        // An edit now would be lost to `git checkout -m`, which the way out starts with.
        if let line = GitUnmergedNotebook.check(path) { throw CLIFailure(.conflict, line + "; nothing was changed") }
        let lock: FileLock
        do { lock = try Self.lock(target) } catch { throw CLIFailure(writing: error) }
        return try withExtendedLifetime(lock) { () throws -> Bool in
            let loaded: [UInt8]
            // Messages name the file as the user typed it, not the path its links lead to.
            do throws(FileError) { loaded = try FileStore.read(target) } catch {
                var named = error
                named.path = path
                throw CLIFailure(DocumentFileError.file(named))
            }
            let document: Document
            do throws(PeerNoteError) { document = try Document.load(loaded) } catch { throw CLIFailure(DocumentFileError.document(path: path, error)) }
            // Freed only by the process's end when the run ends the process (`ProcessEnd`).
            ProcessEnd.keep(document)
            document.author = author
            let before = document.changeCount
            do { try edit(document) } catch let error as PeerNoteError { throw CLIFailure(error, path: path) }
            guard document.changeCount != before else { return false }
            // A sync client that replaced the file meanwhile is not overwritten (its copy is merged in).
            let outcome: WriteOutcome
            do throws(WriteError) { outcome = try document.write(over: target, loaded: loaded, mode: .incremental) } catch {
                var named = error
                if named.path == target { named.path = path }
                throw CLIFailure(writing: named)
            }
            if outcome.mergedMeanwhile > 0 {
                Terminal.error(DisplayText.oneLine("peernote: \(path): another program changed it while this ran; its changes were kept too"))
            }
            return true
        }
    }

    /// Writes a new document to `path`, refusing (exit 73) when anything exists there.
    /// With `folder`, a notebook folder (`NotebookFolder.create`); its name must end in `.peernote`.
    static func create(_ path: String, _ document: Document, folder: Bool = false) throws(CLIFailure) {
        try requireName(path)
        if folder {
            guard NotebookFolder(path).path.hasSuffix(".peernote") else {
                throw CLIFailure(.usage, "\(path): a notebook folder's name must end in .peernote")
            }
            let lock: FileLock
            do { lock = try Self.lock(path) } catch { throw CLIFailure(writing: error) }
            try withExtendedLifetime(lock) { () throws(CLIFailure) in
                if exists(path) { throw alreadyExists(path) }
                do throws(FileError) { try NotebookFolder.create(at: path, document) } catch {
                    throw !error.resultWouldNotLoad && exists(path) ? alreadyExists(path) : CLIFailure(writing: error)
                }
            }
            return
        }
        guard path != "-" else { throw CLIFailure(.usage, "the output must be a file, not - (standard output)") }
        let lock: FileLock
        do { lock = try Self.lock(path) } catch { throw CLIFailure(writing: error) }
        try withExtendedLifetime(lock) { () throws(CLIFailure) in
            if exists(path) { throw alreadyExists(path) }
            do throws(FileError) {
                let bytes = document.save(.compact)
                try Document.checkLoadable(bytes, writingTo: path)
                try FileStore.create(bytes, at: path)
            } catch {
                throw !error.resultWouldNotLoad && exists(path) ? alreadyExists(path) : CLIFailure(writing: error)
            }
        }
    }

    /// The refusal (exit 73) to create a file where something is: a file, or a symbolic link,
    /// which is named as one when what it points to does not exist (a new file is not written
    /// through a link, which another user may have planted; "already exists" would be wrong).
    static func alreadyExists(_ path: String) -> CLIFailure {
        var st = stat()
        if lstat(path, &st) == 0, st.st_mode & S_IFMT == S_IFLNK, stat(path, &st) != 0 {
            return CLIFailure(.cannotCreate, "\(path): is a symbolic link to a file that does not exist; not written through it (remove the link, or name the file it points to)")
        }
        return CLIFailure(.cannotCreate, "\(path): already exists; refusing to overwrite it")
    }

    /// The path to lock and write for `path`: the file itself, or the file a symbolic link
    /// points to (so that writing keeps the link). Missing files and non-files are errors.
    static func editablePath(_ path: String) throws(CLIFailure) -> String {
        try requireName(path)
        guard path != "-" else { throw CLIFailure(.usage, "cannot edit standard input; name a .peernote file") }
        if NotebookFolder.isFolder(path) { return path }
        var st = stat()
        guard lstat(path, &st) == 0 else { throw CLIFailure(.noInput, "\(path): \(String(cString: strerror(errno)))") }
        // `<(command)` is a link to a pipe that has no path: say what it is, not that realpath fails.
        var pipe = stat()
        if stat(path, &pipe) == 0, pipe.st_mode & S_IFMT == S_IFIFO {
            throw CLIFailure(.noInput, "\(path): is a pipe, and this command writes the file back: it needs a regular file")
        }
        var target = path
        if (st.st_mode & S_IFMT) == S_IFLNK {
            guard let resolved = FileStore.linkTarget(path) else {
                throw CLIFailure(.noInput, "\(path): is a symbolic link to a name that is not valid UTF-8; rename the file it points to")
            }
            target = resolved
            guard stat(target, &st) == 0 else { throw CLIFailure(.noInput, "\(path): \(String(cString: strerror(errno)))") }
        }
        if (st.st_mode & S_IFMT) == S_IFDIR { throw CLIFailure(.noInput, "\(path): is a directory") }
        guard (st.st_mode & S_IFMT) == S_IFREG else { throw CLIFailure(.noInput, "\(path): is not a regular file") }
        return target
    }

    /// An empty FILE argument, or one ending in `/`, names no file: a usage error (64), not a
    /// file that cannot be created (74) or is missing (66) (`FileNameArgument`).
    static func requireName(_ path: String) throws(CLIFailure) {
        if let problem = FileNameArgument.problem(path) { throw CLIFailure(.usage, problem) }
    }

    /// Whether anything (even a dangling symbolic link) is at `path`.
    static func exists(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0
    }
}

/// Reading text inputs: body files, import sources.
enum TextFile {
    /// The bytes of `path` (`-` is standard input; a pipe, as from `<(command)`, is read to its
    /// end); a missing or unreadable file is exit 66.
    static func bytes(_ path: String, option: String? = nil) throws(CLIFailure) -> [UInt8] {
        let named = option.map { " (\($0))" } ?? ""
        if let problem = FileNameArgument.problem(path, expecting: "a file, or - for standard input") { throw CLIFailure(.usage, problem + named) }
        do { return path == "-" ? try FileStore.readStandardInput() : try FileStore.read(path, pipes: true) } catch {
            throw CLIFailure(.noInput, error.description + named)
        }
    }

    /// The text of `path`, which must be UTF-8 (else exit 65 naming the byte offset and, when
    /// given, the option that named the file: `(--body-file)`).
    static func read(_ path: String, option: String? = nil) throws(CLIFailure) -> String {
        try decode(bytes(path, option: option), path: path, option: option)
    }

    static func decode(_ bytes: [UInt8], path: String, option: String? = nil) throws(CLIFailure) -> String {
        if let offset = UTF8Bytes.firstInvalid(bytes) {
            let what = FormatInfo.startsLikeDocument(bytes) ? "is a .peernote document, not text" : "offset \(offset): not valid UTF-8 text"
            throw CLIFailure(.invalidInput, "\(displayName(path)): \(what)" + (option.map { " (\($0))" } ?? ""))
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `path` as messages name it: standard input (`-`) as `<stdin>`, as pnmerge names it.
    static func displayName(_ path: String) -> String { path == "-" ? "<stdin>" : path }

}

/// Finding the note a command line names, with errors that list the candidates.
enum NoteLookup {
    /// The live note `query` names (id, unique id prefix, or title of exactly one note, as
    /// `Document.findNote` matches it: exact, then in other letter case, then a former title).
    static func find(_ query: String, in document: Document, path: String) throws(CLIFailure) -> Note {
        let found: Note
        do { found = try document.findNote(query) } catch {
            if case .noSuchNote = error {
                // No live note matches: say so of the deleted notes that do, one or several.
                let deleted = deletedMatches(query, in: document)
                if deleted.count == 1, let only = deleted.first {
                    throw CLIFailure(.usage, "\(path): note \(only.id.short) \"\(DisplayText.clipped(only.title))\" is deleted; bring it back with: peernote restore \(ShellQuote.path(path)) \(only.id.short)")
                }
                if deleted.count > 1 {
                    throw CLIFailure(.usage, "\(path): \"\(query)\" matches only deleted notes, \(deleted.count) of them: \(deletedList(deleted)); bring one back by its id with: peernote restore \(ShellQuote.path(path)) ID")
                }
                try refuseEquivalentTitle(query, among: document.notes, path: path)
                throw CLIFailure(.usage, "\(path): \(error)\(tooShortHint(query, among: document.notes + document.deletedNotes))\(suggestions(query, in: document))")
            }
            throw CLIFailure(error, path: path)
        }
        formerTitleNotice(found, query, path: path)
        return try unambiguous(found, query, among: document.notes, path: path)
    }

    /// The note a command that only reads names: a live note as `find` finds it, else the one
    /// deleted note `query` names (`show` prints it, marked deleted).
    static func findForReading(_ query: String, in document: Document, path: String) throws(CLIFailure) -> Note {
        do { return try find(query, in: document, path: path) } catch {
            let deleted = deletedMatches(query, in: document)
            if deleted.count == 1, let only = deleted.first { return only }
            throw error
        }
    }

    /// `; did you mean: 1a2b3c4d "Dentist", …` with the live notes whose titles are closest to
    /// `query` (`Document.closestTitles`), else the notes as `candidates` lists them.
    static func suggestions(_ query: String, in document: Document) -> String {
        let close = document.closestTitles(to: query)
        guard !close.isEmpty else { return candidates(document.notes) }
        return "; did you mean: " + listed(close).joined(separator: ", ") + "?"
    }

    /// Says on standard error when `found` was named by a title it no longer has (a former
    /// title, `Document.findNote`), so that the person sees which note it is now.
    static func formerTitleNotice(_ found: Note, _ query: String, path: String) {
        let q = query.lowercased()
        guard !found.title.hasSameScalars(as: query), !found.title.lowercased().hasSameScalars(as: q),
              !(Document.couldBeNoteID(q) && found.id.description.hasPrefix(q)) else { return }
        Failure.report("\(path): \"\(DisplayText.clipped(query))\" is a former title of note \(found.id.short), now \"\(DisplayText.clipped(found.title))\"")
    }

    /// The deleted notes `query` would name if they were live: by id, id prefix or exact title
    /// (as `Document.findNote` matches), in the order `list --deleted` shows them.
    static func deletedMatches(_ query: String, in document: Document) -> [Note] {
        let q = query.lowercased()
        let deleted = document.deletedNotes
        if let exact = deleted.first(where: { $0.id.description == q }) { return [exact] }
        let byID = Document.couldBeNoteID(q)
        return deleted.filter { (byID && $0.id.description.hasPrefix(q)) || $0.title.hasSameScalars(as: query) }
    }

    /// The note `restore` names: a deleted note first, since only a deleted one can be brought
    /// back ("X" when a live note and a deleted one are both titled "X" is the deleted one);
    /// several deleted notes it matches are listed, to be told apart by id. When it matches no
    /// deleted note, the live note it names (which `restore` leaves alone), as `findAny` finds it.
    static func findToRestore(_ query: String, in document: Document, path: String) throws(CLIFailure) -> Note {
        let deleted = deletedMatches(query, in: document)
        // One deleted note, by id, id prefix or title; a prefix of its id that is another note's
        // title (live or deleted) is refused, as everywhere (`unambiguous`): no guessing.
        if deleted.count == 1, let only = deleted.first {
            return try unambiguous(only, query, among: document.notes + document.deletedNotes, path: path)
        }
        if deleted.count > 1 {
            throw CLIFailure(.usage, "\(path): \"\(query)\" matches \(deleted.count) deleted notes: \(deletedList(deleted)); give the id of the one to bring back: peernote restore \(ShellQuote.path(path)) ID")
        }
        return try findAny(query, in: document, path: path)
    }

    /// A note `query` names among live and deleted notes.
    static func findAny(_ query: String, in document: Document, path: String) throws(CLIFailure) -> Note {
        let found: Note
        do { found = try document.findNote(query, includeDeleted: true) } catch {
            if case .noSuchNote = error {
                try refuseEquivalentTitle(query, among: document.notes + document.deletedNotes, path: path)
                throw CLIFailure(.usage, "\(path): \(error)\(tooShortHint(query, among: document.notes + document.deletedNotes))\(candidates(document.deletedNotes, deleted: true))")
            }
            throw CLIFailure(error, path: path)
        }
        return try unambiguous(found, query, among: document.notes + document.deletedNotes, path: path)
    }

    /// ` (an id prefix needs at least 4 digits)` when `query` is 1 to 3 hex digits that begin
    /// the id of one of `notes`: it was tried as a title only (`NoteID.shortestPrefix`).
    static func tooShortHint(_ query: String, among notes: [Note]) -> String {
        let q = query.lowercased()
        guard !q.isEmpty, q.utf8.count < NoteID.shortestPrefix,
              Document.isHexDigits(q),
              notes.contains(where: { $0.id.description.hasPrefix(q) }) else { return "" }
        return " (an id prefix needs at least \(NoteID.shortestPrefix) digits)"
    }

    /// `Document.findNote` prefers a unique id prefix to a title, so a title of 4 to 16 hex
    /// digits ("cafe", "2024") could name a different note whose id starts that way. When `found`
    /// was matched by its id prefix and other notes have `query` as their exact title, that is
    /// an ambiguity the user must resolve, not a guess to act on.
    /// `pool` is made only when needed: listing every note (bodies included) for each edit of a
    /// notebook of 20,000 notes took a tenth of the edit.
    private static func unambiguous(_ found: Note, _ query: String, among pool: @autoclosure () -> [Note], path: String) throws(CLIFailure) -> Note {
        guard !found.title.hasSameScalars(as: query), found.id.description != query.lowercased() else { return found }
        let titled = pool().filter { $0.title.hasSameScalars(as: query) && $0.id != found.id }
        guard !titled.isEmpty else { return found }
        let shown = listed([found] + titled).joined(separator: ", ")
        throw CLIFailure(.usage, "\(path): \"\(query)\" matches several notes: \(shown) (an id prefix and a title); give more of the id")
    }

    /// A title is matched by its exact Unicode scalars (`Document.findNote`). When no title is
    /// `query` but some are the same text in other scalars ("é" typed as "e" and U+0301, a title
    /// stored as U+00E9), says so, naming every such note (at most ten) and spelling the titles
    /// out, rather than "no note matches".
    static func refuseEquivalentTitle(_ query: String, among notes: [Note], path: String) throws(CLIFailure) {
        let alike = notes.filter { DisplayText.hasLookAlike(query, among: [$0.title]) }
        guard let first = alike.first else { return }
        let given = "\(path): no note has the title \"\(DisplayText.oneLine(query))\" as given (\(DisplayText.scalars(query)))"
        if alike.count == 1 {
            throw CLIFailure(.usage, "\(given); note \(first.id.short) has \"\(DisplayText.oneLine(first.title))\" (\(DisplayText.scalars(first.title))), the same text in other Unicode scalars, and titles are matched scalar by scalar: name it by its id, \(first.id.short)")
        }
        let listed = lookAlikeList(alike) { "\($0.id.short) \"\(DisplayText.oneLine($0.title))\" (\(DisplayText.scalars($0.title)))" }
        throw CLIFailure(.usage, "\(given); \(alike.count) notes have the same text in other Unicode scalars: \(listed); titles are matched scalar by scalar: name one by its id")
    }

    /// Titles need not be unique, but once two live notes share one, that title no longer names
    /// either (`find` refuses it as matching several notes). After note `id` got `title` (added
    /// or renamed), the warning to print when other live notes have that title, scalar for
    /// scalar, naming them as that error does (at most ten); nil when none has.
    static func sharedTitleWarning(_ title: String, of id: NoteID, in document: Document, path: String) -> String? {
        // `findNote` reads ids and titles only; every note (bodies too) is listed only when it
        // finds another note with this title (or whose id starts with it).
        if let found = try? document.findNote(title), found.id == id { return nil }
        let others = document.notes.filter { $0.id != id && $0.title.hasSameScalars(as: title) }
        let warning = "\(path): warning: "
        guard let first = others.first else {
            // A title of hex digits that begins another note's id ("cafe"): `find` refuses it as
            // naming both.
            let q = title.lowercased()
            guard Document.couldBeNoteID(q), let other = document.notes.first(where: { $0.id != id && $0.id.description.hasPrefix(q) }) else { return nil }
            return warning + "note \(other.id.short) \"\(DisplayText.clipped(other.title))\" has an id that starts with this title; the title alone will not pick this note: name it by id"
        }
        if others.count == 1 {
            return warning + "note \(first.id.short) \"\(DisplayText.clipped(first.title))\" has this title too; the title alone will no longer pick either note: name them by id"
        }
        let listed = lookAlikeList(others) { "\($0.id.short) \"\(DisplayText.clipped($0.title))\"" }
        return warning + "\(others.count) notes have this title too: \(listed); the title alone picks none of these notes: name them by id"
    }

    /// `a, b, c`: at most ten of `items`, then `, … (N in all)`, as the other candidate lists.
    static func lookAlikeList<T>(_ items: [T], _ describe: (T) -> String) -> String {
        items.prefix(10).map(describe).joined(separator: ", ") + (items.count > 10 ? ", … (\(items.count) in all)" : "")
    }

    /// `; notes: 1a2b3c4d "Title", …` (at most ten).
    static func candidates(_ notes: [Note], deleted: Bool = false) -> String {
        if notes.isEmpty { return deleted ? "; there are no deleted notes" : "; the notebook has no notes" }
        let shown = listed(notes.prefix(10)).joined(separator: ", ")
        return "; \(deleted ? "deleted notes" : "notes"): \(shown)\(notes.count > 10 ? ", … (\(notes.count) in all)" : "")"
    }

    /// Deleted notes a name matches, as a message lists them: at most ten, then how many in all.
    private static func deletedList(_ deleted: [Note]) -> String {
        listed(deleted.prefix(10)).joined(separator: ", ")
            + (deleted.count > 10 ? ", … (\(deleted.count) in all; peernote list --deleted shows them)" : "")
    }

    /// Notes as a message lists them, `ID "Title"`, the title cut to 60 characters; a title that
    /// another of them matches only in other Unicode scalars ("café" as U+00E9 beside "e" and
    /// U+0301) is followed by its scalars (`DisplayText.sideBySide`), so the two can be told apart.
    static func listed<Notes: Collection<Note>>(_ notes: Notes) -> [String] {
        // Cut first, so that a spelled-out title is cut too (a long title of other scalars would
        // be spelled out at several times its length).
        let titles = DisplayText.sideBySide(notes.map { DisplayText.clipped($0.title) }) { "\"\($0)\"" }
        return zip(notes, titles).map { "\($0.id.short) \($1)" }
    }
}

extension CLIFailure {
    /// A library error about the document at `path`: naming a note or a value wrongly is a usage error (64).
    init(_ error: PeerNoteError, path: String) {
        switch error {
        case .noSuchNote, .ambiguousNote, .noSuchChange, .ambiguousChange, .invalidArgument, .noteDeleted: self.init(.usage, "\(path): \(error)")
        case .unrelated: self.init(.unrelated, "\(path): \(error)")
        case .invalidDocument, .unsupportedVersion, .fieldConflict, .needsMoreMemory: self.init(.invalidInput, "\(path): \(error.toolText)")
        }
    }
}
