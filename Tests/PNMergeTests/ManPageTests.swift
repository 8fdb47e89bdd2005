import Foundation
import PeerNoteCLISupport
import Testing
import TestSupport
@testable import PNMergeCommands

@Suite("man/pnmerge.1")
struct ManPageTests {
    static let page = Binary.packageRoot.appendingPathComponent("man/pnmerge.1")

    func text() throws -> String { try String(contentsOf: Self.page, encoding: .utf8) }

    @Test("The EXIT STATUS table is ExitStatus, code for code and meaning for meaning")
    func exitStatusTable() throws {
        let page = try text()
        let start = try #require(page.range(of: "\n.SH EXIT STATUS\n"))
        let end = try #require(page.range(of: "\n.SH ", range: start.upperBound ..< page.endIndex))
        let section = page[start.upperBound ..< end.lowerBound]
        let codes = section.components(separatedBy: "\n.B ").dropFirst().compactMap { Int32($0.prefix { $0.isNumber }) }
        #expect(codes == ExitStatus.allCases.map(\.rawValue))
        for status in ExitStatus.allCases {
            #expect(section.contains(".TP\n.B \(status.rawValue)\n\(status.meaning)"), "\(status)")
        }
    }

    @Test("The SYNOPSIS lists the subcommands in the order --help does")
    func synopsisOrder() throws {
        let page = try text()
        let start = try #require(page.range(of: "\n.SH SYNOPSIS\n"))
        let end = try #require(page.range(of: "\n.SH ", range: start.upperBound ..< page.endIndex))
        let listed = page[start.upperBound ..< end.lowerBound].split(separator: "\n")
            .filter { $0.hasPrefix(".B pnmerge ") }.map { $0.dropFirst(".B pnmerge ".count).replacingOccurrences(of: "\\-", with: "-") }
            .filter { !$0.hasPrefix("-") }
        #expect(listed == PNMerge.configuration.subcommands.map { $0._commandName })
    }

    @Test("Every subcommand, option and JSON shape is documented")
    func coverage() throws {
        let page = try text()
        for command in PNMerge.configuration.subcommands {
            let name = command._commandName.replacingOccurrences(of: "-", with: "\\-")
            #expect(page.contains(".SS \"pnmerge \(name) "), "\(name)")
        }
        for option in ["output", "dry\\-run", "json", "format", "at", "graph", "help", "version", "generate\\-completion\\-script",
                       "keep", "global", "hooks"] {
            #expect(page.contains("\\-\\-\(option)"), "--\(option)")
        }
        for section in ["MERGE REPORT", "NOTE CHANGE", "CONFLICT", "NOTEBOOK", "INSPECT", "LOG", "DIFF", "EXAMPLES", "SEE ALSO",
                        "GIT SETUP", "CONFLICT COPIES"] {
            #expect(page.contains(".SH \(section)") || page.contains(".SS \"\(section)\""), "\(section)")
        }
        #expect(page.contains(".BR peernote (5)"))
    }

    @Test("INPUT AND OUTPUT: errors start with 'pnmerge:', and validate's line for a bad file, its report, does not, as the page says")
    func errorPrefix() throws {
        let dir = try TempDir()
        let bad = try dir.write(Array("not a notebook".utf8), "bad.peernote")
        let validate = pnmerge(["validate", bad])
        #expect(validate.err == "\(bad): offset 0: not a .peernote file (wrong magic bytes)\n", "\(validate.err)")
        for command in ["show", "inspect", "log"] {
            let r = pnmerge([command, bad])
            #expect(r.err == "pnmerge: \(bad): offset 0: not a .peernote file (wrong magic bytes)\n", "\(command): \(r.err)")
        }
        let page = try text()
        let section = try #require(page.range(of: "\n.SH INPUT AND OUTPUT\n"))
        let end = try #require(page.range(of: "\n.SH ", range: section.upperBound ..< page.endIndex))
        let words = page[section.upperBound ..< end.lowerBound].split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(words.contains("errors to standard error, each error one line that starts with .B pnmerge: and says what is wrong."))
        #expect(words.contains("without that prefix: .BR validate 's line for each bad file"))
    }

    @Test("--help says what pnmerge(1) says: inspect's title, validate's 66 for a folder, sync's 74 for a conflict copy not removed, git-setup's XDG_CONFIG_HOME, the completion script, TERM=dumb")
    func helpAsMuchAsThePage() throws {
        let page = try text()
        func help(_ args: [String]) -> String {
            pnmerge(args + ["--help"]).out.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        }
        for (args, said, pageSays) in [
            (["inspect"], "Prints the document id, notebook title,", "Prints the document id, notebook title,"),
            (["validate"], "otherwise 66 when a file is missing, unreadable or a directory", "otherwise 66 when a file is missing,\nunreadable or a directory"),
            (["sync"], "74 when a copy could not be written or a conflict copy removed", "74 when a copy could not be\nwritten or a conflict copy removed"),
            (["git-setup"], "$XDG_CONFIG_HOME/git/attributes", "$XDG_CONFIG_HOME/git/attributes"),
            ([], "'pnmerge --generate-completion-script bash|zsh|fish' prints a shell completion script", "\\-\\-generate\\-completion\\-script"),
            ([], "never when NO_COLOR is set or TERM is dumb", ".B TERM\nWhen\n.BR dumb ,\nno colour."),
        ] {
            #expect(help(args).contains(said), "\(args): \(said)")
            #expect(page.contains(pageSays), "\(args): \(pageSays)")
        }
        // And what they say holds: a folder is 66, and the option prints a script.
        let dir = try TempDir()
        #expect(pnmerge(["validate", dir.url.path]).status == ExitStatus.noInput.rawValue)
        #expect(pnmerge(["--generate-completion-script", "bash"]).out.contains("pnmerge"))
    }
}
