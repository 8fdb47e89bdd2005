import Foundation
import Testing
import TestSupport

/// man/peernote.1 against what the tool does.
@Suite("man/peernote.1")
struct PeerNoteManPageTests {
    static let page = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("man/peernote.1")

    func text() throws -> String { try String(contentsOf: Self.page, encoding: .utf8) }

    /// The options (`-o`, `--output`) on the option lines of `peernote COMMAND --help`.
    func options(of command: String, in dir: TempDir) throws -> [String] {
        let help = try Binary.run([command, "--help"], in: dir)
        try #require(help.status == 0, "\(help.err)")
        var names: [String] = []
        for line in help.out.split(separator: "\n") where line.hasPrefix("  -") {
            for word in line.split(separator: " ") {
                guard word.hasPrefix("-") else { break }
                names.append(String(word.hasSuffix(",") ? word.dropLast() : word))
            }
        }
        return names
    }

    /// `name` as the page writes it (`\-\-output`).
    func roff(_ name: String) -> String { name.replacingOccurrences(of: "-", with: "\\-") }

    @Test("Each command's entry in COMMANDS names every option of its --help, long and short; the options every command shares are under OPTIONS, -m with --message")
    func everyOption() throws {
        let page = try text()
        let dir = try TempDir()
        let commands = ["new", "add", "blame", "edit", "rm", "restore", "revert", "move", "title", "list", "log", "export", "import",
                        "conflicts", "resolve", "search", "show"]
        let commandsStart = try #require(page.range(of: "\n.SH COMMANDS\n"))
        let optionsStart = try #require(page.range(of: "\n.SH OPTIONS\n"))
        let optionsEnd = try #require(page.range(of: "\n.SH ", range: optionsStart.upperBound ..< page.endIndex))
        let general = page[optionsStart.upperBound ..< optionsEnd.lowerBound]
        // Each entry runs from its `.BI "CMD ` heading to the next command's.
        var starts: [(String, String.Index)] = []
        for command in commands {
            let heading = try #require(page.range(of: "\n.BI \"\(command) ", range: commandsStart.upperBound ..< optionsStart.lowerBound), "\(command)")
            starts.append((command, heading.lowerBound))
        }
        starts.sort { $0.1 < $1.1 }
        let shared: Set<String> = ["--author", "-m", "--message", "--version", "-h", "--help"]
        for (i, (command, start)) in starts.enumerated() {
            let end = i + 1 < starts.count ? starts[i + 1].1 : optionsStart.lowerBound
            let entry = page[start ..< end]
            for option in try options(of: command, in: dir) {
                if shared.contains(option) {
                    #expect(general.contains(roff(option)), "\(option) (\(command)) under OPTIONS")
                } else {
                    #expect(entry.contains(roff(option)), "peernote \(command) \(option) in its entry")
                }
            }
        }
        #expect(general.contains(".BI \\-m \" MESSAGE\\fR, \" \\-\\-message \" MESSAGE\"\n(Every command that writes"), "the general -m entry names --message")
        #expect(try options(of: "import", in: dir).contains("--output"))
    }

    @Test("--help names --generate-completion-script, which ArgumentParser leaves out of its options list (the page says so), and the option prints a script")
    func completionScript() throws {
        let dir = try TempDir()
        let help = try Binary.run(["--help"], in: dir)
        let words = help.out.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(words.contains("'peernote --generate-completion-script bash|zsh|fish' prints a shell completion script."), "\(help.out)")
        #expect(try text().contains("by design leaves it out of the options that\n.B \\-\\-help\nlists"))
        let script = try Binary.run(["--generate-completion-script", "bash"], in: dir)
        #expect(script.status == 0 && script.out.contains("peernote"))
    }

    @Test("export's JSON is pnmerge show's without its conflicts key, as the page says; import reads both")
    func exportSchema() throws {
        let dir = try TempDir()
        let root = Self.page.deletingLastPathComponent().deletingLastPathComponent()
        let pnmerge = URL(fileURLWithPath: try Binary.require()).deletingLastPathComponent().appendingPathComponent("pnmerge").path
        let fixtures = root.appendingPathComponent("Fixtures").path
        // A notebook with open conflicts.
        let merged = try peernoteScript(#"""# + pnmerge + #"" merge "# + "'\(fixtures)/meeting-alice.peernote' '\(fixtures)/meeting-bob.peernote' -o m.peernote", in: dir)
        try #require(merged.status == 0, "\(merged.err)")
        let show = try peernoteScript(#"""# + pnmerge + #"" show m.peernote --format json"#, in: dir)
        let export = try Binary.run(["export", "m.peernote", "--format", "json"], in: dir)
        let shown = try #require(try JSONSerialization.jsonObject(with: Data(show.out.utf8)) as? [String: Any])
        let exported = try #require(try JSONSerialization.jsonObject(with: Data(export.out.utf8)) as? [String: Any])
        #expect(((shown["conflicts"] as? [Any]) ?? []).count > 0, "the notebook has conflicts")
        #expect(Set(exported.keys) == ["id", "title", "notes"])
        #expect(Set(shown.keys) == Set(exported.keys).union(["conflicts"]))
        for key in exported.keys {
            #expect(try JSONSerialization.data(withJSONObject: shown[key] as Any, options: [.sortedKeys, .fragmentsAllowed])
                    == JSONSerialization.data(withJSONObject: exported[key] as Any, options: [.sortedKeys, .fragmentsAllowed]), "\(key)")
        }
        // import reads both, conflicts left aside.
        _ = try dir.write("show.json", show.out)
        _ = try dir.write("export.json", export.out)
        for source in ["show.json", "export.json"] {
            let out = source + ".peernote"
            let imported = try Binary.run(["import", source, "-o", out], in: dir)
            #expect(imported.status == 0, "\(source): \(imported.err)")
            let again = try Binary.run(["export", out, "--format", "json"], in: dir)
            let notes = try #require(try JSONSerialization.jsonObject(with: Data(again.out.utf8)) as? [String: Any])["notes"] as? [[String: Any]]
            #expect(notes?.map { $0["title"] as? String } == (exported["notes"] as? [[String: Any]])?.map { $0["title"] as? String }, "\(source)")
        }
        let words = try text().split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(words.contains("as JSON: the notebook as .B pnmerge show \\-\\-format json writes it, without its .B conflicts key"))
        #expect(!words.contains("the schema .B pnmerge show \\-\\-format json uses"))
    }

    @Test("list and export read a notebook from standard input ('-', a pipe or a file), as the page says")
    func standardInput() throws {
        let dir = try TempDir()
        #expect(try Binary.run(["new", "n.peernote", "--title", "Book"], in: dir).status == 0)
        #expect(try Binary.run(["add", "n.peernote", "--title", "Alpha"], in: dir).status == 0)
        for script in [#"cat n.peernote | "$0" list -"#, #""$0" list - < n.peernote"#,
                       #"cat n.peernote | "$0" export -"#, #""$0" export - --format json < n.peernote"#] {
            let r = try peernoteScript(script, in: dir)
            #expect(r.status == 0 && r.out.contains("Alpha"), "\(script): \(r.err)")
        }
        let page = try text()
        #expect(page.contains(".I FILE\nmay be\n.B \\-\nto read the notebook from standard input"))
        #expect(page.contains("or standard input for\n.BR \\- ,\nor a pipe, as for\n.BR list )"))
    }

    /// `peernote ARGS` with standard output on a terminal (a pseudo-terminal that script(1),
    /// of Debian's essential bsdutils, opens) and `env` (no NO_COLOR unless given); what it
    /// wrote there.
    func onTerminal(_ args: [String], in dir: TempDir, env: [String: String]) throws -> String {
        let script = "/usr/bin/script"
        try #require(FileManager.default.isExecutableFile(atPath: script), "script(1) is needed for this test (apt-get install bsdutils)")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: script)
        let command = ([try Binary.require()] + args).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        process.arguments = ["-q", "-e", "-c", command, "/dev/null"]
        process.currentDirectoryURL = URL(fileURLWithPath: dir.path)
        var environment = Binary.environment([:])
        environment.removeValue(forKey: "NO_COLOR")
        environment.removeValue(forKey: "TERM")
        environment["SHELL"] = "/bin/sh"
        for (k, v) in env { environment[k] = v }
        process.environment = environment
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let bytes = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "script exited \(process.terminationStatus)")
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test("list colours on a terminal, not when NO_COLOR is set or TERM is dumb (ENVIRONMENT names both)")
    func colourEnvironment() throws {
        let dir = try TempDir()
        #expect(try Binary.run(["new", "n.peernote"], in: dir).status == 0)
        #expect(try Binary.run(["add", "n.peernote", "--title", "Alpha"], in: dir).status == 0)
        let coloured = try onTerminal(["list", "n.peernote"], in: dir, env: ["TERM": "xterm"])
        #expect(coloured.contains("Alpha") && coloured.contains("\u{1B}["), "\(coloured.debugDescription)")
        for env in [["TERM": "dumb"], ["TERM": "xterm", "NO_COLOR": "1"]] {
            let plain = try onTerminal(["list", "n.peernote"], in: dir, env: env)
            #expect(plain.contains("Alpha") && !plain.contains("\u{1B}["), "\(env): \(plain.debugDescription)")
        }
        let page = try text()
        let environment = try #require(page.range(of: "\n.SH ENVIRONMENT\n"))
        let files = try #require(page.range(of: "\n.SH FILES\n"))
        let section = page[environment.upperBound ..< files.lowerBound]
        #expect(section.contains(".TP\n.B NO_COLOR\n"))
        #expect(section.contains(".TP\n.B TERM\nWhen\n.BR dumb ,\n.B list\nuses no colour."))
    }
}
