import ArgumentParser

/// How a run that ArgumentParser ended (help, version, a completion script, a usage error, an
/// `ExitCode` a command threw) is reported, in the tools' style: help and the like on standard
/// output; a usage error as one line `TOOL: what is wrong (see 'TOOL SUBCOMMAND --help')`, as
/// every other error is, followed by the subcommand's usage synopsis for the person at the
/// terminal (ArgumentParser's `See '…' for more information.` line is the hint on the first
/// line, so it is not repeated).
public struct ParserOutcome: Sendable {
    /// The exit status.
    public var status: Int32
    /// What goes to standard output (help, version, a completion script), or "".
    public var standardOutput: String
    /// What goes to standard error, or "".
    public var standardError: String

    /// The outcome of `error`, which `Command.parseAsRoot` or a command's `run()` threw.
    /// `rewording` may change a usage error's message (as `sentence` left it) before the hint
    /// is added: peernote names `-m` as typed, for one.
    public init<Command: ParsableCommand>(_ error: any Error, command: Command.Type, tool: String,
                                          rewording: (String) -> String = { $0 }) {
        let code = Command.exitCode(for: error)
        status = code.rawValue
        standardOutput = ""
        standardError = ""
        if code == .success {
            let text = Command.fullMessage(for: error)
            if !text.isEmpty { standardOutput = text + "\n" }
            return
        }
        // A command that reported its own failure throws a bare `ExitCode`: nothing more to say.
        let message = Command.message(for: error)
        if message.isEmpty { return }
        if code.rawValue == ExitStatus.usage.rawValue {
            standardError = Self.usageError(tool: tool, message: message, fullMessage: Command.fullMessage(for: error), rewording: rewording)
        } else {
            standardError = "\(tool): " + DisplayText.oneLine(message) + "\n"
        }
    }

    /// `TOOL: message (see 'TOOL SUB --help')` and the `Usage:` lines of `fullMessage`
    /// (ArgumentParser's `Error: …`, `Help: …`, `Usage: …` and `See '…' for more information.`).
    /// The message is made one line, loses a final full stop, and starts in lower case when it
    /// starts with a capitalised word ("Missing expected argument" → "missing expected argument"),
    /// as the tools' other messages do.
    public static func usageError(tool: String, message: String, fullMessage: String,
                                  rewording: (String) -> String = { $0 }) -> String {
        var hint = "\(tool) --help"
        var usage: [String] = []
        var inUsage = false
        for line in fullMessage.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.drop { $0 == " " }
            if trimmed.hasPrefix("See '"), trimmed.hasSuffix("' for more information.") {
                hint = String(trimmed.dropFirst("See '".count).dropLast("' for more information.".count))
                inUsage = false
                continue
            }
            if line.hasPrefix("Usage: ") { inUsage = true }
            if line.isEmpty { inUsage = false }
            if inUsage { usage.append(String(line)) }
        }
        let first = "\(tool): \(rewording(sentence(parserLinesJoined(message)))) (see '\(hint)')"
        return ([DisplayText.oneLine(first)] + usage).joined(separator: "\n") + "\n"
    }

    /// ArgumentParser reports a missing argument before an option the command does not know, so
    /// `pnmerge validate -q` said "missing expected argument '<FILE> ...'" (with a file it says
    /// "unknown option '-q'"), and `peernote edit FILE -draft- --body T` named the missing
    /// NOTE rather than `-draft-`, which it read as an option. When `error` is such a missing
    /// argument and `arguments` (as parsed) hold a word before `--` that starts with `-` (other
    /// than `-` alone), this parses them again with placeholder arguments after `--`, one more
    /// each time an argument is still missing (up to 4), and returns the unknown-option error
    /// that parse gives. Nil otherwise: the missing argument is then the error to report. Only
    /// parsed, never run.
    public static func unknownOption<Command: ParsableCommand>(behind error: any Error, arguments: [String],
                                                               command: Command.Type) -> (any Error)? {
        guard Command.message(for: error).hasPrefix("Missing expected argument") else { return nil }
        let options = arguments.prefix { $0 != "--" }
        guard options.contains(where: { $0.hasPrefix("-") && $0 != "-" }) else { return nil }
        var line = arguments
        if options.count == arguments.count { line.append("--") }
        for _ in 0 ..< 4 {
            line.append("placeholder")
            do {
                _ = try Command.parseAsRoot(line)
                return nil
            } catch {
                let message = Command.message(for: error)
                if message.hasPrefix("Unknown option ") { return error }
                guard message.hasPrefix("Missing expected argument") else { return nil }
            }
        }
        return nil
    }

    /// `message` with the line breaks ArgumentParser puts in its own messages made one line: a
    /// list of allowed values, one per line, after its last "Please provide one of the
    /// following:" ("…following:\n  - a\n  - b" gives "…following: a, b"), and the completion-script
    /// error's second and third lines ("…for 'tcsh'.\nPlease use --generate-completion-script=<shell>
    /// with one of:\n    zsh bash fish" gives "…for 'tcsh'. Please use … one of: zsh bash fish").
    /// Only after those fixed words: a line break in a value the user typed, which comes before
    /// them, is left for `DisplayText.oneLine` to show as `\n`.
    package static func parserLinesJoined(_ message: String) -> String {
        let completion = "'.\nPlease use --generate-completion-script=<shell> with one of:\n    "
        if message.hasPrefix("Can't generate completion scripts for '"), let r = message.ranges(of: completion).last,
           !message[r.upperBound...].contains("\n") {
            return message[..<r.lowerBound] + "'. Please use --generate-completion-script=<shell> with one of: " + message[r.upperBound...]
        }
        let list = "Please provide one of the following:\n"
        guard let r = message.ranges(of: list).last else { return message }
        let values = message[r.upperBound...].split(separator: "\n", omittingEmptySubsequences: false)
        guard !values.isEmpty, values.allSatisfy({ $0.hasPrefix("  - ") }) else { return message }
        return message[..<r.upperBound].dropLast() + " " + values.map { $0.dropFirst(4) }.joined(separator: ", ")
    }

    /// `message` without surrounding white space and a final ".", its first word in lower case
    /// when it is capitalised (an upper-case letter, then a lower-case one), or is the article
    /// "A" ("A tag cannot be empty"); an acronym ("JSON …") or "I" is kept.
    static func sentence(_ message: String) -> String {
        var text = Substring(message)
        while text.last?.isWhitespace == true { text.removeLast() }
        while text.first?.isWhitespace == true { text.removeFirst() }
        if text.hasSuffix("."), !text.hasSuffix("..") { text.removeLast() }
        let start = Array(text.unicodeScalars.prefix(2))
        guard start.count == 2, ("A"..."Z").contains(start[0]),
              ("a"..."z").contains(start[1]) || (start[0] == "A" && start[1] == " ") else { return String(text) }
        return String(start[0]).lowercased() + String(Substring(text.unicodeScalars.dropFirst()))
    }
}
