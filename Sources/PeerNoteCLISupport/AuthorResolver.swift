#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Who is recorded as the author of changes: `--author`, else `PEERNOTE_AUTHOR` (when set and
/// not empty), else git's `user.name`, else the login name (`USER`, else `LOGNAME`, else the
/// password database's name for this user).
///
/// A name is taken from the bytes it has, never with replacement characters: one that is not
/// UTF-8, from whichever source, is refused (exit 64) with one line naming the source, as an
/// argument that is not UTF-8 is. A source that is not UTF-8 is not passed over for the next one
/// either, which would record a name the user did not choose. An empty `--author` is refused too
/// (it is not "no --author"); an empty `PEERNOTE_AUTHOR`, like an empty git `user.name`, counts
/// as unset.
public enum AuthorResolver {
    /// Where a name may come from, each as bytes; nil or empty when there is none.
    public struct Sources: Sendable {
        public var environment: @Sendable (String) -> [UInt8]?
        public var gitUserName: @Sendable () -> [UInt8]?
        public var passwordName: @Sendable () -> [UInt8]?

        public init(environment: @escaping @Sendable (String) -> [UInt8]?,
                    gitUserName: @escaping @Sendable () -> [UInt8]?,
                    passwordName: @escaping @Sendable () -> [UInt8]?) {
            self.environment = environment
            self.gitUserName = gitUserName
            self.passwordName = passwordName
        }

        /// This process's: its environment, `git config user.name`, `getpwuid(getuid())`.
        public static let process = Sources(
            environment: { name in getenv(name).map { bytes(of: $0) } },
            gitUserName: {
                guard let result = try? Subprocess.run(["git", "config", "user.name"]), result.status == 0 else { return nil }
                return trimmed(result.out)
            },
            passwordName: { getpwuid(getuid())?.pointee.pw_name.map { bytes(of: $0) } }
        )
    }

    /// The author to record: `explicit` (the value of `--author`), else the first of the
    /// documented sources that is set; "unknown" when none is.
    public static func resolve(explicit: String?, sources: Sources = .process) throws(CLIFailure) -> String {
        if let explicit {
            guard !explicit.isEmpty else {
                throw CLIFailure(.usage, "--author is empty: give a name, or leave --author out to use $PEERNOTE_AUTHOR, git's user.name or the login name")
            }
            return explicit
        }
        let advice = "set PEERNOTE_AUTHOR to a UTF-8 name or give --author NAME"
        if let name = sources.environment("PEERNOTE_AUTHOR"), !name.isEmpty {
            return try text(name, "PEERNOTE_AUTHOR", "give it as UTF-8 text, or give --author NAME")
        }
        if let name = sources.gitUserName(), !name.isEmpty {
            return try text(name, "git's user.name", "set it to UTF-8 text (git config --global user.name NAME), or \(advice)")
        }
        for variable in ["USER", "LOGNAME"] {
            if let name = sources.environment(variable), !name.isEmpty {
                return try text(name, "the login name (from $\(variable))", advice)
            }
        }
        if let name = sources.passwordName(), !name.isEmpty {
            return try text(name, "the login name (from the password database)", advice)
        }
        return "unknown"
    }

    /// `bytes` as text, or the refusal that names `source` and says what to do.
    private static func text(_ bytes: [UInt8], _ source: String, _ advice: String) throws(CLIFailure) -> String {
        guard UTF8Bytes.isValid(bytes) else {
            throw CLIFailure(.usage, "\(source), the author to record, is not valid UTF-8: \(UTF8Bytes.shown(bytes)) (bytes that are not UTF-8 shown as \\xNN); \(advice)")
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func bytes(of string: UnsafePointer<CChar>) -> [UInt8] {
        UnsafeBufferPointer(start: string, count: strlen(string)).map { UInt8(bitPattern: $0) }
    }

    /// `bytes` without leading and trailing ASCII white space (git ends its answer with a line break).
    static func trimmed(_ bytes: [UInt8]) -> [UInt8] {
        let space: Set<UInt8> = [0x20, 0x09, 0x0A, 0x0D, 0x0B, 0x0C]
        guard let first = bytes.firstIndex(where: { !space.contains($0) }), let last = bytes.lastIndex(where: { !space.contains($0) }) else { return [] }
        return Array(bytes[first ... last])
    }
}
