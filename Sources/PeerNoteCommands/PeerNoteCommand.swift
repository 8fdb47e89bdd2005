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
        Terminal.error("peernote: " + Display.inline(message))
    }
}

/// Showing user text on one line.
enum Display {
    /// `text` with line breaks and other control characters made visible (`\n`, `\t`, `\u{1b}`…).
    static func inline(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        for s in text.unicodeScalars {
            switch s {
            case "\n": out.append(contentsOf: "\\n".unicodeScalars)
            case "\r": out.append(contentsOf: "\\r".unicodeScalars)
            case "\t": out.append(contentsOf: "\\t".unicodeScalars)
            default:
                if s.value < 0x20 || s.value == 0x7F || (0x80 ..< 0xA0).contains(s.value) {
                    out.append(contentsOf: "\\u{\(String(s.value, radix: 16))}".unicodeScalars)
                } else {
                    out.append(s)
                }
            }
        }
        return String(out)
    }
}
