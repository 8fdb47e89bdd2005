import Foundation
import Testing

/// The `PeerNote` library's folders are layers with one direction (README.md, Architecture):
/// Support <- Core <- Encoding <- Document <- Files. A file may name what its own folder or a
/// lower one declares, never a type or top-level function only a higher folder declares. The
/// command libraries and executables are separate SwiftPM targets, so the compiler already keeps
/// them from being named by the library.
///
/// The scan is by name: it collects each folder's top-level `struct`, `class`, `enum`,
/// `protocol`, `actor`, `typealias` and `func` declarations (not `private` or `fileprivate`
/// ones, which no other file can name), then reports every identifier outside comments that
/// only a higher folder declares. Members that a higher folder adds to a lower type by an
/// extension are not seen.
enum LayerScan {
    /// The library's folders, lowest first; a subfolder belongs to the folder above it.
    static let layers = ["Support", "Core", "Encoding", "Document", "Files"]

    struct Violation: CustomStringConvertible {
        var file: String
        var line: Int
        var folder: String
        var name: String
        var declaredIn: String
        var description: String { "\(file):\(line): \(folder) names \(name) (declared in \(declaredIn))" }
    }

    static var libraryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/PeerNote")
    }

    /// Each Swift file under `root`, by its path relative to `root`, with its text.
    static func sources(under root: URL) throws -> [(path: String, text: String)] {
        guard let walker = FileManager.default.enumerator(atPath: root.path) else { return [] }
        var found: [(String, String)] = []
        for case let path as String in walker where path.hasSuffix(".swift") {
            found.append((path, try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)))
        }
        return found.sorted { $0.0 < $1.0 }
    }

    /// The layer index of a path relative to the library root, nil for a file outside the layers.
    static func layer(of path: String) -> Int? {
        guard let folder = path.split(separator: "/").first.map(String.init), path.contains("/") else { return nil }
        return layers.firstIndex(of: folder)
    }

    nonisolated(unsafe) private static let declaration =
        #/^(?:(?:public|internal|package|final|indirect|nonisolated|@\w+(?:\([^)]*\))?)\s+)*(?:struct|class|enum|protocol|actor|typealias|func)\s+([A-Za-z_]\w*)/#
    nonisolated(unsafe) private static let identifier = #/[A-Za-z_]\w*/#

    /// A line without its `//` comment (a `//` inside a string literal is kept).
    static func code(_ line: Substring) -> Substring {
        var inString = false
        var escaped = false
        var previous: Character = " "
        for index in line.indices {
            let c = line[index]
            if inString {
                if escaped { escaped = false } else if c == "\\" { escaped = true } else if c == "\"" { inString = false }
            } else if c == "\"" {
                inString = true
            } else if c == "/" && previous == "/" {
                return line[..<line.index(before: index)]
            }
            previous = c
        }
        return line
    }

    /// Every place a folder names what only a higher folder declares.
    static func violations(in files: [(path: String, text: String)]) -> [Violation] {
        var declaredAt: [String: Set<Int>] = [:]
        for file in files {
            guard let layer = layer(of: file.path) else { continue }
            for line in file.text.split(separator: "\n", omittingEmptySubsequences: false) {
                if let match = line.prefixMatch(of: declaration) {
                    let name = match.output.1
                    declaredAt[String(name), default: []].insert(layer)
                }
            }
        }
        var found: [Violation] = []
        for file in files.sorted(by: { $0.path < $1.path }) {
            guard let layer = layer(of: file.path) else { continue }
            var inBlockComment = false
            for (number, line) in file.text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                var text = line
                if inBlockComment {
                    guard let end = text.range(of: "*/") else { continue }
                    text = text[end.upperBound...]
                    inBlockComment = false
                }
                if let start = text.range(of: "/*"), !text[..<start.lowerBound].contains("//") {
                    if let end = text[start.upperBound...].range(of: "*/") {
                        text = text[..<start.lowerBound] + text[end.upperBound...]
                    } else {
                        text = text[..<start.lowerBound]
                        inBlockComment = true
                    }
                }
                var seen: Set<Substring> = []
                for match in code(text).matches(of: identifier) {
                    let name = text[match.range]
                    guard seen.insert(name).inserted, let layers = declaredAt[String(name)],
                          let lowest = layers.min(), lowest > layer else { continue }
                    found.append(Violation(file: "Sources/PeerNote/" + file.path, line: number + 1,
                                           folder: Self.layers[layer], name: String(name),
                                           declaredIn: Self.layers[lowest]))
                }
            }
        }
        return found
    }
}

@Suite struct LayerDirectionTests {
    @Test func noLibraryFolderNamesWhatAHigherFolderDeclares() throws {
        let files = try LayerScan.sources(under: LayerScan.libraryRoot)
        #expect(files.count > 50, "the library's sources were not found under \(LayerScan.libraryRoot.path)")
        let violations = LayerScan.violations(in: files)
        #expect(violations.isEmpty, Comment(rawValue: "\n" + violations.map(\.description).joined(separator: "\n")))
    }

    @Test func theScanReportsALowerFolderNamingAHigherType() {
        let files: [(path: String, text: String)] = [
            ("Document/Model.swift", "public enum PeerNoteError: Error {}\nprivate struct Hidden {}\nfunc describe() {}\n"),
            ("Encoding/Block.swift", "struct FormatError {\n    // PeerNoteError in a comment is not a use\n    var e: PeerNoteError? = nil; let s = \"// \\(describe())\"\n    var h: Hidden?\n}\n"),
            ("Core/IDs.swift", "/* FormatError\n in a block comment */ struct ID { var f: FormatError? }\n"),
        ]
        let found = LayerScan.violations(in: files).map(\.description)
        #expect(found == [
            "Sources/PeerNote/Core/IDs.swift:2: Core names FormatError (declared in Encoding)",
            "Sources/PeerNote/Encoding/Block.swift:3: Encoding names PeerNoteError (declared in Document)",
            "Sources/PeerNote/Encoding/Block.swift:3: Encoding names describe (declared in Document)",
        ])
    }
}
