import Foundation
import Testing
import TestSupport

/// `scripts/release-link-flags.sh`, which `make release` asks for the release link's flags
/// (Benchmarks/README.md, The release link): it tries each part by a trial link, leaves out what
/// this machine cannot do and says why, and never fails the build.
@Suite struct ReleaseLinkFlagsTests {
    static let script = Tool.packageRoot.appendingPathComponent("scripts/release-link-flags.sh").path
    static let orderFile = Tool.packageRoot.appendingPathComponent("scripts/link-order.txt").path

    /// `sh release-link-flags.sh args…`, in this process's environment (its PATH finds swiftc).
    static func run(_ args: [String]) throws -> RunResult {
        try Tool(executable: "/bin/sh").run([script] + args, environment: ProcessInfo.processInfo.environment)
    }

    @Test func withoutArgumentsItPrintsItsUsage() throws {
        let r = try Self.run([])
        #expect(r.status == 2)
        #expect(r.out.isEmpty)
        #expect(r.err.hasPrefix("usage: release-link-flags.sh SWIFTC ORDER_FILE"))
    }

    /// The order file names functions, one a line, each once: what lld's --symbol-ordering-file reads.
    @Test func theOrderFileListsEachFunctionOnce() throws {
        let names = try String(contentsOfFile: Self.orderFile, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(names.last == "")
        let listed = names.dropLast()
        #expect(listed.count > 1_000)
        #expect(!listed.contains { $0.isEmpty || $0.contains(where: \.isWhitespace) })
        #expect(Set(listed).count == listed.count)
        // The tools' own code is in it, not only the runtime's.
        #expect(listed.contains { $0.hasPrefix("$s8PeerNote") })
    }

    #if os(Linux)
    @Test func aMissingCompilerLeavesTheDefaultLink() throws {
        let r = try Self.run(["no-such-swiftc-for-this-test", Self.orderFile])
        #expect(r.status == 0)
        #expect(r.out.isEmpty)
        #expect(r.err.contains("no-such-swiftc-for-this-test not found: linking with the default linker"))
    }

    /// With lld: the flags, with or without the ordering and the packed relocations as asked and
    /// as found. Without lld (a toolchain that lacks it): no link flag, and the reason. The
    /// compilation's flag either way, where the compiler takes it.
    @Test func eachPartIsLeftOutOnlyWhenItCannotBeUsed() throws {
        let full = try Self.run(["swiftc", Self.orderFile])
        #expect(full.status == 0)
        // The compiler's flag for type metadata asked for directly: there, or the reason it is not.
        let meta = "-Xswiftc -Xfrontend -Xswiftc -disable-concrete-type-metadata-mangled-name-accessors"
        #expect(full.out.contains(meta) != full.err.contains("does not take -disable-concrete-type-metadata-mangled-name-accessors: left out"))
        guard full.out.contains("-use-ld=lld") else {
            #expect(full.out.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: meta, with: "").isEmpty)
            #expect(full.err.contains("lld could not link here") || full.err.contains("did not run here"))
            return
        }
        #expect(full.out.contains("-Xlinker --symbol-ordering-file=\(Self.orderFile)"))

        let unpacked = try Self.run(["swiftc", Self.orderFile, "no"])
        #expect(unpacked.status == 0)
        #expect(unpacked.out.contains("--symbol-ordering-file="))
        #expect(!unpacked.out.contains("pack-relative-relocs"))

        let missing = try Self.run(["swiftc", Self.orderFile + ".missing"])
        #expect(missing.status == 0)
        #expect(missing.out.contains("-use-ld=lld"))
        #expect(!missing.out.contains("--symbol-ordering-file"))
        #expect(missing.err.contains("link-order.txt.missing missing: code laid out as compiled"))

        let spaced = try Self.run(["swiftc", "/tmp/a folder/link-order.txt"])
        #expect(spaced.out.contains("-use-ld=lld"))
        #expect(!spaced.out.contains("--symbol-ordering-file"))
        #expect(spaced.err.contains("a path with spaces cannot be passed to the linker"))
    }
    #endif
}
