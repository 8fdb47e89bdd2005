import ArgumentParser
import PeerNote
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Shell completion of a NOTE argument: the titles and ids of the notes of the FILE already
/// typed on the command line. Runs inside the shell's completion, so it never prints an error
/// and never waits: a FILE that is missing, damaged, not a regular file (a FIFO would block
/// the read) or not typed yet completes to nothing.
enum NoteCompletion {
    static let kind = CompletionKind.custom { words, index, prefix in candidates(words: words, index: index, prefix: prefix) }

    /// The ids and titles of the live notes of the FILE among `words` (the command line's shell
    /// words, the program's name first) that start with `prefix` (ignoring letter case), titles
    /// first, in document order.
    static func candidates(words: [String], index: Int, prefix: String) -> [String] {
        guard let path = file(in: words, before: index) else { return [] }
        guard isRegularFile(path), let document = try? Document.open(path) else { return [] }
        let typed = unquoted(prefix).lowercased()
        var out: [String] = []
        for note in document.notes {
            if note.title.lowercased().hasPrefix(typed), !note.title.isEmpty, !note.title.contains(where: \.isNewline) { out.append(note.title) }
        }
        for note in document.notes where note.id.description.hasPrefix(typed) { out.append(note.id.description) }
        return out
    }

    /// The FILE argument: the first word after the subcommand's name that is not an option or an
    /// option's value, expanded as the shell would (quotes removed, `~/` as `$HOME/`).
    static func file(in words: [String], before index: Int) -> String? {
        var i = 2  // words[0] is the program, words[1] the subcommand
        while i < min(index, words.count) {
            let word = words[i]
            if word == "--" { i += 1; continue }
            if word.hasPrefix("-") {
                let name = word == "-m" ? "--message" : word
                i += PeerNoteCLI.verbatimValueOptions.contains(name) ? 2 : 1
                continue
            }
            var path = unquoted(word)
            if path.hasPrefix("~/"), let home = ProcessInfo.processInfo.environment["HOME"] { path = home + path.dropFirst(1) }
            return path.isEmpty ? nil : path
        }
        return nil
    }

    /// A shell word without its quoting: `'a b'`, `"a b"` and `a\ b` are `a b`.
    static func unquoted(_ word: String) -> String {
        var out = ""
        var quote: Character?
        var escaped = false
        for c in word {
            if escaped { out.append(c); escaped = false; continue }
            if let q = quote {
                if c == q { quote = nil } else if c == "\\" && q == "\"" { escaped = true } else { out.append(c) }
                continue
            }
            switch c {
            case "'", "\"": quote = c
            case "\\": escaped = true
            default: out.append(c)
            }
        }
        return out
    }

    private static func isRegularFile(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && st.st_mode & S_IFMT == S_IFREG
    }
}
