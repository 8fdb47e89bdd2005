import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import PeerNote
import PeerNoteCLISupport

/// `pnmerge`: merge, check and look into `.peernote` notebooks from the command line.
public struct PNMerge: ParsableCommand {
    public static let version = "0.1.0"

    public static let configuration = CommandConfiguration(
        commandName: "pnmerge",
        abstract: "Merge, validate and inspect .peernote notebooks whose copies diverged.",
        discussion: """
        A .peernote file holds a notebook together with the full history of edits that \
        produced it, so copies edited on several devices merge without losing an edit. \
        'pnmerge merge' brings the changes of other copies into yours and says, in note \
        terms, what arrived and what conflicts remain; 'pnmerge sync' does it for every \
        copy under some folders (USB sticks, Syncthing, Dropbox, Nextcloud); 'pnmerge \
        git-setup' makes git merge and diff notebooks. The other subcommands check files \
        and show a notebook, its history and how two copies differ.

        A FILE of '-' reads standard input (show, inspect, validate, log, textconv, salvage, \
        and one input of merge or diff); '-o -' writes the merged or salvaged document to \
        standard output. Results go to \
        standard output, errors to standard error, one line naming the file. Colour is used \
        only on a terminal and never when NO_COLOR is set or TERM is dumb. 'pnmerge \
        --generate-completion-script bash|zsh|fish' prints a shell completion script. See \
        pnmerge(1) and peernote(5).

        EXIT STATUS
        \(exitStatusTable)
        """,
        version: "pnmerge \(version) (.peernote format: \(FormatInfo.summary))",
        subcommands: [Merge.self, Validate.self, Inspect.self, Show.self, Log.self, Diff.self,
                      Sync.self, Compact.self, Convert.self, GitSetup.self, GitDriver.self, Textconv.self, Salvage.self]
    )

    /// The exit codes, one per line (`  65  invalid or damaged document`), from `ExitStatus`.
    public static var exitStatusTable: String {
        ExitStatus.allCases.map { "  " + String($0.rawValue).padded(toLength: 4) + $0.meaning }
            .joined(separator: "\n")
    }

    public init() {}

    /// What a first word that is no subcommand is refused with (`pnmerge mrege …`).
    public static let unknownCommand = UnknownCommand(
        tool: "pnmerge",
        commands: configuration.subcommands.map { $0._commandName },
        aliases: ["check": "validate", "verify": "validate", "info": "inspect", "cat": "show", "print": "show",
                  "view": "show", "history": "log", "compare": "diff", "setup": "git-setup", "install": "git-setup",
                  "driver": "git-driver", "repair": "salvage", "recover": "salvage", "gc": "compact"],
        fileCommand: "show")

    /// Parses `arguments` (without the program name), runs the command with its output going to `output`,
    /// and returns the exit status. Errors are written to `output`'s error stream as one line (control
    /// characters in it, say from a file name or a document, made visible: `DisplayText.oneLine`).
    public static func execute(_ arguments: [String], output: any OutputSink = StandardStreams()) -> Int32 {
        // `merge … -oOUT` is `-o OUT` (merge and salvage have `-o`); `--format`'s value is left whole.
        let arguments = ["merge", "salvage"].contains(arguments.first ?? "")
            ? GluedShortOption.split(arguments, options: ["-o"], valueOptions: ["--format"]).arguments : arguments
        return Console.$current.withValue(output) {
            if let refusal = DashFileName.refusal(arguments) ?? GluedShortOption.helpTrap(arguments, valueOptions: ["-o", "--output", "--at", "--format"]) {
                output.writeError(errorLine(refusal))
                return ExitStatus.usage.rawValue
            }
            do {
                var command = try parseAsRoot(arguments)
                try command.run()
                return ExitStatus.success.rawValue
            } catch let failure as CLIFailure {
                output.writeError(errorLine(failure.message))
                return failure.status.rawValue
            } catch let error as DocumentFileError {
                let failure = CLIFailure(error)
                output.writeError(errorLine(failure.message))
                return failure.status.rawValue
            } catch let error as FileError {
                output.writeError(errorLine("\(error)"))
                return ExitStatus.ioError.rawValue
            } catch let error as PeerNoteError {
                output.writeError(errorLine("\(error)"))
                return ExitStatus.invalidInput.rawValue
            } catch {
                // `pnmerge mrege a b -o c`: the unknown command, not ArgumentParser's "unknown
                // option '-o'". Looked for only here: a first word that is no command never
                // parses, and listing the commands' names reads every subcommand's configuration,
                // work a run that parses (the git driver's too) should not pay.
                if let refusal = unknownCommand.refusal(arguments) {
                    output.writeError(refusal)
                    return ExitStatus.usage.rawValue
                }
                // ArgumentParser's own outcomes: help, version, completion scripts, usage errors
                // (one line, `pnmerge: … (see 'pnmerge log --help')`, then the usage synopsis), ExitCode.
                // An unknown option is named rather than an argument missing beside it (`validate -q`).
                let reported = ParserOutcome.unknownOption(behind: error, arguments: arguments, command: Self.self) ?? error
                let outcome = ParserOutcome(reported, command: Self.self, tool: "pnmerge")
                if !outcome.standardOutput.isEmpty {
                    do { try output.write(outcome.standardOutput) } catch { return ExitStatus.ioError.rawValue }
                }
                if !outcome.standardError.isEmpty { output.writeError(outcome.standardError) }
                return outcome.status
            }
        }
    }
}

/// `pnmerge: MESSAGE` and a line break, the message kept on one line with its control characters made visible.
func errorLine(_ message: String) -> String {
    "pnmerge: " + DisplayText.oneLine(message) + "\n"
}

/// `--json`: print the result as JSON on standard output instead of text.
struct JSONOption: ParsableArguments {
    @Flag(name: .long, help: "Print the result as JSON (see pnmerge(1) for the schema).")
    var json = false
}

extension OutputSink {
    /// Writes `text` to standard output (a failed write has exit status 74).
    func emit(_ text: String) throws(CLIFailure) { try write(text) }
}
