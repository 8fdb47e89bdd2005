import Foundation
import PeerNoteCLISupport
import Testing
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
}
