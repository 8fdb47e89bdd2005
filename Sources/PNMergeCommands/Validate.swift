import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import PeerNote
import PeerNoteCLISupport

extension PNMerge {
    /// `pnmerge validate FILE... [--json]`.
    struct Validate: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "validate",
            abstract: "Check that files are complete, undamaged .peernote documents.",
            discussion: """
            Each FILE is read and fully verified: checksums, structure, causal history and \
            references. A valid file prints 'FILE: valid' on standard output. For each bad \
            file one line goes to standard error: 'FILE: offset N: what is wrong' (the offset \
            is left out when the problem has no single place, and a file that cannot be read \
            gets 'FILE: reason').

            A valid file that git lists as unmerged because this clone lacks pnmerge's merge \
            driver (the repository's .gitattributes names it, git's config does not: git merged \
            it as binary and kept one side) gets a line saying how to merge both sides \
            (pnmerge git-setup, git checkout -m FILE, git add FILE).

            Exit status: 0 when every file is valid; 65 when at least one file is damaged or \
            not a .peernote document; otherwise 66 when a file is missing, unreadable or a \
            directory; otherwise 1 when a file is an unmerged notebook as above.
            """
        )

        @Argument(help: ArgumentHelp("The files to check ('-' for standard input).", valueName: "FILE"), completion: .file(extensions: ["peernote"]))
        var files: [String]

        @OptionGroup var format: JSONOption

        func run() throws {
            // An empty name names no file (64); a name ending in '/' is checked as any other,
            // one of the results (a folder, or not a folder: 66).
            try FileNameArgument.require(files.filter(\.isEmpty))
            try Inputs.checkStandardInputUsedOnce(files)
            try Inputs.checkPipesUsedOnce(files)
            // The one document read need not be freed before the process ends (`ProcessEnd`);
            // with several, each is freed before the next is read, so memory stays one document's.
            let results = files.map { FileCheck.check($0, keepingDocument: files.count == 1) }
            let console = Console.current
            for r in results { if let line = r.errorLine { console.writeError(DisplayText.oneLine(line) + "\n") } }
            if format.json {
                try console.emit(JSONValue.array(results.map(\.json)).rendered)
            } else {
                let valid = results.filter { $0.problem == nil }.map { "\(Inputs.displayName($0.file)): valid\n" }
                if !valid.isEmpty { try console.emit(valid.joined()) }
            }
            let status = FileCheck.exitStatus(results)
            if status != .success { throw status.exitCode }
        }
    }
}

/// The outcome of checking one file for `validate`.
struct FileCheck {
    /// Why a file failed.
    enum Problem {
        /// The file could not be read (missing, a directory, unreadable).
        case unreadable(String)
        /// The bytes are not a valid document.
        case invalid(offset: Int?, message: String)
        /// A valid document git lists as unmerged, merged without the driver (`GitUnmergedNotebook`): the line.
        case gitUnmerged(String)
    }

    var file: String
    var problem: Problem?
    /// For a damaged file that still holds an intact base block: how `pnmerge salvage` gets its changes back
    /// (`SalvageHint`), said at the end of the error line.
    var hint = ""

    /// Checks the file at `path`; with `keepingDocument`, the loaded document is handed to
    /// `ProcessEnd.keep` instead of being freed here.
    static func check(_ path: String, keepingDocument: Bool = false) -> FileCheck {
        if NotebookFolder.isFolder(path) {
            // A notebook folder is valid when every chunk in it is part of the notebook read.
            do {
                let reading = try NotebookFolder(path).read()
                guard reading.warnings.isEmpty else {
                    return FileCheck(file: path, problem: .invalid(offset: nil, message: reading.warnings.joined(separator: "; ")))
                }
                return FileCheck(file: path, problem: nil)
            } catch {
                switch error {
                case .file(let e): return FileCheck(file: path, problem: .unreadable(e.message))
                case .document(_, let e): return FileCheck(file: path, problem: .invalid(offset: nil, message: e.description))
                }
            }
        }
        let bytes: [UInt8]
        if path == "-" {
            do { bytes = try Console.current.readInput() } catch {
                let prefix = Inputs.displayName(path) + ": "
                let m = error.message
                return FileCheck(file: path, problem: .unreadable(m.hasPrefix(prefix) ? String(m.dropFirst(prefix.count)) : m))
            }
        } else {
            do { bytes = try FileStore.read(path, pipes: true) } catch {
                return FileCheck(file: path, problem: .unreadable(error.message))
            }
        }
        do {
            let document = try Document.load(bytes)
            if keepingDocument { ProcessEnd.keep(document) }
            if let line = GitUnmergedNotebook.check(path) { return FileCheck(file: path, problem: .gitUnmerged(line)) }
            return FileCheck(file: path, problem: nil)
        } catch {
            if case .invalidDocument(let offset, let message) = error {
                return FileCheck(file: path, problem: .invalid(offset: offset, message: message),
                                 hint: SalvageHint.suffix(for: error, bytes: bytes, path: path, standardInputIsFile: Console.current.standardInputIsFile))
            }
            return FileCheck(file: path, problem: .invalid(offset: nil, message: error.description))
        }
    }

    /// `FILE: offset N: what is wrong` (the same text as `DocumentFileError.description`), or nil when valid.
    var errorLine: String? {
        let name = Inputs.displayName(file)
        switch problem {
        case nil: return nil
        case .unreadable(let m): return "\(name): \(m)"
        case .invalid(let offset, let m):
            return DocumentFileError.document(path: name, .invalidDocument(offset: offset, message: m)).description + hint
        case .gitUnmerged(let line): return line
        }
    }

    /// `{"file": …, "valid": …, "error": {"offset": N|null, "message": …} | null}`.
    var json: JSONValue {
        let error: JSONValue
        switch problem {
        case nil: error = .null
        case .unreadable(let m): error = .object([("offset", .null), ("message", .string(m))])
        case .invalid(let offset, let m): error = .object([("offset", .optional(offset)), ("message", .string(m))])
        case .gitUnmerged(let line): error = .object([("offset", .null), ("message", .string(line))])
        }
        return .object([("file", .string(file)), ("valid", .bool(problem == nil)), ("error", error)])
    }

    /// 65 if any file is damaged, else 66 if any is unreadable, else 1 if any is an unmerged notebook, else 0.
    static func exitStatus(_ results: [FileCheck]) -> ExitStatus {
        if results.contains(where: { if case .invalid = $0.problem { true } else { false } }) { return .invalidInput }
        if results.contains(where: { if case .unreadable = $0.problem { true } else { false } }) { return .noInput }
        if results.contains(where: { $0.problem != nil }) { return .conflict }
        return .success
    }
}
