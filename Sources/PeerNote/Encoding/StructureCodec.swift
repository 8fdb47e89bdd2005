/// One run of a list's structure as a file would store it: `length` elements whose ids are the
/// consecutive op units of the block's replica `replica` from `counter` on, all deleted or all
/// visible. (The core's `StructureRun` names the replica by the log's agent instead.)
struct WireStructureRun: Sendable, Equatable {
    var replica: Int
    var counter: UInt32
    var length: Int
    var deleted: Bool
}

/// A list's structure (its elements' ids in list order, tombstones included, as runs) as bytes:
/// a note's `structure` in the state section of format version 3 (peernote(5), "State
/// section"), which lets a reader build each body at once instead of replaying its history.
/// Every reader reads it; compact saves write it only with `PEERNOTE_WRITE_FORMAT=3`
/// (docs/FORMAT-V3.md says why); `pnbench origins` sizes it on the traces.
///
/// The bytes are the number of runs (ULEB128), then per run, in list order:
/// - the replica's index in the block's replica table (ULEB128);
/// - its first counter, less where that replica's previous run in this list ended (SLEB128; the
///   first run of a replica counts from 0): typing makes most runs start where an earlier run
///   of theirs ended, or near it;
/// - its length times two, plus one when its elements are deleted (ULEB128).
///
/// Canonical form: no run is empty, and no run continues the one before it (the same replica,
/// the next counter, the same deletedness: those are one run). A decoder refuses anything else,
/// so that one list has one encoding. Encoding takes runs in that form.
enum StructureCodec {
    /// Appends the encoding of `runs` (canonical: see the type) to `out`.
    static func encode(_ runs: [WireStructureRun], into out: inout [UInt8]) {
        LEB128.appendUnsigned(UInt64(runs.count), to: &out)
        var ends: [Int: Int] = [:]
        for run in runs {
            precondition(run.length > 0, "a structure run holds elements")
            LEB128.appendUnsigned(UInt64(run.replica), to: &out)
            LEB128.appendSigned(Int64(run.counter) - Int64(ends[run.replica] ?? 0), to: &out)
            LEB128.appendUnsigned(UInt64(run.length) << 1 | (run.deleted ? 1 : 0), to: &out)
            ends[run.replica] = Int(run.counter) + run.length
        }
    }

    /// `runs` in canonical form: empty runs dropped, and each run that continues the one before
    /// it joined to it (a list's runs as its tree holds them may be cut where nothing differs).
    static func joined(_ runs: [WireStructureRun]) -> [WireStructureRun] {
        var out: [WireStructureRun] = []
        out.reserveCapacity(runs.count)
        for run in runs where run.length > 0 {
            if let last = out.last, last.replica == run.replica, last.deleted == run.deleted,
               Int(last.counter) + last.length == Int(run.counter) {
                out[out.count - 1].length += run.length
            } else {
                out.append(run)
            }
        }
        return out
    }

    /// The runs `bytes` encodes, for a block of `replicaCount` replicas, holding at most
    /// `maxElements` elements in all; `base` is the offset of `bytes`' first byte in the file (for
    /// error messages). Refuses (with the offset of the run at fault) truncated or trailing bytes,
    /// a replica outside the table, counters outside 32 bits, empty runs, runs that continue the
    /// one before (not canonical), and more elements than `maxElements`. Whether the ids exist,
    /// and each occurs once, is for the reader that knows the block's changes to check.
    static func decode(_ bytes: ArraySlice<UInt8>, replicaCount: Int, maxElements: Int, base: Int = 0) throws(FormatError) -> [WireStructureRun] {
        let result: Result<[WireStructureRun], FormatError> = bytes.withUnsafeBufferPointer { p in
            Result { () throws(FormatError) in try decode(p, replicaCount: replicaCount, maxElements: maxElements, base: base) }
        }
        return try result.get()
    }

    private static func decode(_ p: UnsafeBufferPointer<UInt8>, replicaCount: Int, maxElements: Int, base: Int) throws(FormatError) -> [WireStructureRun] {
        var i = 0
        func fail(_ at: Int, _ message: String) -> FormatError { FormatError(offset: base + at, message: "list structure: \(message)") }
        func unsigned() throws(FormatError) -> UInt64 {
            do { return try LEB128.readUnsigned(p, &i, base: base) } catch { throw FormatError(offset: error.offset, message: "list structure: \(error.message)") }
        }
        func signed() throws(FormatError) -> Int64 {
            do { return try LEB128.readSigned(p, &i, base: base) } catch { throw FormatError(offset: error.offset, message: "list structure: \(error.message)") }
        }
        let count = try unsigned()
        // Each run takes at least three bytes: a count past that is refused before anything is
        // allocated for it.
        guard count <= UInt64((p.count - i) / 3) else { throw fail(0, "\(count) runs claimed in \(p.count) bytes") }
        var runs: [WireStructureRun] = []
        runs.reserveCapacity(Int(count))
        var ends = [Int](repeating: 0, count: max(0, replicaCount))
        var elements = 0
        for _ in 0 ..< Int(count) {
            let at = i
            let replica = try unsigned()
            guard replica < UInt64(replicaCount) else { throw fail(at, "replica \(replica) of a table of \(replicaCount)") }
            let r = Int(replica)
            let delta = try signed()
            let (counter, overflow) = Int64(ends[r]).addingReportingOverflow(delta)
            guard !overflow, counter >= 0, counter <= Int64(UInt32.max) else { throw fail(at, "a counter outside 32 bits") }
            let packed = try unsigned()
            let length = packed >> 1, deleted = packed & 1 == 1
            guard length > 0 else { throw fail(at, "an empty run") }
            guard length <= UInt64(max(0, maxElements - elements)) else { throw fail(at, "more than \(maxElements) elements") }
            guard UInt64(counter) + length <= UInt64(UInt32.max) + 1 else { throw fail(at, "a run past counter 2^32") }
            let run = WireStructureRun(replica: r, counter: UInt32(counter), length: Int(length), deleted: deleted)
            if let last = runs.last, last.replica == r, Int(last.counter) + last.length == Int(counter), last.deleted == deleted {
                throw fail(at, "a run that continues the one before it (not canonical)")
            }
            runs.append(run)
            elements += Int(length)
            ends[r] = Int(counter) + Int(length)
        }
        guard i == p.count else { throw fail(i, "\(p.count - i) bytes after the last run") }
        return runs
    }
}
