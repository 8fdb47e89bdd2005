import Foundation
import PeerNoteCLISupport
import Testing
import TestSupport

/// The first word of a peernote command line.
@Suite("peernote: a first word that is no command")
struct CommandWordTests {
    static let commandsLine = "Commands: new, add, edit, rm, restore, move, title, list, show, search, conflicts, resolve, log, blame, revert, export, import\n"

    @Test("A first word that is no command is named as that, with the command it likely meant, even when options follow",
          arguments: [
              (["mv", "f.peernote", "n1", "--to", "1"], "unknown command 'mv'; did you mean 'move'?"),
              (["delete", "f", "x", "--author", "y"], "unknown command 'delete'; did you mean 'rm'?"),
              (["remove", "f", "x"], "unknown command 'remove'; did you mean 'rm'?"),
              (["lsit", "f.peernote"], "unknown command 'lsit'; did you mean 'list'?"),
              (["Add", "f.peernote", "--title", "x"], "unknown command 'Add'; did you mean 'add'?"),
              (["exprot", "f.peernote", "--format", "json"], "unknown command 'exprot'; did you mean 'export'?"),
              (["frobnicate", "--all"], "unknown command 'frobnicate'"),
              (["x", "f.peernote"], "unknown command 'x'"),
              (["f.peernote"], "unknown command 'f.peernote'; the command comes first: peernote list f.peernote"),
              (["notes/my notes.peernote", "--deleted"], "unknown command 'notes/my notes.peernote'; the command comes first: peernote list 'notes/my notes.peernote'"),
              // 'help WORD' as the WORD alone (it printed the whole help, exit 0).
              (["help", "nosuch"], "unknown command 'nosuch'"),
              (["help", "mv"], "unknown command 'mv'; did you mean 'move'?"),
          ])
    func unknownCommand(args: [String], message: String) throws {
        let dir = try TempDir()
        let r = try Binary.run(args, in: dir)
        #expect(r.status == ExitStatus.usage.rawValue, "\(args): \(r.err)")
        #expect(r.err == "peernote: \(message) (see 'peernote --help')\n" + Self.commandsLine, "\(args)")
        #expect(r.out.isEmpty)
        #expect(try dir.entries().isEmpty)
    }

    @Test("An existing file given first is told to come after the command; help, options and real commands parse as before")
    func firstWordsThatStillWork() throws {
        let dir = try TempDir()
        #expect(try Binary.run(["new", "book", "--title", "B"], in: dir).status == 0)
        let file = try Binary.run(["book"], in: dir)
        #expect(file.status == 64)
        #expect(file.err.hasPrefix("peernote: unknown command 'book'; the command comes first: peernote list book (see 'peernote --help')\n"), "\(file.err)")
        let help = try Binary.run(["help", "move"], in: dir)
        #expect(help.status == 0)
        #expect(help.out.contains("USAGE: peernote move"), "\(help.out)")
        let option = try Binary.run(["--frob"], in: dir)
        #expect(option.status == 64)
        #expect(option.err.hasPrefix("peernote: unknown option '--frob' (see 'peernote --help')\n"), "\(option.err)")
        let stdin = try Binary.run(["-"], in: dir)
        #expect(stdin.status == 64)
        #expect(stdin.err.hasPrefix("peernote: unexpected argument '-'"), "\(stdin.err)")
        #expect(try Binary.run(["--version"], in: dir).status == 0)
        // A subcommand's own errors are its own, as before.
        let move = try Binary.run(["move", "book", "n1", "--to", "1"], in: dir)
        #expect(move.status == 64)
        #expect(move.err.contains("n1"), "\(move.err)")
        #expect(!move.err.contains("unknown command"), "\(move.err)")
    }

    @Test("Suggestions: aliases, a unique beginning, the closest names; nothing for a word that is not close")
    func suggestions() {
        let peernote = UnknownCommand(tool: "peernote", commands: ["new", "add", "edit", "rm", "restore", "move", "title", "list", "export", "import"],
                                      aliases: ["mv": "move", "delete": "rm", "ls": "list"], fileCommand: "list")
        #expect(peernote.suggestions(for: "mv") == ["move"])
        #expect(peernote.suggestions(for: "LS") == ["list"])
        #expect(peernote.suggestions(for: "imp") == ["import"])
        #expect(peernote.suggestions(for: "delte") == ["rm"])
        #expect(peernote.suggestions(for: "mvoe") == ["move"])
        #expect(peernote.suggestions(for: "ediit") == ["edit"])
        #expect(peernote.suggestions(for: "ad") == ["add"])
        #expect(peernote.suggestions(for: "x") == [])
        #expect(peernote.suggestions(for: "zzz") == [])
        #expect(peernote.suggestions(for: "e") == [])
        #expect(peernote.refusal(["move", "a"]) == nil)
        #expect(peernote.refusal(["help"]) == nil)
        #expect(peernote.refusal(["--help"]) == nil)
        #expect(peernote.refusal([]) == nil)
        #expect(peernote.refusal(["a\u{1b}[2Jb"], namesFile: { _ in false })?.hasPrefix("peernote: unknown command 'a\\u{1b}[2Jb' (see") == true)
    }
}

@Suite("peernote: a file name that starts with '-'")
struct PeerNoteDashFileNameTests {
    @Test("peernote new/add -sh.peernote is refused (64), not read as -s -h (help, exit 0, nothing done); ./-sh.peernote works")
    func refused() throws {
        let dir = try TempDir()
        let new = try Binary.run(["new", "-sh.peernote", "--title", "T"], in: dir)
        #expect(new.status == 64, "\(new.out)\(new.err)")
        #expect(new.err == "peernote: -sh.peernote: a file name that starts with '-' reads as options; write it as ./-sh.peernote (a note or other value: put -- before it)\n")
        #expect(new.out.isEmpty)
        #expect(try Binary.run(["new", "./-sh.peernote", "--title", "T"], in: dir).status == 0)
        let add = try Binary.run(["add", "-sh.peernote", "--title", "X"], in: dir)
        #expect(add.status == 64 && add.out.isEmpty, "\(add.out)")
        #expect(try Binary.run(["add", "--title", "X", "--", "-sh.peernote"], in: dir).status == 0)
        let list = try Binary.run(["list", "./-sh.peernote"], in: dir)
        #expect(list.out.contains("X"), "\(list.out)\(list.err)")
        // A value that starts with '-' is a value, not a file name; so is a title given as a note
        // name (no file by that name exists).
        #expect(try Binary.run(["add", "./-sh.peernote", "--title", "-x.md"], in: dir).status == 0)
        #expect(DashFileName.refusal(["rm", "g.peernote", "-notes.md"]) == nil)
    }
}
