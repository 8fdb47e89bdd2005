import Foundation
import Testing
import TestSupport

/// The shell completion scripts of both tools: files for FILE arguments, and the titles and ids
/// of the FILE's notes for peernote's NOTE arguments, through the binary's completion entry
/// point (`---completion`, which the scripts call).
@Suite("shell completions")
struct CompletionTests {
    /// `TOOL --generate-completion-script SHELL`.
    func script(_ tool: String, _ shell: String, in dir: TempDir) throws -> String {
        let r = tool == "peernote" ? try Binary.run(["--generate-completion-script", shell], in: dir)
            : try runPNMerge(["--generate-completion-script", shell], in: dir)
        try #require(r.status == 0, "\(tool) \(shell): \(r.err)")
        return r.out
    }

    /// The candidates the binary gives for NOTE (the second positional argument) of `command`,
    /// as the scripts ask for them: the command line's words, the index of the word completed,
    /// the cursor's place in it.
    func noteCandidates(_ command: String, file: String, prefix: String, in dir: TempDir) throws -> RunResult {
        let words = ["peernote", command, file, prefix]
        return try Binary.run(["---completion", command, "--", "positional@1", "3", "\(prefix.utf8.count)"] + words, in: dir)
    }

    func notebook(_ dir: TempDir) throws -> (String, String) {
        #expect(try Binary.run(["new", "n b.peernote"], in: dir).status == 0)
        let a = try Binary.run(["add", "n b.peernote", "--title", "Dentist at 9"], in: dir).out.trimmingCharacters(in: .newlines)
        let b = try Binary.run(["add", "n b.peernote", "--title", "Groceries"], in: dir).out.trimmingCharacters(in: .newlines)
        return (a, b)
    }

    @Test("peernote's NOTE arguments complete to the titles and ids of the FILE typed before them, filtered by what is typed, ignoring case")
    func noteNames() throws {
        let dir = try TempDir()
        let (dentist, groceries) = try notebook(dir)
        for command in ["show", "edit", "rm", "restore", "move", "resolve"] {
            let all = try noteCandidates(command, file: "'n b.peernote'", prefix: "", in: dir)
            #expect(all.status == 0 && all.err.isEmpty, "\(command): \(all.err)")
            #expect(all.out.split(separator: "\n").map(String.init) == ["Dentist at 9", "Groceries", dentist, groceries], "\(command): \(all.out)")
        }
        #expect(try noteCandidates("show", file: "n\\ b.peernote", prefix: "den", in: dir).out == "Dentist at 9\n")
        #expect(try noteCandidates("show", file: "\"n b.peernote\"", prefix: String(groceries.prefix(3)), in: dir).out
            .split(separator: "\n").contains(Substring(groceries)))
    }

    @Test("a NOTE completion on a missing, damaged or non-regular FILE, or with no FILE yet, offers nothing and prints no error")
    func badFiles() throws {
        let dir = try TempDir()
        _ = try dir.write("junk.peernote", "not a notebook")
        #expect(mkfifo(dir.file("fifo.peernote"), 0o600) == 0)
        for file in ["missing.peernote", "junk.peernote", "fifo.peernote", ".", "''"] {
            let r = try noteCandidates("show", file: file, prefix: "", in: dir)
            #expect(r.status == 0 && r.out.isEmpty && r.err.isEmpty, "\(file): \(r.status) \(r.out) \(r.err)")
        }
        let none = try Binary.run(["---completion", "show", "--", "positional@1", "2", "0", "peernote", "show", ""], in: dir)
        #expect(none.status == 0 && none.out.isEmpty && none.err.isEmpty)
    }

    /// The part of a script that completes `command`'s arguments: bash's and zsh's function
    /// `_TOOL_COMMAND`, fish's lines for "TOOL COMMAND".
    func section(_ script: String, tool: String, command: String, shell: String) -> String {
        if shell == "fish" {
            return script.split(separator: "\n").filter { $0.contains("\"\(tool) \(command)\"") }.joined(separator: "\n")
        }
        guard let start = script.range(of: "\n_\(tool)_\(command.replacingOccurrences(of: "-", with: "_"))() {") else { return "" }
        let end = script.range(of: "\n}\n", range: start.upperBound ..< script.endIndex)?.lowerBound ?? script.endIndex
        return String(script[start.upperBound ..< end])
    }

    @Test("bash, zsh and fish scripts of both tools complete every FILE argument with .peernote files, and peernote's NOTE arguments through the binary")
    func scripts() throws {
        let dir = try TempDir()
        for shell in ["bash", "zsh", "fish"] {
            let files: String = switch shell {
            case "bash": "-o plusdirs -fX '!*.@(peernote)'"
            case "zsh": "_files -g '\\''*.peernote'\\''"
            default: "*.\\'peernote\\'"
            }
            let peernote = try script("peernote", shell, in: dir)
            for command in ["show", "edit", "rm", "restore", "move", "resolve"] {
                let part = section(peernote, tool: "peernote", command: command, shell: shell)
                #expect(part.contains("---completion \(command) -- positional@1"), "\(shell): peernote \(command) NOTE")
                #expect(part.contains(files), "\(shell): peernote \(command) FILE")
            }
            for command in ["list", "search", "conflicts", "export", "title", "add"] {
                #expect(section(peernote, tool: "peernote", command: command, shell: shell).contains(files), "\(shell): peernote \(command) FILE")
            }
            let pnmerge = try script("pnmerge", shell, in: dir)
            for command in ["merge", "validate", "inspect", "show", "log", "diff", "compact", "salvage", "textconv"] {
                #expect(section(pnmerge, tool: "pnmerge", command: command, shell: shell).contains(files), "\(shell): pnmerge \(command) FILE")
            }
        }
    }

    @Test("bash: the script, sourced, offers .peernote files for pnmerge show FILE and note titles for peernote show FILE NOTE")
    func bashForReal() throws {
        let dir = try TempDir()
        _ = try notebook(dir)
        _ = try dir.write("other.txt", "")
        let peernote = try script("peernote", "bash", in: dir)
        let pnmerge = try script("pnmerge", "bash", in: dir)
        _ = try dir.write("peernote.bash", peernote)
        _ = try dir.write("pnmerge.bash", pnmerge)
        let bin = URL(fileURLWithPath: try Binary.require()).deletingLastPathComponent().path
        // Completes the last of `words` as bash would, the cursor at its end; COMPREPLY one a line.
        func complete(_ words: [String], tool: String) throws -> [String] {
            let quoted = words.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
            let driver = """
                PATH="\(bin):$PATH"
                source ./\(tool).bash
                COMP_WORDS=(\(quoted.joined(separator: " ")))
                COMP_CWORD=\(words.count - 1)
                COMP_LINE="${COMP_WORDS[*]}"
                COMP_POINT=${#COMP_LINE}
                COMPREPLY=()
                _\(tool) \(tool) "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
                printf '%s\\n' "${COMPREPLY[@]}"
                """
            _ = try dir.write("driver.bash", driver)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/bash")
            process.arguments = ["driver.bash"]
            process.currentDirectoryURL = URL(fileURLWithPath: dir.path)
            process.environment = Binary.environment([:])
            let out = Pipe()
            process.standardOutput = out
            process.standardError = FileHandle.nullDevice
            try process.run()
            let data = out.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
        }
        let files = try complete(["pnmerge", "show", "n"], tool: "pnmerge")
        #expect(files == ["n b.peernote"], "\(files)")
        #expect(!(try complete(["pnmerge", "show", ""], tool: "pnmerge")).contains("other.txt"))
        let notes = try complete(["peernote", "show", "n\\ b.peernote", "G"], tool: "peernote")
        #expect(notes == ["Groceries"], "\(notes)")
        let all = try complete(["peernote", "edit", "'n b.peernote'", ""], tool: "peernote")
        #expect(all.prefix(2) == ["Dentist at 9", "Groceries"], "\(all)")
    }
}
