import ArgumentParser
import PeerNote
import PeerNoteCLISupport

/// `--author`: who is recorded as the author of the change (every command that writes).
struct AuthorOptions: ParsableArguments {
    @Option(parsing: .unconditional,
            help: ArgumentHelp("Record NAME as the author of the change (not empty; default: $PEERNOTE_AUTHOR, else git's user.name, else the login name, each of which must be UTF-8).",
                               valueName: "NAME"))
    var author: String?

    /// The author to record, resolved as documented; an empty `--author`, or a name from the
    /// environment, git or the system that is not UTF-8, is a usage error.
    func resolved() throws(CLIFailure) -> String { try AuthorResolver.resolve(explicit: author) }
}

/// `-m`: the message recorded with the change.
struct MessageOptions: ParsableArguments {
    @Option(name: [.customShort("m"), .customLong("message")], parsing: .unconditional, help: ArgumentHelp("Record MESSAGE with the change.", valueName: "MESSAGE"))
    var message: String?

    /// The message given, or `fallback`.
    func or(_ fallback: String) -> String { message ?? fallback }
}

/// A priority as it is typed on the command line.
enum PriorityArgument: String, ExpressibleByArgument, CaseIterable, Sendable {
    case low, normal, high

    var priority: Priority {
        switch self {
        case .low: .low
        case .normal: .normal
        case .high: .high
        }
    }
}

/// Where a note's new body comes from: `--body TEXT` or `--body-file PATH|-`.
struct BodyOptions: ParsableArguments {
    @Option(parsing: .unconditional, help: ArgumentHelp("The note's body.", valueName: "TEXT"))
    var body: String?

    @Option(help: ArgumentHelp("Read the note's body from PATH (- for standard input), exactly as it is.", valueName: "PATH"),
            completion: .file())
    var bodyFile: String?

    func validate() throws {
        if body != nil && bodyFile != nil { throw ValidationError("Give --body or --body-file, not both.") }
    }

    /// The body given, if any (reads the file).
    func text() throws(CLIFailure) -> String? {
        if let body { return body }
        if let bodyFile { return try TextFile.read(bodyFile, option: "--body-file") }
        return nil
    }
}
