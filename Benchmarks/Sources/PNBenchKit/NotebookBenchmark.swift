import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import PeerNote

extension PNBench {
    /// `pnbench notebook --notes N`: a notebook of many short notes (not an editing trace), and
    /// what the tools do with it, timed in-process.
    struct NotebookCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "notebook",
            abstract: "Time load, list, edit and merge on a notebook of many notes, in-process.",
            discussion: """
                Builds a notebook of --notes notes, each titled "Note i" with a body of about 200 \
                characters and one tag (as Benchmarks/scripts/many-notes.py does, in one change), \
                saves it, and makes two copies: MINE edits two notes' bodies and adds a note; THEIRS \
                retitles one note, tags one and deletes one (each an appended change, as peernote \
                writes them). Or reads MINE and THEIRS from --mine and --theirs. Then times, median \
                of --runs: validate (load MINE with every check), list (load MINE and list its \
                notes' titles), edit (load MINE, set one note's body, append), merge (load MINE and \
                THEIRS, merge THEIRS in, compact save: what `pnmerge merge MINE THEIRS -o OUT` \
                writes) and merge in place (the same with an appended save). Prints one JSON object.
                """
        )

        @Option(help: "How many notes the notebook has.")
        var notes = 2_000

        @Option(help: "Read MINE from this file instead of building the notebook (with --theirs).")
        var mine: String?

        @Option(help: "Read THEIRS from this file (with --mine).")
        var theirs: String?

        @Option(help: "Timed runs of each step (the median is reported).")
        var runs = 5

        func validate() throws {
            if notes < 12 { throw ValidationError("--notes must be at least 12 (the edits name notes 5, 7, 9 and 11)") }
            if runs < 1 { throw ValidationError("--runs must be at least 1") }
            if (mine == nil) != (theirs == nil) { throw ValidationError("--mine and --theirs go together") }
        }

        func run() throws {
            try reportingErrors {
                let buildStart = Timing.clock.now
                let (mineBytes, theirsBytes) = try copies()
                let buildMs = Timing.milliseconds(Timing.clock.now - buildStart)
                let result = try NotebookBenchmark(mine: mineBytes, theirs: theirsBytes, runs: runs).measure()
                var fields: [(String, JSON)] = [("notes", mine == nil ? .int(notes) : .null), ("build_ms", .number(buildMs))]
                fields += result
                fields.append(("peak_rss_mb", .number(Memory.peakMB())))
                emit(JSON.object(fields).rendered())
            }
        }

        private func copies() throws(BenchError) -> (mine: [UInt8], theirs: [UInt8]) {
            if let mine, let theirs {
                return (try readFile(mine), try readFile(theirs))
            }
            do {
                return try NotebookBenchmark.copies(notes: notes)
            } catch {
                throw .replayFailed("building the notebook failed: \(error)")
            }
        }

        private func readFile(_ path: String) throws(BenchError) -> [UInt8] {
            do { return try FileStore.read(path) } catch { throw .missingTrace(path: path, message: "\(error)") }
        }
    }
}

/// The notebook workload: two copies of a notebook of many notes, and the steps timed on them.
struct NotebookBenchmark {
    var mine: [UInt8]
    var theirs: [UInt8]
    var runs: Int

    /// The body of note `i`: about 200 characters, as many-notes.py writes it.
    static func body(_ i: Int) -> String {
        Array(repeating: "Line of text for note \(i).", count: 8).joined(separator: " ")
    }

    /// MINE and THEIRS of a notebook of `notes` notes (see `pnbench notebook --help`).
    static func copies(notes: Int) throws -> (mine: [UInt8], theirs: [UInt8]) {
        let doc = Document(title: "Many notes", author: "bench")
        var ids: [NoteID] = []
        ids.reserveCapacity(notes)
        doc.transaction(message: "Import") {
            for i in 0 ..< notes {
                ids.append(doc.addNote(title: "Note \(i)", body: body(i), tags: ["t\(i % 50)"]))
            }
        }
        let base = doc.save(.compact)
        let mine = try Document.load(base)
        try mine.transaction { () throws(PeerNoteError) in try mine.setBody(ids[5], "Changed on the laptop.") }
        try mine.transaction { () throws(PeerNoteError) in try mine.setBody(ids[notes / 2], "Also changed on the laptop.") }
        mine.transaction { _ = mine.addNote(title: "New on the laptop", body: "hello") }
        let theirs = try Document.load(base)
        try theirs.transaction { () throws(PeerNoteError) in try theirs.setNoteTitle(ids[7], "Note 7, retitled on the phone") }
        try theirs.transaction { () throws(PeerNoteError) in try theirs.addTag(ids[notes - 1], "phone") }
        try theirs.transaction { () throws(PeerNoteError) in try theirs.deleteNote(ids[9]) }
        return (mine.save(.incremental), theirs.save(.incremental))
    }

    /// Each step's median time in milliseconds, and the sizes.
    func measure() throws(BenchError) -> [(String, JSON)] {
        func load(_ bytes: [UInt8], _ what: String) throws(BenchError) -> Document {
            do { return try Document.load(bytes) } catch { throw .invalidTrace(path: what, message: "\(error)") }
        }
        func time(_ body: () throws(BenchError) -> Void) throws(BenchError) -> Double {
            var times: [Double] = []
            for _ in 0 ..< runs {
                let start = Timing.clock.now
                try body()
                times.append(Timing.milliseconds(Timing.clock.now - start))
            }
            return Timing.median(times)
        }
        let validate = try time { () throws(BenchError) in _ = try load(mine, "MINE") }
        var listed = 0
        let list = try time { () throws(BenchError) in
            let d = try load(mine, "MINE")
            listed = d.notes.reduce(0) { $0 + $1.title.utf8.count }
        }
        var editedSize = 0
        let edit = try time { () throws(BenchError) in
            let d = try load(mine, "MINE")
            guard let note = d.notes.dropFirst(11).first else { throw .replayFailed("MINE has fewer than 12 notes") }
            do { try d.transaction { () throws(PeerNoteError) in try d.setBody(note.id, "z") } } catch {
                throw .replayFailed("the edit failed: \(error)")
            }
            editedSize = d.save(.incremental).count
        }
        var loadA: [Double] = [], loadB: [Double] = [], mergeOnly: [Double] = [], save: [Double] = [], whole: [Double] = []
        var inPlace: [Double] = []
        var mergedSize = 0, appendedSize = 0, mergedNotes = 0
        for _ in 0 ..< runs {
            for appending in [false, true] {
                let t0 = Timing.clock.now
                let a = try load(mine, "MINE")
                let t1 = Timing.clock.now
                let b = try load(theirs, "THEIRS")
                let t2 = Timing.clock.now
                do { try a.merge(b) } catch { throw .replayFailed("the merge failed: \(error)") }
                let t3 = Timing.clock.now
                let out = a.save(appending ? .incremental : .compact)
                let t4 = Timing.clock.now
                if appending {
                    inPlace.append(Timing.milliseconds(t4 - t0))
                    appendedSize = out.count
                } else {
                    loadA.append(Timing.milliseconds(t1 - t0))
                    loadB.append(Timing.milliseconds(t2 - t1))
                    mergeOnly.append(Timing.milliseconds(t3 - t2))
                    save.append(Timing.milliseconds(t4 - t3))
                    whole.append(Timing.milliseconds(t4 - t0))
                    mergedSize = out.count
                    mergedNotes = a.notes.count
                }
            }
        }
        let notesMine = try load(mine, "MINE").notes.count
        return [
            ("mine_size", .int(mine.count)), ("theirs_size", .int(theirs.count)),
            ("mine_notes", .int(notesMine)), ("merged_notes", .int(mergedNotes)),
            ("validate_ms", .number(validate)),
            ("list_ms", .number(list)), ("listed_title_bytes", .int(listed)),
            ("edit_ms", .number(edit)), ("edited_size", .int(editedSize)),
            ("merge_ms", .number(Timing.median(whole))),
            ("merge_parts_ms", .object([
                ("load_a", .number(Timing.median(loadA))), ("load_b", .number(Timing.median(loadB))),
                ("merge", .number(Timing.median(mergeOnly))), ("save", .number(Timing.median(save))),
            ])),
            ("merge_in_place_ms", .number(Timing.median(inPlace))),
            ("merged_size", .int(mergedSize)), ("merged_appended_size", .int(appendedSize)),
        ]
    }
}
