import Foundation
import PeerNote
import PeerNoteCLISupport
import Testing
@testable import PNMergeCommands

@Suite("pnmerge: a first word that is no command")
struct UnknownCommandTests {
    static let commandsLine = "Commands: merge, validate, inspect, show, log, diff, sync, compact, git-driver, textconv, git-setup, salvage\n"

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
