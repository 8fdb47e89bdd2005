import Foundation
import Testing
@testable import PeerNote

/// Regression tests for `Fixtures/fuzz/`: each file is run through the built tool in a child
/// process (so that a crash or a hang fails one test, not the test run) with a time limit.
/// Files that show a library bug that is still open expect the failure (`withKnownIssue`):
/// when the bug is fixed the known issue stops occurring, Swift Testing reports that, and the
/// entry's `validateBug` or `saveBug` is removed.
@Suite("FuzzFixtureGeneration and regressions")
struct FuzzRegressionTests {
    static var directory: URL { FixtureCatalog.directory }

    @Test("Fixtures/fuzz/ matches what FuzzFixtures generates (PEERNOTE_WRITE_FIXTURES=1 rewrites it)")
    func fuzzFixturesAreUpToDate() throws {
        let files = try FuzzFixtures.generate()
        #expect(Set(files.keys) == Set(FuzzFixtures.entries.filter(\.generated).map(\.file)))
        if ProcessInfo.processInfo.environment["PEERNOTE_WRITE_FIXTURES"] == "1" {
            try FileManager.default.createDirectory(at: Self.directory.appendingPathComponent("fuzz"), withIntermediateDirectories: true)
            for (path, bytes) in files { try FileStore.writeAtomically(bytes, to: Self.directory.appendingPathComponent(path).path) }
            print("wrote \(files.count) files to \(Self.directory.path)/fuzz")
            return
        }
        for (path, bytes) in files.sorted(by: { $0.key < $1.key }) {
            let committed = try #require(try? FixtureCatalog.bytes(path), "Fixtures/\(path) is missing: run `make fixtures`")
            let same = committed == bytes
            #expect(same, "Fixtures/\(path) differs from what FuzzFixtures generates; run `make fixtures`")
        }
        // Nothing in Fixtures/fuzz/ escapes the catalog.
        let present = try FileManager.default.contentsOfDirectory(atPath: Self.directory.appendingPathComponent("fuzz").path)
        #expect(Set(present.map { "fuzz/" + $0 }) == Set(FuzzFixtures.entries.map(\.file)))
    }

    /// Wall seconds a run of a debug `pnmerge` may take before it counts as a hang: the fixtures
    /// that once hung took minutes, or forever; the slowest valid one (`many-blocks`) takes about
    /// 12 s of CPU in a debug build, and several times that in wall time when the machine's
    /// cores are shared with other builds.
    static let hangLimit: Double = 120

    @Test("Each fuzz fixture: pnmerge validate gives the right status in time, without crashing", arguments: FuzzFixtures.entries)
    func validate(entry: FuzzFixtures.Entry) throws {
        let path = Self.directory.appendingPathComponent(entry.file).path
        guard let outcome = runPNMerge(["validate", path], timeout: Self.hangLimit) else {
            Issue.record("pnmerge is not built; run `swift build` first")
            return
        }
        let check = {
            #expect(outcome.status == entry.validateStatus, "\(entry.file): \(outcome)")
            #expect(!outcome.timedOut && outcome.peakMB < 512, "\(entry.file): \(outcome)")
        }
        if let bug = entry.validateBug {
            withKnownIssue(Comment(rawValue: bug)) { check() }
        } else {
            check()
        }
    }

    @Test("Valid fuzz fixtures also survive a compact save (pnmerge merge FILE FILE -o OUT)",
          arguments: FuzzFixtures.entries.filter(\.compactSave))
    func compactSave(entry: FuzzFixtures.Entry) throws {
        let path = Self.directory.appendingPathComponent(entry.file).path
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("fuzz-\(UUID().uuidString).peernote").path
        defer { try? FileManager.default.removeItem(atPath: out) }
        guard let outcome = runPNMerge(["merge", path, path, "-o", out], timeout: Self.hangLimit) else {
            Issue.record("pnmerge is not built; run `swift build` first")
            return
        }
        let check = { #expect(outcome.status == 0, "\(entry.file): \(outcome)") }
        if let bug = entry.saveBug { withKnownIssue(Comment(rawValue: bug)) { check() } } else { check() }
    }
}

extension FuzzFixtures.Entry: CustomTestStringConvertible {
    var testDescription: String { file }
}
