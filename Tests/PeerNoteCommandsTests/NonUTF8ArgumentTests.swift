import Foundation
import PeerNote
import Testing
import TestSupport

/// Runs `peernote` from a shell script in `dir` (`$0` is the binary): Process takes Strings, which
/// cannot hold bytes that are not UTF-8, so the script makes them with printf.
func peernoteScript(_ script: String, in dir: TempDir) throws -> RunResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", script, try Binary.require()]
    process.currentDirectoryURL = URL(fileURLWithPath: dir.path)
    process.environment = Binary.environment([:])
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = FileHandle.nullDevice
    try process.run()
    // Small outputs (one line): reading after the exit cannot block on a full pipe.
    process.waitUntilExit()
    let outBytes = Array(out.fileHandleForReading.readDataToEndOfFile())
    let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    return RunResult(status: process.terminationStatus, out: String(decoding: outBytes, as: UTF8.self), err: stderr, outBytes: outBytes)
}

@Suite("peernote: arguments that are not UTF-8")
struct NonUTF8ArgumentTests {
    @Test("--title and --body bytes that are not UTF-8 are refused (exit 64, one line), not stored as U+FFFD; the file is unchanged")
    func textOptions() throws {
        let dir = try TempDir()
        let new = try Binary.run(["new", "u1.peernote", "--title", "Book"], in: dir)
        #expect(new.status == 0, "\(new.err)")
        let before = try dir.bytes("u1.peernote")

        let title = try peernoteScript(#"exec "$0" add u1.peernote --title "$(printf '\377\376')""#, in: dir)
        #expect(title.status == 64, "\(title.err)")
        #expect(title.err == "peernote: argument 4 (after --title) is not valid UTF-8: \\xFF\\xFE (bytes that are not UTF-8 shown as \\xNN); "
            + "give it as UTF-8 text (for a file whose name is not UTF-8, rename the file first)\n")
        #expect(title.out.isEmpty)

        let body = try peernoteScript(#"exec "$0" add u1.peernote --title Caf --body "$(printf 'caf\351 au lait')""#, in: dir)
        #expect(body.status == 64, "\(body.err)")
        #expect(body.err.hasPrefix("peernote: argument 6 (after --body) is not valid UTF-8: caf\\xE9 au lait ("), "\(body.err)")
        #expect(body.err.split(separator: "\n").count == 1)

        #expect(try dir.bytes("u1.peernote") == before, "nothing was recorded")
        #expect(try Document.open(dir.file("u1.peernote")).notes.isEmpty)
        // The same text in UTF-8 is stored as it is.
        let utf8 = try peernoteScript(#"exec "$0" add u1.peernote --title "$(printf 'caf\303\251')""#, in: dir)
        #expect(utf8.status == 0, "\(utf8.err)")
        #expect(try Document.open(dir.file("u1.peernote")).notes.map(\.title) == ["café"])
    }

    @Test("A FILE that is a link to a name that is not UTF-8 is refused as such (66), not reported missing; in a folder so named, a link is followed")
    func linkToNonUTF8Name() throws {
        let dir = try TempDir()
        #expect(try Binary.run(["new", "u1.peernote"], in: dir).status == 0)
        let before = try dir.bytes("u1.peernote")
        let r = try peernoteScript(#"cp u1.peernote "$(printf 'caf\351.peernote')" && ln -s "$(printf 'caf\351.peernote')" link.peernote && exec "$0" add link.peernote --title x"#, in: dir)
        #expect(r.status == 66, "\(r.err)")
        #expect(r.err == "peernote: link.peernote: is a symbolic link to a name that is not valid UTF-8; rename the file it points to\n")
        let unchanged = try peernoteScript(#"cmp -s u1.peernote "$(printf 'caf\351.peernote')""#, in: dir)
        #expect(unchanged.status == 0, "the file the link points to is unchanged")
        #expect(try dir.bytes("u1.peernote") == before)

        let inFolder = try peernoteScript(#"mkdir "$(printf 'd\351')" && cd "$(printf 'd\351')" && cp ../u1.peernote n.peernote && ln -s n.peernote l.peernote && "$0" add l.peernote --title Inside >/dev/null && test -L l.peernote && cp n.peernote ../inside.peernote"#, in: dir)
        #expect(inFolder.status == 0, "\(inFolder.err)")
        #expect(try Document.open(dir.file("inside.peernote")).notes.map(\.title) == ["Inside"])
    }

    @Test("Messages name FILE as typed, not the path its links lead to (as './linkdir/../nb.peernote')")
    func messagesNameTheLink() throws {
        let dir = try TempDir()
        #expect(try Binary.run(["new", "real/nb.peernote"], in: dir).status != 0, "no folder yet")
        let r = try peernoteScript(#"mkdir -p real/sub && "$0" new real/nb.peernote >/dev/null && ln -s real/sub linkdir && ln -s ../nb.peernote real/sub/l1 && ln -s linkdir/l1 top && "$0" add top --title One >/dev/null && head -c 120 real/nb.peernote > cut && cat cut > real/nb.peernote && "$0" add top --title Two; echo "rc=$?" >&2; exec "$0" edit top One --title Three"#, in: dir)
        let lines = r.err.split(separator: "\n").map(String.init)
        #expect(lines.count == 3, "\(r.err)")
        #expect(lines.first?.hasPrefix("peernote: top: offset ") == true, "\(r.err)")
        #expect(lines.dropFirst().first == "rc=65")
        #expect(lines.last?.hasPrefix("peernote: top: offset ") == true, "\(r.err)")
        #expect(!r.err.contains(".."), "\(r.err)")
    }

    @Test("A file named with bytes that are not UTF-8 is refused by name, with what to do (rename it), not reported missing")
    func fileName() throws {
        let dir = try TempDir()
        #expect(try Binary.run(["new", "u1.peernote"], in: dir).status == 0)
        let r = try peernoteScript(#"cp u1.peernote "$(printf 'nonutf\377.peernote')" && exec "$0" list "$(printf 'nonutf\377.peernote')""#, in: dir)
        #expect(r.status == 64, "\(r.err)")
        #expect(r.err == "peernote: argument 2 is not valid UTF-8: nonutf\\xFF.peernote (bytes that are not UTF-8 shown as \\xNN); "
            + "it names a file: rename the file to a UTF-8 name (for example with mv) and give that name\n")
        // A new file under such a name is not created either (it would be created under another name).
        let created = try peernoteScript(#""$0" new "$(printf 'other\377.peernote')"; status=$?; ls -A | wc -l; exit $status"#, in: dir)
        #expect(created.status == 64)
        #expect(created.out.trimmingCharacters(in: .whitespacesAndNewlines) == "2", "u1.peernote and its copy, nothing else")
    }

    @Test("An author that is not UTF-8, from PEERNOTE_AUTHOR, git's user.name or the login name, is refused (exit 64) naming where it came from; nothing is recorded")
    func authorFromEnvironment() throws {
        let dir = try TempDir()
        #expect(try Binary.run(["new", "a.peernote"], in: dir).status == 0)
        let before = try dir.bytes("a.peernote")
        // git reads only this global file (no system one); the login name is $USER.
        let git = #"GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL="$PWD/gitconfig"; export GIT_CONFIG_NOSYSTEM GIT_CONFIG_GLOBAL; "#

        let env = try peernoteScript(#"PEERNOTE_AUTHOR="$(printf 'x\377')" exec "$0" title a.peernote T"#, in: dir)
        #expect(env.status == 64, "\(env.err)")
        #expect(env.err == "peernote: PEERNOTE_AUTHOR, the author to record, is not valid UTF-8: x\\xFF (bytes that are not UTF-8 shown as \\xNN); "
            + "give it as UTF-8 text, or give --author NAME\n")

        let fromGit = try peernoteScript(git + #"printf '[user]\n\tname = g\376\n' > gitconfig; unset PEERNOTE_AUTHOR; exec "$0" title a.peernote T"#, in: dir)
        #expect(fromGit.status == 64, "\(fromGit.err)")
        #expect(fromGit.err.hasPrefix("peernote: git's user.name, the author to record, is not valid UTF-8: g\\xFE ("), "\(fromGit.err)")
        #expect(fromGit.err.split(separator: "\n").count == 1)

        let login = try peernoteScript(git + #": > gitconfig; unset PEERNOTE_AUTHOR; USER="$(printf 'u\375')" exec "$0" title a.peernote T"#, in: dir)
        #expect(login.status == 64, "\(login.err)")
        #expect(login.err.hasPrefix("peernote: the login name (from $USER), the author to record, is not valid UTF-8: u\\xFD ("), "\(login.err)")

        #expect(try dir.bytes("a.peernote") == before, "nothing was recorded")

        // An empty PEERNOTE_AUTHOR counts as unset: git's user.name (UTF-8) is taken, as it is.
        let ok = try peernoteScript(git + #"printf '[user]\n\tname = Zo\303\253\n' > gitconfig; PEERNOTE_AUTHOR= exec "$0" title a.peernote T"#, in: dir)
        #expect(ok.status == 0, "\(ok.err)")
        #expect(try Document.open(dir.file("a.peernote")).history.last?.author == "Zoë")
    }
}
