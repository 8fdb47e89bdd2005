import ArgumentParser
import PeerNote
import PeerNoteCLISupport

/// `peernote`: create and edit .peernote documents from the command line.
public struct PeerNoteCLI: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "peernote",
        abstract: "Create and edit .peernote notebooks.",
        discussion: """
            A NOTE is named by its id (see 'peernote list'), a unique prefix of its id, or its \
            title when only one note has it (exactly, else in other letter case, else a title it \
            had before); a name that matches nothing gets the closest titles. Every change is recorded in the document's history, so \
            copies edited on other devices merge without losing edits (see pnmerge(1)).

            Changes are recorded as made by --author, else $PEERNOTE_AUTHOR, else git's user.name, \
            else the login name.

            'peernote --generate-completion-script bash|zsh|fish' prints a shell completion \
            script.

            Exit status: 0 success, 2 unrelated documents, 64 usage error (including a NOTE that \
            names no note or several), 65 invalid or damaged input, 66 missing or unreadable input \
            (or a failed editor), 73 output file exists, 74 I/O error while writing.
            """,
        version: "peernote 0.1.0 (.peernote format: \(FormatInfo.summary))",
        subcommands: [New.self, Add.self, Edit.self, Remove.self, Restore.self, Move.self,
                      Title.self, List.self, Show.self, Search.self, Conflicts.self, Resolve.self,
                      Log.self, Blame.self, Revert.self, Export.self, Import.self]
    )

    public init() {}

    /// What a first word that is no subcommand is refused with (`peernote mv …`).
    public static let unknownCommand = UnknownCommand(
        tool: "peernote",
        commands: configuration.subcommands.map { $0._commandName },
        aliases: ["mv": "move", "delete": "rm", "del": "rm", "remove": "rm", "ls": "list", "init": "new",
                  "create": "new", "undelete": "restore", "cat": "show", "grep": "search", "find": "search"],
        fileCommand: "list")

    /// Parses `typed` (the arguments without the program name, as typed: they are
    /// `normalizedArguments` here, and a usage error names what was typed), runs the command, and
    /// returns the exit status. A subcommand reports its own failures (one line,
    /// `PeerNoteSubcommand`); ArgumentParser's outcomes are written as `ParserOutcome` says: help
    /// on standard output, a usage error as one line `peernote: …` and the usage synopsis.
    public static func execute(_ typed: [String]) -> Int32 {
        // `-mFIX` is `-m FIX` for the commands that record a message, and `import … -oFILE` is
        // `-o FILE`; `-mbook.peernote` is left whole, a file name (refused below).
        let first = typed.first ?? ""
        // A shell's completion asking for a NOTE's candidates: ArgumentParser's own format,
        // passed on as it is (its words are the command line's, options and all).
        if first == "---completion" { return complete(typed) }
        var glued: Set<String> = Self.messageCommands.contains(first) ? ["-m"] : []
        if first == "import" { glued.insert("-o") }
        let (split, splitWords) = GluedShortOption.split(typed, options: glued, valueOptions: verbatimValueOptions) { word, option in
            option == "-m" && word.lowercased().hasSuffix(".peernote")
        }
        let arguments = normalizedArguments(split)
        if let refusal = DashFileName.refusal(arguments) ?? GluedShortOption.helpTrap(arguments, valueOptions: verbatimValueOptions.union(["-m"])) {
            Terminal.error("peernote: " + refusal)
            return ExitStatus.usage.rawValue
        }
        do {
            var command = try parseAsRoot(arguments)
            try command.run()
            return ExitStatus.success.rawValue
        } catch {
            // `peernote mv f n --to 1`: the unknown command, not ArgumentParser's "unknown option
            // '--to'". Looked for only here: a first word that is no command never parses, and
            // listing the commands' names reads every subcommand's configuration, work a run
            // that parses should not pay.
            if let refusal = unknownCommand.refusal(arguments) {
                Terminal.error(String(refusal.dropLast()))
                return ExitStatus.usage.rawValue
            }
            // An unknown option is named rather than an argument missing beside it (`edit FILE -draft- --body T`).
            let reported = ParserOutcome.unknownOption(behind: error, arguments: arguments, command: Self.self) ?? error
            let outcome = ParserOutcome(reported, command: Self.self, tool: "peernote", rewording: {
                usageMessage($0, typed: typed) + GluedShortOption.hint(splitWords)
            })
            if !outcome.standardOutput.isEmpty { print(outcome.standardOutput, terminator: "") }
            if !outcome.standardError.isEmpty { Terminal.error(String(outcome.standardError.dropLast())) }
            return outcome.status
        }
    }

    /// Runs ArgumentParser's custom completion (`---completion …`) and prints its candidates.
    static func complete(_ arguments: [String]) -> Int32 {
        do {
            _ = try parseAsRoot(arguments)
            return ExitStatus.success.rawValue
        } catch {
            let outcome = ParserOutcome(error, command: Self.self, tool: "peernote")
            if !outcome.standardOutput.isEmpty { print(outcome.standardOutput, terminator: "") }
            if !outcome.standardError.isEmpty { Terminal.error(String(outcome.standardError.dropLast())) }
            return outcome.status
        }
    }

    /// A usage error's `message` in the terms of the command line as `typed`: `-m` where `-m` was
    /// typed (`normalizedArguments` makes it `--message`, so `new FILE -m hi` was refused with
    /// "unknown option '--message'"); and an unknown option that reads as a value (one `-`,
    /// longer than a flag, given whole: `-draft-`, a note's title) gets where such a value goes,
    /// as `DashFileName` says for a file: after `--`.
    static func usageMessage(_ message: String, typed: [String]) -> String {
        let unknown = "unknown option '"
        guard message.hasPrefix(unknown) else { return message }
        var message = message
        let long = unknown + "--message'"
        if message.hasPrefix(long), typedOptions(typed).contains("-m"), !typedOptions(typed).contains(where: { $0 == "--message" || $0.hasPrefix("--message=") }) {
            message = unknown + "-m'" + message.dropFirst(long.count)
        }
        let name = String(message.dropFirst(unknown.count).prefix { $0 != "'" })
        if name.hasPrefix("-"), !name.hasPrefix("--"), name.unicodeScalars.count > 2, typedOptions(typed).contains(name) {
            message += "; a note or other value that starts with '-' goes last, after the options and --: -- \(ShellQuote.word(name))"
        }
        return message
    }

    /// The words of `typed` before `--` that are not the value of a verbatim-value option (the
    /// options and arguments as the person gave them).
    static func typedOptions(_ typed: [String]) -> [String] {
        var out: [String] = []
        var i = 0
        while i < typed.count, typed[i] != "--" {
            out.append(typed[i])
            i += verbatimValueOptions.contains(typed[i] == "-m" ? "--message" : typed[i]) ? 2 : 1
        }
        return out
    }

    /// The commands that record a message (`-m`).
    static let messageCommands: Set<String> = ["add", "edit", "import", "move", "rm", "restore", "resolve", "revert", "title"]

    /// The options whose value is taken as it is, even when it starts with a dash (`--body -5`,
    /// `--title --draft--`); `-m` is `--message`.
    static let verbatimValueOptions: Set<String> = [
        "--author", "--message", "--body", "--title", "--tag", "--at", "--to", "--add-tag", "--remove-tag", "--value",
    ]

    /// `arguments` (without the program name) as ArgumentParser reads them right: each
    /// `--title VALUE` of a verbatim-value option joined into `--title=VALUE`, and `--title=` (an
    /// empty value) split into `--title ""`. ArgumentParser (1.6) otherwise takes `--title=`
    /// as a missing value and the next argument as the title, so `--title= --priority=high`
    /// retitled the note "--priority=high"; and it refuses `---` and `--` as values given
    /// apart (`--body ---` is "Invalid option"). Stops at a `--` that is not a value.
    public static func normalizedArguments(_ arguments: [String]) -> [String] {
        var out: [String] = []
        out.reserveCapacity(arguments.count)
        var i = 0
        while i < arguments.count {
            let arg = arguments[i]
            if arg == "--" {
                out.append(contentsOf: arguments[i...])
                break
            }
            let name = arg == "-m" ? "--message" : arg
            if verbatimValueOptions.contains(name), i + 1 < arguments.count {
                let value = arguments[i + 1]
                // `--title=VALUE` keeps a VALUE that starts with "-" a value. ArgumentParser splits at
                // the "=" character, so a VALUE whose first scalar joins the "=" into one character
                // (a combining mark) stays a separate word (it cannot start with "-" then).
                if value.isEmpty || ("=" + value).first != "=" { out += [name, value] } else { out.append(name + "=" + value) }
                i += 2
                continue
            }
            if arg.hasSuffix("="), verbatimValueOptions.contains(String(arg.dropLast())) {
                out += [String(arg.dropLast()), ""]
                i += 1
                continue
            }
            out.append(arg)
            i += 1
        }
        return out
    }
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
