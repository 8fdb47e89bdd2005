import Foundation
import PeerNote
import PeerNoteCLISupport
import Testing
import TestSupport
@testable import PNMergeCommands

/// Document text is other people's: control characters in it (terminal escape sequences, BEL,
/// `\r`, C1 controls, DEL, line breaks in one-line places) must reach people's terminals as
/// visible escapes, never raw.
@Suite("Control characters in document text")
struct ControlCharacterTests {
    // Each holds ESC sequences, BEL, \r, \n, U+009B (C1 CSI) and DEL.
    static let notebookTitle = "Book\u{1B}]0;pwned\u{07}\r\nsecond\u{9B}2J\u{7F}"
    static let noteTitle = "T\u{1B}]0;pwned\u{07}\n# line\r\u{9B}31m\u{7F}"
    static let body = "clear\u{1B}[2Jscreen\r\n\tindented\u{07}\u{9B}1m\u{7F}end\nlast"
    static let tag = "tag\u{1B}[31m\u{07}\r\n\u{9B}\u{7F}"
    static let author = "mal\u{1B}[2Jlory\u{07}\r\n\u{9B}\u{7F}"
    static let message = "first\u{1B}]0;pwned\u{07}\nsecond\r\u{9B}\u{7F}line\n\nthird"

    /// A notebook whose every field is hostile, and two copies that edited it concurrently
    /// (both retitle the note, which is a conflict; THEIRS also edits the body and adds a note).
    struct Copies {
        let mine: Document
        let theirs: Document

        init() throws {
            let base = Document(title: "", author: ControlCharacterTests.author,
                                id: UUID(uuidString: "5E1F0C3A-7B2D-4E6F-9A8B-1C2D3E4F5A6B") ?? UUID(),
                                replica: ReplicaID(high: 0xBAD0_0000_0000_0000, low: 1), time: at(9, 0))
            base.clock = { at(9, 30) }
            let note = base.transaction(message: ControlCharacterTests.message) {
                base.setTitle(ControlCharacterTests.notebookTitle)
                return base.addNote(title: ControlCharacterTests.noteTitle, body: ControlCharacterTests.body,
                                    tags: [ControlCharacterTests.tag])
            }
            let mine = base.fork(author: "alice\u{1B}[0m")
            mine.clock = { at(10, 0) }
            try mine.transaction(message: "mine\u{1B}[1m\nmore of mine\u{07}") {
                try mine.setNoteTitle(note, ControlCharacterTests.noteTitle + " mine")
            }
            let theirs = base.fork(author: ControlCharacterTests.author)
            theirs.clock = { at(10, 5) }
            try theirs.transaction(message: ControlCharacterTests.message) {
                try theirs.setNoteTitle(note, ControlCharacterTests.noteTitle + " theirs")
                try theirs.insertText(note, at: 0, "\u{1B}[2J")
                theirs.addNote(title: "new\u{1B}]0;x\u{07}\nnote")
            }
            self.mine = mine
            self.theirs = theirs
        }

        func merged() throws -> Document {
            let m = mine.fork()
            try m.merge(theirs)
            return m
        }
    }

    /// Every control character in `text` other than `\n` (and `\t` when `tabs`).
    static func rawControls(_ text: String, tabs: Bool = false) -> [String] {
        text.unicodeScalars.filter { s in
            s != "\n" && !(tabs && s == "\t") && (s.value < 0x20 || (0x7F ... 0x9F).contains(s.value))
        }.map { String(format: "U+%04X", $0.value) }
    }

    /// The one-line form of `text`, spelled out here rather than computed by the code under test.
    static func visible(_ text: String) -> String {
        var out = ""
        for s in text.unicodeScalars {
            switch s.value {
            case 0x0A: out += "\\n"
            case 0x0D: out += "\\r"
            case 0x09: out += "\\t"
            case 0 ..< 0x20, 0x7F ... 0x9F: out += "\\u{" + String(s.value, radix: 16) + "}"
            default: out.unicodeScalars.append(s)
            }
        }
        return out
    }

    // MARK: The shared function

    @Test("DisplayText: one-line and multi-line escaping, in peernote list's notation")
    func displayText() {
        #expect(DisplayText.oneLine("plain \\ text · ünïcode") == "plain \\ text · ünïcode")
        #expect(DisplayText.oneLine("a\r\nb\tc\u{1B}[2J\u{07}\u{0}\u{7F}\u{80}\u{9B}\u{9F}\u{A0}")
                == "a\\r\\nb\\tc\\u{1b}[2J\\u{7}\\u{0}\\u{7f}\\u{80}\\u{9b}\\u{9f}\u{A0}")
        #expect(DisplayText.multiline("a\r\nb\tc\u{1B}x\n") == "a\\r\nb\tc\\u{1b}x\n")
        #expect(DisplayText.lines("one\u{07}\n\ntwo\tx\n\n") == ["one\\u{7}", "", "two\\tx"])
        #expect(DisplayText.lines("\n\n") == ["\\n\\n"])
        #expect(DisplayText.lines("") == [])
        #expect(Self.visible(Self.noteTitle) == DisplayText.oneLine(Self.noteTitle))
    }

    @Test("DisplayText: a large body with something to escape on every line escapes as its lines do one by one")
    func largeBodyEscaping() {
        // 20,000 lines of about 25 characters, each with a CR, ESC or BEL: escaping appended each
        // escape to the whole text so far (about 4 GB copied here; a 20 MB body took minutes).
        let marks = ["\r", "\u{1B}[2J", "\u{07}"]
        let lines = (0 ..< 20_000).map { "line \($0) text \(marks[$0 % 3]) é end" }
        let body = lines.joined(separator: "\n")
        let escaped = DisplayText.multiline(body)
        #expect(escaped == lines.map(DisplayText.multiline).joined(separator: "\n"))
        #expect(DisplayText.bodyLines(body) == lines.map(DisplayText.multiline))
        // Each CR (6,667 lines) one byte longer as `\r`, each ESC (6,667) five as `\u{1b}`, each BEL (6,666) four as `\u{7}`.
        #expect(escaped.utf8.count == body.utf8.count + 6_667 * 1 + 6_667 * 5 + 6_666 * 4)
        #expect(DisplayText.oneLine(body) == lines.map(DisplayText.oneLine).joined(separator: "\\n"))
        var view = String.UnicodeScalarView()
        view.appendScalars(of: "a\u{301}")
        view.appendScalars(of: "")
        view.appendScalars(of: "\\n")
        #expect(String(view).unicodeScalars.elementsEqual("a\u{301}\\n".unicodeScalars))
    }

    @Test("DisplayText: bidirectional overrides and isolates are escaped on one line, kept in bodies")
    func directionalFormatting() {
        // RLO, LRE, RLE, PDF, LRO, then LRI, RLI, FSI, PDI; the marks (LRM U+200E, RLM U+200F,
        // ALM U+061C) change no order beyond their neighbours and are left alone.
        let text = "invoice\u{202E}fdp.exe \u{202A}\u{202B}\u{202C}\u{202D}\u{2066}\u{2067}\u{2068}\u{2069} \u{200E}\u{200F}\u{061C}"
        #expect(DisplayText.oneLine(text)
                == "invoice\\u{202e}fdp.exe \\u{202a}\\u{202b}\\u{202c}\\u{202d}\\u{2066}\\u{2067}\\u{2068}\\u{2069} \u{200E}\u{200F}\u{061C}")
        #expect(DisplayText.lines("one\u{202E}x\ntwo") == ["one\\u{202e}x", "two"])
        #expect(DisplayText.multiline("\u{05D0}\u{2067}abc\u{2069}\n") == "\u{05D0}\u{2067}abc\u{2069}\n")
        #expect(DisplayText.oneLine("\u{2065}\u{206A}\u{2029}") == "\u{2065}\u{206A}\u{2029}")
    }

    @Test("DisplayText: invisible format characters are escaped on one line (so that Plan and Plan+ZWSP do not list alike); joiners, marks and bodies are left alone")
    func invisibleCharacters() {
        #expect(DisplayText.oneLine("Plan\u{200B}") == "Plan\\u{200b}")
        #expect(DisplayText.oneLine("\u{FEFF}a\u{AD}b\u{2060}c\u{2064}d\u{180E}") == "\\u{feff}a\\u{ad}b\\u{2060}c\\u{2064}d\\u{180e}")
        // A family emoji (ZWJ), Persian with a ZWNJ, marks: as they are.
        let kept = "\u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467} \u{0645}\u{06CC}\u{200C}\u{062E}\u{0648}\u{0627}\u{0647}\u{0645} \u{200E}\u{200F}"
        #expect(DisplayText.oneLine(kept) == kept)
        #expect(DisplayText.multiline("a\u{200B}b\n") == "a\u{200B}b\n")
    }

    @Test("show and merge: a title with a right-to-left override cannot reorder the report line")
    func directionalFormattingInReports() throws {
        let base = Document(title: "Book\u{2067}", author: "mal\u{202E}lory", time: at(9, 0))
        let note = base.addNote(title: "invoice\u{202E}fdp.exe", body: "\u{05E9}\u{202B}body\u{202C}", tags: ["t\u{2066}"])
        let theirs = base.fork(author: "bob")
        try theirs.setNoteTitle(note, "again\u{202D}")
        let dir = try TempDir()
        let mine = try dir.write(base.save(), "mine.peernote")
        let other = try dir.write(theirs.save(), "theirs.peernote")

        let shown = pnmerge(["show", mine])
        #expect(shown.status == 0)
        #expect(shown.out.hasPrefix("Book\\u{2067}\n"))
        #expect(shown.out.contains("invoice\\u{202e}fdp.exe"))
        #expect(shown.out.contains("t\\u{2066}"))
        #expect(shown.out.contains("\u{05E9}\u{202B}body\u{202C}"))   // the body, as lines, keeps them

        let merged = pnmerge(["merge", mine, other, "-o", dir.path("out.peernote")])
        #expect(merged.status == 0)
        #expect(merged.out.contains("\"again\\u{202d}\" (was \"invoice\\u{202e}fdp.exe\"): title"))
        #expect(!merged.out.unicodeScalars.contains { DisplayText.isDirectionalFormatting($0) })
    }

    // MARK: show

    @Test("show: titles and tags on one line, the body's lines with their tabs, nothing raw")
    func show() throws {
        let doc = try Copies().mine
        let r = pnmerge(["show", "-"], input: doc.save())
        #expect(r.status == 0)
        #expect(Self.rawControls(r.out, tabs: true) == [])
        #expect(!r.out.contains("\r"))
        let lines = r.out.components(separatedBy: "\n")
        #expect(lines.first == Self.visible(Self.notebookTitle))
        #expect(lines.contains(Self.visible(Self.noteTitle + " mine")))
        #expect(r.out.contains("tags " + Self.visible(Self.tag) + " · "))
        #expect(r.out.contains("\n  clear\\u{1b}[2Jscreen\\r\n  \tindented\\u{7}\\u{9b}1m\\u{7f}end\n  last\n"))
        // The underline is as long as the title shown.
        #expect(lines.dropFirst().first == String(repeating: "=", count: Self.visible(Self.notebookTitle).count))
    }

    @Test("show --format markdown: a heading stays one line, the body keeps its line breaks only")
    func showMarkdown() throws {
        let doc = try Copies().mine
        let r = pnmerge(["show", "--format", "markdown", "-"], input: doc.save())
        #expect(r.status == 0)
        #expect(Self.rawControls(r.out, tabs: true) == [])
        let lines = r.out.components(separatedBy: "\n")
        #expect(lines.first == "# " + Self.visible(Self.notebookTitle))
        #expect(lines.contains("## " + Self.visible(Self.noteTitle + " mine")))
        // Only the two headings start with '#'.
        #expect(lines.filter { $0.hasPrefix("#") }.count == 2)
        #expect(r.out.contains("Tags: " + Self.visible(Self.tag) + " · "))
        #expect(r.out.contains("\nclear\\u{1b}[2Jscreen\\r\n\tindented\\u{7}\\u{9b}1m\\u{7f}end\nlast\n"))
    }

    // MARK: log

    @Test("log: author, message lines and summary escaped; every message line indented")
    func log() throws {
        let doc = try Copies().merged()
        let r = pnmerge(["log", "-"], input: doc.save())
        #expect(r.status == 0)
        #expect(Self.rawControls(r.out) == [])
        #expect(r.out.contains("Author: " + Self.visible(Self.author) + "\n"))
        #expect(r.out.contains("Author: alice\\u{1b}[0m\n"))
        #expect(r.out.contains("\n    first\\u{1b}]0;pwned\\u{7}\n    second\\r\\u{9b}\\u{7f}line\n\n    third\n"))
        #expect(r.out.contains("\n    mine\\u{1b}[1m\n    more of mine\\u{7}\n"))
        // The summary names the note by its title, on one line.
        #expect(r.out.contains("added \"" + Self.visible(Self.noteTitle) + "\""))
        // Apart from the change headers, the Author/Date/Merge lines and blank lines, everything is indented.
        let body = r.out.components(separatedBy: "\n").filter {
            !$0.isEmpty && !$0.hasPrefix("change ") && !$0.hasPrefix("Author: ") && !$0.hasPrefix("Date: ") && !$0.hasPrefix("Merge: ")
        }
        #expect(!body.isEmpty)
        #expect(body.allSatisfy { $0.hasPrefix("    ") })
    }

    @Test("log --graph: a message's further lines stay beside the lanes, indented under its first")
    func logGraph() throws {
        let doc = try Copies().merged()
        let r = pnmerge(["log", "--graph", "-"], input: doc.save())
        #expect(r.status == 0)
        #expect(Self.rawControls(r.out) == [])
        let lines = r.out.components(separatedBy: "\n").dropLast().map { $0 }
        /// The `n` lines after line `i` (fewer at the end).
        func after(_ i: Int, _ n: Int) -> [String] { Array(lines.dropFirst(i + 1).prefix(n)) }
        // Every line starts with the graph (a lane, a node, or the indent under the last lane).
        #expect(lines.allSatisfy { $0.hasPrefix("*") || $0.hasPrefix("|") || $0.hasPrefix(" ") })
        // THEIRS's change (the newest) comes first, with one lane open beside it; MINE's is drawn
        // in the second lane: the further lines of each message keep every lane open beside it.
        let theirs = try #require(lines.firstIndex { $0.hasPrefix("* ") && $0.contains(Self.visible(Self.author) + " (head)") })
        #expect(lines[theirs].hasSuffix(": first\\u{1b}]0;pwned\\u{7}"))
        #expect(after(theirs, 3) == ["|     second\\r\\u{9b}\\u{7f}line", "|", "|     third"])
        let mine = try #require(lines.firstIndex { $0.hasPrefix("| * ") && $0.contains("alice\\u{1b}[0m (head)") })
        #expect(lines[mine].hasSuffix(": mine\\u{1b}[1m"))
        #expect(after(mine, 1) == ["| |     more of mine\\u{7}"])
        #expect(after(mine, 2).last?.hasPrefix("| | retitled \"" + Self.visible(Self.noteTitle) + " mine\"") == true)
        // The change both grew from, after the lanes joined.
        let base = try #require(lines.firstIndex { $0.hasPrefix("* 2@bad00000 ") })
        #expect(after(base - 2, 1) == ["|/"])
        #expect(after(base, 3) == ["|     second\\r\\u{9b}\\u{7f}line", "|", "|     third"])
    }

    // MARK: textconv and inspect

    @Test("textconv: one header line per note, body lines keep their tabs, nothing raw")
    func textconv() throws {
        let doc = try Copies().mine
        let dir = try TempDir()
        let file = try dir.write(doc.save(), "n.peernote")
        let r = pnmerge(["textconv", file])
        #expect(r.status == 0)
        #expect(Self.rawControls(r.out, tabs: true) == [])
        let lines = r.out.components(separatedBy: "\n")
        #expect(lines.first == "# " + Self.visible(Self.notebookTitle))
        let header = try #require(lines.first { $0.hasPrefix("## ") })
        #expect(header.hasPrefix("## " + Self.visible(Self.noteTitle + " mine") + "  ["))
        #expect(header.hasSuffix(" tags: " + Self.visible(Self.tag)))
        #expect(r.out.contains("\n    clear\\u{1b}[2Jscreen\\r\n    \tindented\\u{7}\\u{9b}1m\\u{7f}end\n    last\n"))
    }

    @Test("inspect: the title and the authors escaped")
    func inspect() throws {
        let doc = try Copies().merged()
        let r = pnmerge(["inspect", "-"], input: doc.save())
        #expect(r.status == 0)
        #expect(Self.rawControls(r.out) == [])
        #expect(r.out.contains("title      \"" + Self.visible(Self.notebookTitle) + "\"\n"))
        #expect(r.out.contains(Self.visible(Self.author)))
        #expect(r.out.contains("alice\\u{1b}[0m"))
    }

    // MARK: Reports

    @Test("diff and merge: note titles, authors and conflict values escaped in the reports")
    func diffAndMerge() throws {
        let s = try Copies()
        let dir = try TempDir()
        let mine = try dir.write(s.mine.save(), "mine.peernote")
        let theirs = try dir.write(s.theirs.save(), "theirs.peernote")
        let mineTitle = Self.visible(Self.noteTitle + " mine"), theirsTitle = Self.visible(Self.noteTitle + " theirs")

        let d = pnmerge(["diff", mine, theirs])
        #expect(d.status == 0)
        #expect(Self.rawControls(d.out) == [])
        #expect(d.out.contains("lacks 1 change from \(theirs) (\(Self.visible(Self.author)) 1):"))
        #expect(d.out.contains("added    \"new\\u{1b}]0;x\\u{7}\\nnote\""))
        #expect(d.out.contains("title \"\(mineTitle)\" (alice\\u{1b}[0m, 10:00) vs \"\(theirsTitle)\" (\(Self.visible(Self.author)), 10:05)"))

        let m = pnmerge(["merge", mine, theirs, "-o", dir.path("out.peernote")])
        #expect(m.status == 0)
        #expect(Self.rawControls(m.out) == [])
        #expect(m.out.contains("  \(theirs): 1 change (\(Self.visible(Self.author)) 1)\n"))
        #expect(m.out.contains("added    \"new\\u{1b}]0;x\\u{7}\\nnote\"\n"))
        // Which title the conflict shows depends on the copies' random replica ids.
        let merged = try s.merged()
        let shown = Self.visible(try #require(merged.notebook.notes.first).title)
        #expect(shown == mineTitle || shown == theirsTitle)
        let edited = shown == mineTitle ? "\"\(mineTitle)\": body" : "\"\(theirsTitle)\" (was \"\(mineTitle)\"): title, body"
        #expect(m.out.contains("\n  edited   \(edited)\n"))
        #expect(m.out.contains("\n  note \"\(shown)\": title \"\(mineTitle)\" (alice\\u{1b}[0m, 10:00) vs \"\(theirsTitle)\" ("
                               + Self.visible(Self.author) + ", 10:05), showing \"\(shown)\"; resolve: peernote resolve "))
    }

    @Test("git-driver, sync and salvage: the reports on standard output and error are escaped")
    func otherReports() throws {
        let s = try Copies()
        let dir = try TempDir()
        let ours = try dir.write(s.mine.save(), "ours.peernote")
        let theirs = try dir.write(s.theirs.save(), "theirs.peernote")
        let g = pnmerge(["git-driver", "", ours, theirs, "notes.peernote"])
        #expect(g.status == 0)
        #expect(Self.rawControls(g.out + g.err) == [])
        #expect(g.err.contains("title \"\(Self.visible(Self.noteTitle + " mine"))\" (alice\\u{1b}[0m, 10:00)"))

        let folder = try TempDir()
        _ = try folder.write(s.mine.save(), "a.peernote")
        _ = try folder.write(s.theirs.save(), "a.sync-conflict-20240301-100500-ABCDEFG.peernote")
        let y = pnmerge(["sync", folder.url.path])
        #expect(y.status == 0)
        #expect(Self.rawControls(y.out + y.err) == [])
        #expect(y.out.contains("\"" + Self.visible(Self.notebookTitle) + "\" (5e1f0c3a): 1 copy"))
        #expect(y.out.contains("(\(Self.visible(Self.author)) 1)"))

        let v = pnmerge(["salvage", ours, "-o", dir.path("copy.peernote")])
        #expect(v.status == 0)
        #expect(Self.rawControls(v.out + v.err) == [])
        #expect(v.out.contains("notebook \"" + Self.visible(Self.notebookTitle) + "\": 2 notes"))
    }

    @Test("error lines: a file name with control characters is shown escaped, on one line")
    func errorLine() throws {
        let dir = try TempDir()
        let name = dir.path("evil\u{1B}]0;pwned\u{07}\n\u{9B}.peernote")
        let r = pnmerge(["show", name])
        #expect(r.status == ExitStatus.noInput.rawValue)
        #expect(Self.rawControls(r.err) == [])
        #expect(r.err.hasPrefix("pnmerge: " + Self.visible(name) + ": "))
        #expect(r.err.filter { $0 == "\n" }.count == 1)
    }

    @Test("report lines: a file name with control characters is shown escaped in validate, inspect, merge, compact and the git driver")
    func fileNamesInReports() throws {
        let dir = try TempDir()
        let c = try Copies()
        let evil = "evil\u{1B}]0;pwned\u{07}\u{9B}"
        let mine = try dir.write(c.mine.save(), evil + "mine.peernote")
        let theirs = try dir.write(c.theirs.save(), evil + "theirs.peernote")
        let out = dir.path(evil + "out.peernote")
        var outputs: [(String, RunResult)] = []
        outputs.append(("validate", pnmerge(["validate", mine])))
        outputs.append(("inspect", pnmerge(["inspect", mine])))
        outputs.append(("merge -o", pnmerge(["merge", mine, theirs, "-o", out])))
        outputs.append(("merge --dry-run", pnmerge(["merge", "--dry-run", mine, theirs])))
        outputs.append(("compact", pnmerge(["compact", mine])))
        let ours = try dir.write(c.mine.save(), "ours")
        let theirsCopy = try dir.write(c.theirs.save(), "theirs")
        let base = try dir.write(c.mine.save(), "base")
        outputs.append(("git-driver", pnmerge(["git-driver", base, ours, theirsCopy, evil + "notes.peernote"])))
        for (what, r) in outputs {
            #expect(Self.rawControls(r.out + r.err) == [], "\(what): \(r.out + r.err)")
            #expect((r.out + r.err).contains(Self.visible(evil)), "\(what): \(r.out + r.err)")
        }
    }

    @Test("JSON output escapes C1 controls as well as C0 and DEL")
    func jsonEscapesC1() throws {
        let dir = try TempDir()
        let file = try dir.write(try Copies().merged().save(), "m.peernote")
        let r = pnmerge(["show", "--format", "json", file])
        #expect(r.status == 0)
        #expect(Self.rawControls(r.out) == [], "\(r.out)")
        #expect(r.out.contains("\\u009b") || r.out.contains("\\u009B"), "\(r.out)")
    }

    @Test("A message's CRLF line ends are line breaks, not escaped \\r at the end of one long line")
    func crlfMessageLines() {
        #expect(DisplayText.lines("Subject\r\n\r\nBody\r\n") == ["Subject", "", "Body"])
        #expect(DisplayText.lines("a\rb\nc") == ["a\\rb", "c"])
    }
}
