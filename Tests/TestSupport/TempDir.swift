import Foundation

/// A fresh directory for one test, removed with everything in it when the value is released.
public final class TempDir {
    public let url: URL
    /// The directory's path.
    public var path: String { url.path }

    public init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("peernote-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    /// The path of `name` in the directory (`name` may hold slashes; "" is the directory itself).
    public func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// `path(_:)` joined as text: `path` + "/" + `name`.
    public func file(_ name: String) -> String { path + "/" + name }

    /// Writes `bytes` to `name`; returns its path.
    @discardableResult
    public func write(_ bytes: [UInt8], _ name: String) throws -> String {
        let p = path(name)
        try Data(bytes).write(to: URL(fileURLWithPath: p))
        return p
    }

    /// Writes `text` (UTF-8) to `name`, mode 0755 when `executable`; returns its path.
    @discardableResult
    public func write(_ name: String, _ text: String, executable: Bool = false) throws -> String {
        let p = file(name)
        try Data(text.utf8).write(to: URL(fileURLWithPath: p))
        if executable { try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: p) }
        return p
    }

    /// The bytes of `name`.
    public func bytes(_ name: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path(name)))) }

    /// Names of the entries in the directory, sorted.
    public func entries() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: path).sorted() }
}
