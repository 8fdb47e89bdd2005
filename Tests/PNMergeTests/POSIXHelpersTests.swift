import Foundation
@testable import PNMergeCommands
import PeerNoteCLISupport
import Testing

/// The helpers that replaced Foundation in the tools (so that they start without ICU), checked
/// against the Foundation calls they replaced, which the tests may still use.
@Suite("POSIX helpers")
struct POSIXHelpersTests {
    @Test("Path splitting, padding, trimming and JSON escapes give what NSString and String(format:) gave")
    func textHelpers() {
        for path in ["a.peernote", "dir/a.peernote", "/a", "/", "", "a/b/", "//x//y", "./n", "../up/n"] {
            #expect(PathText.deletingLastComponent(path) == (path as NSString).deletingLastPathComponent, "\(path)")
        }
        for (dir, name) in [("dir", "n"), ("dir/", "n"), ("/", "n"), ("", "n"), ("d", "")] {
            #expect(PathText.appending(name, to: dir) == (dir as NSString).appendingPathComponent(name), "\(dir) + \(name)")
        }
        for (s, n) in [("abc", 5), ("abcdef", 4), ("", 2), ("héllo", 6), ("abc", 3)] {
            #expect(s.padded(toLength: n) == s.padding(toLength: n, withPad: " ", startingAt: 0), "\(s) \(n)")
        }
        for s in ["  x y \n", "\t\n", "", "vim", " emacs -nw "] {
            #expect(s.trimmingWhitespace == s.trimmingCharacters(in: .whitespacesAndNewlines), "\(s.debugDescription)")
        }
        for v: UInt32 in [0, 0x1F, 0x7F, 0xAB] {
            #expect(JSONText.unicodeEscape(v) == String(format: "\\u%04x", v))
        }
    }

    @Test("Quoting for the shell and one-line titles work on scalars: a quote before a combining mark, and CR LF")
    func scalarEdits() {
        #expect(GitSetupOperation.shellQuoted("/usr/bin/pnmerge") == "/usr/bin/pnmerge")
        #expect(GitSetupOperation.shellQuoted("/it's/pnmerge") == "'/it'\\''s/pnmerge'")
        // "'" + U+0301 is one Character: a Character-wise replace would leave the quote bare.
        #expect(GitSetupOperation.shellQuoted("/a'\u{301}b") == "'/a'\\''\u{301}b'")
        #expect(TextconvRendering.oneLine("a\r\nb\nc") == "a\\r\\nb\\nc")
    }

    @Test("Subprocess: status, both streams in full (no deadlock on large output), and a program not on PATH")
    func subprocess() throws {
        let small = try Subprocess.run(["sh", "-c", "echo out; echo err >&2; exit 3"])
        #expect(small.status == 3)
        #expect(String(decoding: small.out, as: UTF8.self) == "out\n")
        #expect(String(decoding: small.err, as: UTF8.self) == "err\n")
        // 1 MB on each stream, interleaved: more than either pipe holds.
        let big = try Subprocess.run(["sh", "-c", "i=0; while [ $i -lt 16 ]; do head -c 65536 /dev/zero; head -c 65536 /dev/zero >&2; i=$((i+1)); done"])
        #expect(big.status == 0 && big.out.count == 1 << 20 && big.err.count == 1 << 20)
        let killed = try Subprocess.run(["sh", "-c", "kill -TERM $$"])
        #expect(killed.status == 128 + 15)
        #expect(throws: Subprocess.LaunchError.self) { try Subprocess.run(["pnmerge-test-no-such-program"]) }
        // A program that cannot be executed: the reason, once (git's runner passes it on as is).
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("pnmerge-test-\(UUID().uuidString)").path
        try Data("#!/bin/sh\n".utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            _ = try Subprocess.run([path])
            Issue.record("a file without execute permission ran")
        } catch {
            #expect(error.description == "cannot run \(path): Permission denied" && !error.notFound, "\(error.description)")
        }
        do {
            _ = try Subprocess.run(["pnmerge-test-no-such-program"])
        } catch {
            #expect(error.notFound)
        }
    }
}
