import Foundation
import PeerNote
import Testing
import TestSupport
@testable import PNMergeCommands

/// `2024-03-01 HH:MM:00 UTC`.
func at(_ hour: Int, _ minute: Int) -> Date {
    Date(timeIntervalSince1970: 1_709_251_200 + TimeInterval(hour * 3600 + minute * 60))
}

/// Three copies of one small notebook, each with edits of its own: `small` (one body edited),
/// `large` (twenty long notes added, so its file is much the larger) and `third` (a tag added).
struct SmallAndLarge {
    let small: Document, large: Document, third: Document

    init() throws {
        let base = Document(title: "T", author: "carol")
        let shared = base.addNote(title: "Shared", body: "x")
        let bytes = base.save()
        small = try Document.load(bytes)
        large = try Document.load(bytes)
        third = try Document.load(bytes)
        small.author = "sam"
        try small.setBody(shared, "edited by sam")
        large.author = "lee"
        for i in 0 ..< 20 { large.addNote(title: "Note \(i)", body: String(repeating: "long text \(i) ", count: 20)) }
        third.author = "tia"
        try third.addTag(shared, "tagged")
    }
}

/// Two copies of one notebook that diverged:
/// - alice edits "Plan", renames "Food" to "Shopping" and deletes "Old" (at 10:02);
/// - bob edits "Ideas", renames "Food" to "Groceries", edits "Old" and adds "Boat" (at 10:05).
struct Diverged {
    let base: Document
    let alice: Document
    let bob: Document

    static let documentID = UUID(uuidString: "0C4B36E2-6C55-4D9A-8F0E-2B9C3E7D5A11") ?? UUID()

    init() throws {
        let base = Document(title: "Home", author: "carol", id: Self.documentID, replica: ReplicaID(high: 0xCA40_1000_0000_0000, low: 1), time: at(9, 0))
        base.clock = { at(9, 30) }
        let food = base.addNote(title: "Food", body: "milk\neggs", tags: ["errands"])
        let plan = base.addNote(title: "Plan", body: "Monday: call", priority: .high)
        let ideas = base.addNote(title: "Ideas", body: "none yet")
        let old = base.addNote(title: "Old", body: "stale")

        let alice = base.fork(author: "alice")
        alice.clock = { at(10, 2) }
        try alice.setBody(plan, "Monday: call Bob")
        try alice.setNoteTitle(food, "Shopping")
        try alice.deleteNote(old)

        let bob = base.fork(author: "bob")
        bob.clock = { at(10, 5) }
        try bob.setBody(ideas, "build a boat")
        try bob.setNoteTitle(food, "Groceries")
        try bob.insertText(old, at: 0, "still ")
        bob.addNote(title: "Boat", body: "wood", tags: ["dream"], priority: .low)

        self.base = base
        self.alice = alice
        self.bob = bob
    }

    /// Writes `base.peernote`, `alice.peernote`, `bob.peernote` (compact) into `dir`.
    func write(to dir: TempDir) throws {
        _ = try dir.write(base.save(), "base.peernote")
        _ = try dir.write(alice.save(), "alice.peernote")
        _ = try dir.write(bob.save(), "bob.peernote")
    }

    /// The two copies merged in memory.
    func merged() throws -> Document {
        let m = alice.fork()
        try m.merge(bob)
        return m
    }
}

/// Three copies of one notebook whose edits to the body of note "N" meet, or do not, as merge's
/// Check lists them (man/pnmerge.1, MERGE):
/// - alice fixes "teh" and deletes the paragraph "Drop this paragraph.", and sets "Other" to high;
/// - bob fixes "teh" too and adds a clause to that paragraph, and sets "Other" to low;
/// - chen edits only the last line, next to that paragraph but not in it.
///
/// alice and bob, merged either way, have two places to check (line 1, the same text replaced;
/// line 5, bob's clause in the paragraph alice deleted) and a priority conflict; alice and chen none.
struct OverlappingEdits {
    let alice: Document
    let bob: Document
    let chen: Document

    /// The lines `merge` prints for alice and bob (N's title never changes, so this is fixed).
    static let check = """
        Check (2): both sides edited these places; every edit is kept
          note "N", line 1: both sides edited the same place: what each typed is kept, side by side
          note "N", line 5: text added on one side lies in or at the edge of text the other deleted: it is kept, without that text
        """

    init() throws {
        let base = Document(title: "T", author: "carol")
        base.clock = { at(9, 30) }
        let note = base.addNote(title: "N", body: "I saw teh cat.\n\nKeep this.\n\nDrop this paragraph.\n\nEnd.")
        let other = base.addNote(title: "Other", body: "")
        let alice = base.fork(author: "alice"), bob = base.fork(author: "bob"), chen = base.fork(author: "chen")
        alice.clock = { at(10, 2) }
        bob.clock = { at(10, 5) }
        chen.clock = { at(10, 7) }
        try alice.setBody(note, "I saw the cat.\n\nKeep this.\n\nEnd.")
        try alice.setPriority(other, .high)
        try bob.setBody(note, "I saw the cat.\n\nKeep this.\n\nDrop this paragraph, bob added a clause.\n\nEnd.")
        try bob.setPriority(other, .low)
        try chen.setBody(note, "I saw teh cat.\n\nKeep this.\n\nDrop this paragraph.\n\nThe end.")
        (self.alice, self.bob, self.chen) = (alice, bob, chen)
    }

    /// Writes `alice.peernote`, `bob.peernote` and `chen.peernote` (compact) into `dir`.
    func write(to dir: TempDir) throws {
        _ = try dir.write(alice.save(.compact), "alice.peernote")
        _ = try dir.write(bob.save(.compact), "bob.peernote")
        _ = try dir.write(chen.save(.compact), "chen.peernote")
    }
}

/// The lines of a text report from the one that starts with `heading` through the indented ones
/// after it (empty when no line starts with `heading`).
func section(_ heading: String, of text: String) -> [String] {
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    guard let start = lines.firstIndex(where: { $0.hasPrefix(heading) }) else { return [] }
    return [lines[start]] + lines[(start + 1)...].prefix { $0.hasPrefix("  ") }
}

/// A notebook with no history in common with `Diverged`.
func unrelatedDocument() -> Document {
    let d = Document(title: "Work", author: "dave", id: UUID(uuidString: "9A1E2F30-1111-4222-8333-944455556666") ?? UUID(),
                     replica: ReplicaID(high: 0xDA7E_0000_0000_0000, low: 1), time: at(8, 0))
    d.clock = { at(8, 1) }
    d.addNote(title: "Todo", body: "ship")
    return d
}

/// Runs `pnmerge ARGS` in-process with captured output (UTC times, no colour).
func pnmerge(_ args: [String], input: [UInt8] = []) -> RunResult {
    let sink = CapturedOutput(input: input)
    let status = PNMerge.execute(args, output: sink)
    return RunResult(status: status, out: sink.standardOutput, err: sink.standardError, outBytes: sink.standardOutputBytes)
}

/// Parses JSON text with JSONSerialization.
func parseJSON(_ text: String) throws -> Any {
    try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
}
