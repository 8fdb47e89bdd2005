import Foundation
import Testing
import TestSupport

/// The man pages as mandoc reads them.
@Suite("man pages: mandoc lint")
struct ManLintTests {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test("mandoc -T lint -W warning finds nothing in man/peernote.1, man/pnmerge.1 and man/peernote.5")
    func lint() throws {
        let mandoc = ["/usr/bin/mandoc", "/usr/local/bin/mandoc", "/opt/homebrew/bin/mandoc"].first { FileManager.default.isExecutableFile(atPath: $0) }
        let path = try #require(mandoc, "mandoc is needed for this test (apt-get install mandoc; make deps installs it)")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["-T", "lint", "-W", "warning"] + ["peernote.1", "pnmerge.1", "peernote.5"].map { Self.root.appendingPathComponent("man/" + $0).path }
        let out = Pipe()
        process.standardOutput = out
        process.standardError = out
        try process.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0 && text.isEmpty, "\(text)")
    }
}
