import ArgumentParser
import PeerNote
import PeerNoteCLISupport

/// `peernote`: create and edit .peernote documents from the command line.
public struct PeerNoteCLI: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "peernote",
        abstract: "Create and edit .peernote notebooks.",
        discussion: """
            A NOTE is named by its id (see 'peernote list'), a unique prefix of its id, or its exact \
            title when only one note has it. Every change is recorded in the document's history, so \
            copies edited on other devices merge without losing edits (see pnmerge(1)).

            Changes are recorded as made by --author, else $PEERNOTE_AUTHOR, else git's user.name, \
            else the login name.

            Exit status: 0 success, 2 unrelated documents, 64 usage error (including a NOTE that \
            names no note or several), 65 invalid or damaged input, 66 missing or unreadable input \
            (or a failed editor), 73 output file exists, 74 I/O error while writing.
            """,
        version: "peernote 0.1.0 (format version \(FormatInfo.version))",
        subcommands: [New.self, Add.self, Edit.self, Remove.self, Restore.self, Move.self,
                      Title.self, List.self, Export.self, Import.self]
    )

    public init() {}
}

/// A peernote subcommand: `execute()` does the work; a failure becomes one line on stderr
/// (`peernote: FILE: what is wrong`) and an exit status from `ExitStatus`.
protocol PeerNoteSubcommand: ParsableCommand {
    func execute() throws
}

extension PeerNoteSubcommand {
    mutating func run() throws {
        do {
            try execute()
        } catch let failure as CLIFailure {
            Failure.report(failure.message)
            throw failure.status.exitCode
        } catch let error as PeerNoteError {
            let failure = CLIFailure(error, path: "peernote")
            Failure.report("\(error)")
            throw failure.status.exitCode
        }
    }
}

/// Writing the one stderr line a failure gets.
enum Failure {
    static func report(_ message: String) {
        Terminal.error("peernote: " + DisplayText.oneLine(message))
    }
}
