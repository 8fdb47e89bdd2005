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

    /// A folder with `n b.peernote` (notes "Dentist at 9" and "Groceries"), `other.txt`, a
    /// folder `sub`, and both tools' completion scripts for `shell` (zsh's as `_peernote` and
    /// `_pnmerge`, for `fpath`; fish's as `peernote.fish` and `pnmerge.fish`); and the
    /// environment a shell there gets: the built tools first on `PATH`, a home of its own.
    func shellFolder(_ shell: String) throws -> (dir: TempDir, ids: (String, String), env: [String: String]) {
        let dir = try TempDir()
        let ids = try notebook(dir)
        _ = try dir.write("other.txt", "")
        try FileManager.default.createDirectory(atPath: dir.file("sub"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: dir.file("home"), withIntermediateDirectories: true)
        for tool in ["peernote", "pnmerge"] {
            _ = try dir.write(shell == "zsh" ? "_\(tool)" : "\(tool).fish", try script(tool, shell, in: dir))
        }
        let bin = URL(fileURLWithPath: try Binary.require()).deletingLastPathComponent().path
        var env = Binary.environment([:])
        env["PATH"] = bin + ":" + (env["PATH"] ?? "/usr/bin:/bin")
        // A terminal without cursor movement: the line is redrawn as plain text.
        env["TERM"] = "dumb"
        for key in ["HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"] { env[key] = dir.file("home") }
        env.removeValue(forKey: "ZDOTDIR")
        return (dir, ids, env)
    }

    /// Types `line` and a tab into `shell`, and waits until the terminal shows `expected`
    /// after it; then clears the line. Returns what the terminal showed.
    @discardableResult
    func complete(_ line: String, in shell: ShellSession, showing expected: [String]) throws -> String {
        let start = shell.text.count
        shell.type(line + "\t")
        let shown = try shell.waitFor(after: start, "completion of \(line.debugDescription) showing \(expected)") { text in
            expected.allSatisfy { text.contains($0) }
        }
        shell.type("\u{15}")
        return shown
    }

    /// What the terminal shows after a tab on `line` (which may offer nothing), up to the
    /// output of a command typed after it: the shell handles keys in order, so the
    /// completion has been drawn by then.
    func completionShown(_ line: String, in shell: ShellSession, echo: String) throws -> String {
        let start = shell.text.count
        shell.type(line + "\t\u{15}" + echo + "\r")
        let shown = try shell.waitFor(after: start, "the output of \(echo.debugDescription)") { $0.contains("DONE\r") }
        return shown
    }

    @Test("zsh: the scripts, loaded with compinit, complete .peernote files and folders for FILE and note titles and ids for NOTE")
    func zshForReal() throws {
        let zsh = try ShellSession.require("zsh")
        let (dir, ids, env) = try shellFolder("zsh")
        let shell = try ShellSession("\(zsh) -f -i", name: "zsh", in: dir.path, environment: env)
        defer { shell.close() }
        // The marker is printed as READY; the typed line echoes it with quotes.
        shell.type("PS1='> '; fpath=(\(dir.path) $fpath); autoload -U compinit; compinit -u -D; print RE''ADY\r")
        try shell.waitFor("compinit") { $0.contains("READY\r") }
        try complete("peernote show n\\ b.peernote G", in: shell, showing: ["peernote show n\\ b.peernote Groceries"])
        try complete("peernote edit 'n b.peernote' Den", in: shell, showing: ["peernote edit 'n b.peernote' Dentist\\ at\\ 9"])
        try complete("peernote rm n\\ b.peernote \(ids.1.prefix(6))", in: shell, showing: ["peernote rm n\\ b.peernote \(ids.1)"])
        // Several candidates are listed below the line: every title and id.
        try complete("peernote show n\\ b.peernote ", in: shell, showing: ["Dentist at 9", "Groceries", ids.0, ids.1])
        try complete("pnmerge show n", in: shell, showing: ["pnmerge show n\\ b.peernote"])
        try complete("peernote list n", in: shell, showing: ["peernote list n\\ b.peernote"])
        let listed = try complete("pnmerge diff ", in: shell, showing: ["n\\ b.peernote", "sub/"])
        #expect(!listed.contains("other.txt"), "\(listed)")
    }

    @Test("fish: the scripts, sourced, complete .peernote files and folders for FILE and note titles and ids for NOTE")
    func fishForReal() throws {
        let fish = try ShellSession.require("fish")
        let (dir, ids, env) = try shellFolder("fish")
        let setup = "source peernote.fish; source pnmerge.fish; function fish_prompt; echo '> '; end; echo RE''ADY"
        let shell = try ShellSession("\(fish) --no-config -i -C \"\(setup)\"", name: "fish", in: dir.path, environment: env)
        defer { shell.close() }
        try shell.waitFor("the scripts sourced") { $0.contains("READY\r") }
        try complete("peernote show n\\ b.peernote G", in: shell, showing: ["peernote show n\\ b.peernote Groceries"])
        try complete("peernote edit 'n b.peernote' Den", in: shell, showing: ["peernote edit 'n b.peernote' Dentist\\ at\\ 9"])
        try complete("peernote rm n\\ b.peernote \(ids.1.prefix(6))", in: shell, showing: ["peernote rm n\\ b.peernote \(ids.1)"])
        try complete("pnmerge show n", in: shell, showing: ["pnmerge show n\\ b.peernote"])
        try complete("peernote list n", in: shell, showing: ["peernote list n\\ b.peernote"])
        try complete("pnmerge diff s", in: shell, showing: ["pnmerge diff sub/"])
        // Only .peernote files and folders: other.txt is never offered.
        let other = try completionShown("pnmerge show o", in: shell, echo: "echo DO''NE")
        #expect(!other.contains("other.txt"), "\(other)")
    }
}
