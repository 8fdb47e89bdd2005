import Foundation
import PeerNote
import PeerNoteCLISupport
import Testing
import TestSupport
@testable import PNMergeCommands

@Suite("pnmerge: a first word that is no command")
struct UnknownCommandTests {
    static let commandsLine = "Commands: merge, validate, inspect, show, log, diff, sync, compact, convert, git-setup, git-driver, textconv, salvage\n"

    @Test("A mistyped command is named as that, with the command it likely meant, before any option is looked at",
          arguments: [
              (["mrege", "a", "b", "-o", "c"], "unknown command 'mrege'; did you mean 'merge'?"),
              (["mrege", "a", "b"], "unknown command 'mrege'; did you mean 'merge'?"),
              (["valdiate", "x.peernote", "--json"], "unknown command 'valdiate'; did you mean 'validate'?"),
              (["check", "x.peernote"], "unknown command 'check'; did you mean 'validate'?"),
              (["gitdriver", "a", "b", "c"], "unknown command 'gitdriver'; did you mean 'git-driver'?"),
              (["Show", "x.peernote", "--format", "markdown"], "unknown command 'Show'; did you mean 'show'?"),
              (["frobnicate", "--all"], "unknown command 'frobnicate'"),
              (["x.peernote", "--format", "json"], "unknown command 'x.peernote'; the command comes first: pnmerge show x.peernote"),
              (["dir/a b.peernote"], "unknown command 'dir/a b.peernote'; the command comes first: pnmerge show 'dir/a b.peernote'"),
              // 'help WORD' as the WORD alone (it printed the whole help, exit 0).
              (["help", "nosuch"], "unknown command 'nosuch'"),
              (["help", "mrege"], "unknown command 'mrege'; did you mean 'merge'?"),
              (["help", "help", "chek"], "unknown command 'chek'; did you mean 'validate'?"),
          ])
    func unknownCommand(args: [String], message: String) {
        let r = pnmerge(args)
        #expect(r.status == ExitStatus.usage.rawValue)
        #expect(r.err == "pnmerge: \(message) (see 'pnmerge --help')\n" + Self.commandsLine)
        #expect(r.out.isEmpty)
    }

    @Test("Every subcommand, help, options and '-' first are parsed as before")
    func firstWordsThatStillWork() throws {
        for command in PNMerge.configuration.subcommands.map({ $0._commandName }) {
            #expect(PNMerge.unknownCommand.refusal([command, "x"]) == nil, "\(command)")
        }
        #expect(PNMerge.unknownCommand.commands.count == PNMerge.configuration.subcommands.count)
        let help = pnmerge(["help", "merge"])
        #expect(help.status == 0)
        #expect(help.out.contains("USAGE: pnmerge merge"), "\(help.out)")
        let stdin = pnmerge(["-"])
        #expect(stdin.status == 64)
        #expect(stdin.err.hasPrefix("pnmerge: unexpected argument '-' (see 'pnmerge --help')\n"), "\(stdin.err)")
        let option = pnmerge(["--frob"])
        #expect(option.status == 64)
        #expect(option.err.hasPrefix("pnmerge: unknown option '--frob' (see 'pnmerge --help')\n"), "\(option.err)")
        // A real command's own usage errors are unchanged.
        let merge = pnmerge(["merge", "a", "b", "--frob"])
        #expect(merge.status == 64)
        #expect(merge.err.hasPrefix("pnmerge: unknown option '--frob'"), "\(merge.err)")
        #expect(merge.err.contains("(see 'pnmerge merge --help')\nUsage: pnmerge merge "), "\(merge.err)")
        // A file that exists, given first.
        let dir = try TempDir()
        let file = try dir.write(Document(title: "T", author: "a").save(), "notes")
        let r = pnmerge([file])
        #expect(r.err.hasPrefix("pnmerge: unknown command '\(file)'; the command comes first: pnmerge show \(ShellQuote.word(file)) (see"), "\(r.err)")
    }
}

@Suite("pnmerge and peernote: a file name that starts with '-'")
struct DashFileNameTests {
    @Test("-sh.peernote is refused (64) with how to write it, not read as -s -h (help, exit 0, nothing done)",
          arguments: [["validate", "-sh.peernote"], ["merge", "-dash.peernote", "theirs.peernote"], ["show", "-foo.PeerNote"]])
    func refused(args: [String]) {
        let name = args.first { $0.hasPrefix("-") } ?? ""
        let r = pnmerge(args)
        #expect(r.status == ExitStatus.usage.rawValue, "\(r.out)\(r.err)")
        #expect(r.err == "pnmerge: \(name): a file name that starts with '-' reads as options; write it as ./\(name) (a note or other value: put -- before it)\n")
        #expect(r.out.isEmpty, "no help printed")
    }

    @Test("The file written ./-sh.peernote or after -- reaches the command; a name without an extension is refused when the file exists; options and '-' are untouched")
    func writtenRight() throws {
        let dir = try TempDir()
        _ = try dir.write(Diverged().alice.save(), "-sh.peernote")
        _ = try dir.write(Diverged().alice.save(), "-hx")
        let bin = try Binary.require()
        func run(_ args: [String]) throws -> (status: Int32, err: String) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Binary.path)
            process.arguments = args
            process.currentDirectoryURL = URL(fileURLWithPath: dir.path(""))
            let err = Pipe()
            process.standardError = err
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            let bytes = err.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (process.terminationStatus, String(decoding: bytes, as: UTF8.self))
        }
        _ = bin
        #expect(try run(["validate", "./-sh.peernote"]).status == 0)
        #expect(try run(["validate", "--", "-sh.peernote"]).status == 0)
        let hx = try run(["validate", "-hx"])
        #expect(hx.status == 64 && hx.err.contains("-hx: a file name that starts with '-' reads as options; write it as ./-hx"), "\(hx.err)")
        #expect(pnmerge(["-h"]).status == 0)
        #expect(pnmerge(["validate", "-h"]).out.contains("USAGE"))
        #expect(DashFileName.refusal(["merge", "a", "b", "-o", "-"]) == nil)
        #expect(DashFileName.refusal(["show", "x", "--format", "json", "-v"]) == nil)
    }
}

@Suite("pnmerge: -oOUT")
struct GluedOutputTests {
    @Test("merge -oOUT and salvage -oOUT write OUT (it was refused as unknown flags); other commands leave such a word alone")
    func gluedOutput() throws {
        let dir = try TempDir()
        let a = try dir.write(Diverged().alice.save(), "a.peernote")
        let b = try dir.write(Diverged().bob.save(), "b.peernote")
        let out = dir.path("out.peernote")
        let r = pnmerge(["merge", a, b, "-o" + out])
        #expect(r.status == 0, "\(r.out)\(r.err)")
        #expect(FileManager.default.fileExists(atPath: out))
        let saved = dir.path("saved.peernote")
        #expect(pnmerge(["salvage", a, "-o" + saved]).status == 0)
        #expect(FileManager.default.fileExists(atPath: saved))
        #expect(pnmerge(["validate", a, "-oops"]).status == ExitStatus.usage.rawValue)
    }
}
