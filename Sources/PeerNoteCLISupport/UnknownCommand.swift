/// A command line whose first word is not one of the tool's subcommands (`peernote mv …`,
/// `pnmerge mrege …`), reported as that before ArgumentParser reads the rest: it would otherwise
/// name the first option the root command lacks (`unknown option '--to'`), which is not the
/// problem.
///
/// The line is `TOOL: unknown command 'WORD' (see 'TOOL --help')`, with `; did you mean 'X'?`
/// before the hint when a subcommand is close: a known alias of it (`mv` for `move`), the one
/// subcommand it begins (two letters or more: `imp` for `import`), or the subcommands whose name
/// or alias is at the smallest edit distance (letters added, removed, changed or two neighbours
/// swapped, in any case), at most 2 and less than the word's length (so that `x` does not
/// suggest `rm`). For a word that looks like a file instead (it names
/// one, holds a `/` or ends in `.peernote`), the line says `; the command comes first: pnmerge
/// show x.peernote`. A second line lists the subcommands. The exit status is the usage one (64).
/// `help WORD` with such a WORD is refused the same way: ArgumentParser's help command would
/// print the tool's whole help for it and exit 0.
public struct UnknownCommand: Sendable {
    /// The program name (`peernote`).
    public var tool: String
    /// The subcommands, as `--help` lists them.
    public var commands: [String]
    /// Other words for a subcommand (`mv` → `move`), looked up in lower case.
    public var aliases: [String: String]
    /// The subcommand a file given first was most likely meant for (`show` for pnmerge).
    public var fileCommand: String

    public init(tool: String, commands: [String], aliases: [String: String], fileCommand: String) {
        self.tool = tool
        self.commands = commands
        self.aliases = aliases
        self.fileCommand = fileCommand
    }

    /// Words ArgumentParser takes first besides the subcommands.
    static let builtIn: Set<String> = ["help"]

    /// What to write on standard error (the lines, each ending in a line break) when the first of
    /// `arguments` (without the program name) is a word that is no subcommand, or is `help`
    /// followed by such a word; nil when it is a subcommand (or `help` alone or before one),
    /// starts with `-` (an option, or `-` for standard input, which ArgumentParser reports), or
    /// there are no arguments.
    public func refusal(_ arguments: [String], namesFile: (String) -> Bool = { RawArguments.namesExistingFile(Array($0.utf8)) }) -> String? {
        if arguments.first == "help", arguments.count > 1 { return refusal(Array(arguments.dropFirst()), namesFile: namesFile) }
        guard let word = arguments.first, !word.hasPrefix("-"), !commands.contains(word), !Self.builtIn.contains(word) else { return nil }
        var first = "\(tool): unknown command '\(word)'"
        let suggestions = suggestions(for: word)
        if !suggestions.isEmpty {
            first += "; did you mean " + suggestions.map { "'\($0)'" }.joined(separator: " or ") + "?"
        } else if word.hasSuffix(".peernote") || word.contains("/") || namesFile(word) {
            first += "; the command comes first: \(tool) \(fileCommand) \(ShellQuote.path(word))"
        }
        first += " (see '\(tool) --help')"
        return DisplayText.oneLine(first) + "\n" + "Commands: " + commands.joined(separator: ", ") + "\n"
    }

    /// The subcommands `word` was probably meant to be, closest first; empty when none is close.
    public func suggestions(for word: String) -> [String] {
        let lower = word.lowercased()
        if let alias = aliases[lower], commands.contains(alias) { return [alias] }
        if let same = commands.first(where: { $0.lowercased() == lower }) { return [same] }
        let started = commands.filter { $0.lowercased().hasPrefix(lower) }
        if lower.count >= 2, started.count == 1 { return started }
        // The commands and the aliases, each with the command it names.
        let words = commands.map { ($0, $0) } + aliases.sorted { $0.key < $1.key }.filter { commands.contains($0.value) }
        let typed = Array(lower.unicodeScalars)
        var best: [String] = []
        var bestDistance = Int.max
        for (candidate, command) in words {
            let d = Self.distance(typed, Array(candidate.lowercased().unicodeScalars))
            guard d <= 2, d < typed.count, d <= bestDistance else { continue }
            if d < bestDistance { best = []; bestDistance = d }
            if !best.contains(command) { best.append(command) }
        }
        return best
    }

    /// The optimal string alignment distance: insertions, deletions, substitutions and swaps of
    /// two neighbours (`mrege` is 1 from `merge`).
    static func distance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0 ... a.count { d[i][0] = i }
        for j in 0 ... b.count { d[0][j] = j }
        for i in 1 ... a.count {
            for j in 1 ... b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
                }
            }
        }
        return d[a.count][b.count]
    }
}
