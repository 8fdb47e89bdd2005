#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension WireCodec {
    struct ColumnReadError: Error { var message: String }

    /// A pair of op columns naming ids (replica indices and counters), read a row at a time and
    /// checked as read. A note reference names a replica as it is; another reference names it
    /// plus one, 0 meaning none, and then has no counter.
    private struct IDColumns {
        let replicas: [UInt64], counters: [Int64]
        let replicaCount: Int
        private var row = 0, counter = 0

        init(replicas: [UInt64], counters: [Int64], replicaCount: Int) {
            self.replicas = replicas
            self.counters = counters
            self.replicaCount = replicaCount
        }

        @inline(__always) static func id(_ r: UInt64, _ c: Int64, replicas: Int, _ what: String) throws(ColumnReadError) -> LocalID {
            guard r < UInt64(replicas) else { throw ColumnReadError(message: "\(what) names replica \(r), the table has \(replicas)") }
            guard c >= 0 && c <= Int64(UInt32.max - 1) else { throw ColumnReadError(message: "\(what) counter \(c) out of range") }
            return LocalID(agent: UInt32(r), counter: UInt32(c))
        }

        @inline(__always) mutating func nextNote() throws(ColumnReadError) -> LocalID {
            let r = replicas[row], c = counters[row]
            row += 1
            return try Self.id(r, c, replicas: replicaCount, "note reference")
        }

        @inline(__always) mutating func nextReference() throws(ColumnReadError) -> LocalID {
            let r = replicas[row]
            row += 1
            if r == 0 { return .none }
            let c = counters[counter]
            counter += 1
            return try Self.id(r - 1, c, replicas: replicaCount, "reference")
        }
    }

    /// Times (seconds since 1970) beyond ±2^52 are refused: far past any real clock, and small
    /// enough that differences between any two of them fit the delta columns.
    static let maxTime: Int64 = 1 << 52

    /// Decodes the columns into `block` and returns the number of predecessors its ops list.
    /// `maxOps` and `maxPredecessors` are what the file's budget leaves for this block.
    /// With `structures` (a version 3 block whose state section stores the bodies' structures),
    /// column 49 says which insertText ops store their origins; the others get `LocalID.unstated`.
    /// With `liveScalars` (a block with a state section) and without `placeholders`, the block's
    /// `text` stays empty and `placeholderCount` says how many characters its ops insert.
    /// With `textLater` (a block with a state section not read yet; `liveScalars` nil and no
    /// `placeholders`), the inserts' text is not bounded by the text column: `textReached` is set
    /// to how many characters the ops insert, and the caller checks it against the state
    /// section's text and the text column, and sets `placeholderCount` (`WireCodec.decodePayload`).
    static func decodeColumns(_ bytes: [UInt8], into block: inout WireBlock, strings: [String], changeCount: Int, unitCount: Int, liveScalars: Int?,
                              placeholders: Bool = true, textLater: Bool = false, textReached: UnsafeMutablePointer<Int>? = nil,
                              structures: Bool, maxRows: Int, maxOps: Int, maxPredecessors: Int, fileSize: Int) throws(ColumnReadError) -> Int {
        precondition(!textLater || (liveScalars == nil && !placeholders), "text checked later only for a block read without placeholders")
        let set: [UInt64: ColumnSlice]
        do { set = try ColumnSet.decode(bytes, base: 0) } catch { throw ColumnReadError(message: "column layout: \(error.message)") }
        for key in set.keys where ColumnID(rawValue: key) == nil || (key == ColumnID.opOriginsStored.rawValue && !structures) {
            throw ColumnReadError(message: "unknown column \(key) (written by a newer version?)")
        }
        func col(_ id: ColumnID) -> ColumnSlice { set[id.rawValue] ?? ColumnSlice(bytes: [], base: 0) }
        func uints(_ id: ColumnID, _ n: Int) throws(ColumnReadError) -> [UInt64] {
            do { return try UIntColumnDecoder.decode(col(id).bytes, base: 0, count: n) } catch { throw ColumnReadError(message: "column \(id): \(error.message)") }
        }
        func deltas(_ id: ColumnID, _ n: Int) throws(ColumnReadError) -> [Int64] {
            do { return try DeltaColumnDecoder.decode(col(id).bytes, base: 0, count: n) } catch { throw ColumnReadError(message: "column \(id): \(error.message)") }
        }
        func uintRuns(_ id: ColumnID, _ n: Int) throws(ColumnReadError) -> [ColumnRun<UInt64>] {
            do { return try UIntColumnDecoder.decodeRuns(col(id).bytes, base: 0, count: n) } catch { throw ColumnReadError(message: "column \(id): \(error.message)") }
        }
        func deltaRuns(_ id: ColumnID, _ n: Int) throws(ColumnReadError) -> [DeltaRun] {
            do { return try DeltaColumnDecoder.decodeRuns(col(id).bytes, base: 0, count: n) } catch { throw ColumnReadError(message: "column \(id): \(error.message)") }
        }
        func bools(_ id: ColumnID, _ n: Int) throws(ColumnReadError) -> [Bool] {
            do { return try BoolColumnDecoder.decode(col(id).bytes, base: 0, count: n) } catch { throw ColumnReadError(message: "column \(id): \(error.message)") }
        }
        func small(_ v: UInt64, _ what: String, below limit: Int) throws(ColumnReadError) -> Int {
            guard v < UInt64(limit) else { throw ColumnReadError(message: "\(what) \(v) is out of range (< \(limit))") }
            return Int(v)
        }
        /// The sum of `xs`, at most `limit`: counts of dependencies and predecessors at most the
        /// file's row budget, byte lengths at most the inflated columns' size.
        func sum(_ xs: [UInt64], _ what: String, limit: Int) throws(ColumnReadError) -> Int {
            try sum(xs.lazy.map { ColumnRun(value: $0, count: 1) }, what, limit: limit)
        }
        func sum(_ runs: some Sequence<ColumnRun<UInt64>>, _ what: String, limit: Int) throws(ColumnReadError) -> Int {
            var total: UInt64 = 0
            for r in runs {
                let (part, o1) = r.value.multipliedReportingOverflow(by: UInt64(r.count))
                let (s, o2) = total.addingReportingOverflow(part)
                guard !o1, !o2, s <= UInt64(limit) else { throw ColumnReadError(message: "\(what) add up to more than this file can hold") }
                total = s
            }
            return Int(total)
        }
        // Changes, a column at a time: each column is read as runs of equal values (or, for
        // sequence numbers and times, equal steps), checked a run at a time, and folded into
        // the run-length list (`WireChanges.Builder`). A typing session of thousands of
        // changes is a run in every column but lengths, so this costs the runs, not the changes.
        let n = changeCount
        let replicaCount = UInt64(block.replicas.count), stringCount = UInt64(strings.count), firstRow = block.firstRow
        var builder = WireChanges.Builder(count: n)
        // Each column lists where a change does not continue the one before in that column (the
        // list's run rule); the builder then visits only runs' first changes, in order.
        var breaks: [Int] = []
        /// Appends the positions `from ..< to` (those after the first change) to `breaks`.
        func breakEach(_ from: Int, _ to: Int) { if max(from, 1) < to { breaks.append(contentsOf: max(from, 1) ..< to) } }
        do {
            // Decoded first: the column decoder bounds `n` by the column's bytes before anything is allocated.
            let runs = try uintRuns(.changeReplica, n)
            breaks.removeAll(keepingCapacity: true)
            var i = 0
            for (k, r) in runs.enumerated() {
                guard r.value < replicaCount else { throw ColumnReadError(message: "change replica \(r.value) is out of range (< \(replicaCount))") }
                if k > 0 && r.value != runs[k - 1].value { breaks.append(i) }
                i += r.count
            }
            var cursor = RunCursor(runs)
            builder.column(breaks: breaks) { c, i in c.replica = Int(cursor.value(at: i)) }
        }
        do {
            let runs = try deltaRuns(.changeSeq, n)
            breaks.removeAll(keepingCapacity: true)
            var i = 0
            for (k, r) in runs.enumerated() {
                // Equally spaced: the ends bound the rest.
                if min(r.first, r.last) < 1 || max(r.first, r.last) > Int64(UInt32.max) {
                    let bad = (0 ..< r.count).first { r.value($0) < 1 || r.value($0) > Int64(UInt32.max) } ?? 0
                    throw ColumnReadError(message: "change at row \(firstRow + i + bad): sequence number \(r.value(bad)) out of range")
                }
                if k > 0 && r.first != runs[k - 1].last + 1 { breaks.append(i) }
                if r.step != 1 { breakEach(i + 1, i + r.count) }
                i += r.count
            }
            var cursor = DeltaCursor(runs)
            builder.column(breaks: breaks) { c, i in c.seq = UInt32(cursor.value(at: i)) }
        }
        do {
            let runs = try uintRuns(.changeLength, n)
            var units = 0, i = 0
            var lengths: [UInt32] = []
            lengths.reserveCapacity(n)
            for r in runs {
                guard r.value >= 1 && r.value <= UInt64(unitCount), WireChange.fits(Int(r.value)) else {
                    throw ColumnReadError(message: "change at row \(firstRow + i): length \(r.value) out of range")
                }
                let (part, o1) = Int(r.value).multipliedReportingOverflow(by: r.count)
                let (total, o2) = units.addingReportingOverflow(part)
                guard !o1, !o2 else { throw ColumnReadError(message: "changes cover more op units than the block says (\(unitCount))") }
                units = total
                lengths.append(contentsOf: repeatElement(UInt32(r.value), count: r.count))
                i += r.count
            }
            guard units == unitCount else { throw ColumnReadError(message: "changes cover \(units) op units, block says \(unitCount)") }
            builder.setLengths(lengths)
        }
        var depRows: [Int32] = []
        do {
            // Rows are kept in 32 bits; a file this large could not be loaded anyway.
            guard firstRow + n - 1 <= WireBlock.maxRow else { throw ColumnReadError(message: "the block is too large (a row passes 2^31)") }
            let depCountRuns = try uintRuns(.changeDepCount, n)
            let depTotal = try sum(depCountRuns, "dependency counts", limit: maxRows)
            let distRuns = try uintRuns(.changeDepDistance, depTotal)
            depRows.reserveCapacity(depTotal)
            breaks.removeAll(keepingCapacity: true)
            var dist = RunReader(distRuns)
            var i = 0
            for r in depCountRuns {
                if r.value == 1 {
                    // Changes with one dependency each: a run of equal distances at a time.
                    var left = r.count
                    while left > 0 {
                        let (d, m) = dist.take(atMost: left)
                        let row = firstRow + i
                        // Rows grow along the chunk: its first row bounds the distance.
                        guard d >= 1 && d <= UInt64(row) else { throw ColumnReadError(message: "change at row \(row): dependency \(d) rows back lies before the start of the file (missing dependency)") }
                        depRows.appendRows(row - Int(d) ..< row - Int(d) + m)
                        if d != 1 { breakEach(i, i + m) }
                        i += m
                        left -= m
                    }
                    guard WireChange.fits(depRows.count) else { throw ColumnReadError(message: "change at row \(firstRow + i - 1): the block is too large (a position passes 2^32)") }
                    continue
                }
                for _ in 0 ..< r.count {
                    let row = firstRow + i
                    let depStart = depRows.count
                    for _ in 0 ..< r.value {
                        let d = dist.take(atMost: 1).value
                        guard d >= 1 && d <= UInt64(row) else { throw ColumnReadError(message: "change at row \(row): dependency \(d) rows back lies before the start of the file (missing dependency)") }
                        depRows.append(Int32(row - Int(d)))
                    }
                    // A few changes (merges) have a handful of dependencies, checked pairwise.
                    if r.value > 1 {
                        let deps = depRows[depStart...]
                        let repeated = deps.count <= 8 ? deps.indices.contains { j in deps[(j + 1)...].contains(deps[j]) } : Set(deps).count != deps.count
                        guard !repeated else { throw ColumnReadError(message: "change at row \(row): lists a dependency twice") }
                    }
                    guard WireChange.fits(depRows.count) else { throw ColumnReadError(message: "change at row \(row): the block is too large (a position passes 2^32)") }
                    if i > 0 { breaks.append(i) }
                    i += 1
                }
            }
            // A run's first change: its dependencies start after those of every change before it.
            var cursor = SumCursor(depCountRuns)
            builder.column(breaks: breaks) { c, i in
                c.depStart = cursor.sum(before: i)
                c.depCount = cursor.value(at: i)
            }
        }
        do {
            let runs = try deltaRuns(.changeTime, n)
            breaks.removeAll(keepingCapacity: true)
            var i = 0
            for (k, r) in runs.enumerated() {
                if max(r.first.magnitude, r.last.magnitude) > Self.maxTime.magnitude {
                    let bad = (0 ..< r.count).first { r.value($0).magnitude > Self.maxTime.magnitude } ?? 0
                    throw ColumnReadError(message: "change at row \(firstRow + i + bad): time \(r.value(bad)) is out of range")
                }
                if k > 0 && r.first != runs[k - 1].last { breaks.append(i) }
                if r.step != 0 { breakEach(i + 1, i + r.count) }
                i += r.count
            }
            var cursor = DeltaCursor(runs)
            builder.column(breaks: breaks) { c, i in c.time = cursor.value(at: i) }
        }
        do {
            let authorRuns = try uintRuns(.changeAuthor, n), messageRuns = try uintRuns(.changeMessage, n)
            // The first change with an index out of range (its author checked before its message).
            func firstBad(_ runs: [ColumnRun<UInt64>], _ bad: (UInt64) -> Bool) -> (at: Int, value: UInt64)? {
                var i = 0
                for r in runs {
                    if bad(r.value) { return (i, r.value) }
                    i += r.count
                }
                return nil
            }
            let badAuthor = firstBad(authorRuns) { $0 >= stringCount }, badMessage = firstBad(messageRuns) { $0 > stringCount }
            if let a = badAuthor, a.at <= badMessage?.at ?? .max { throw ColumnReadError(message: "author index \(a.value) is out of range (< \(stringCount))") }
            if let m = badMessage { throw ColumnReadError(message: "message index \(m.value - 1) is out of range (< \(stringCount))") }
            // Where either changes: the two columns' run starts, merged.
            breaks.removeAll(keepingCapacity: true)
            var a = 0, m = 0, aStart = 0, mStart = 0
            while a < authorRuns.count || m < messageRuns.count {
                let next = min(a < authorRuns.count ? aStart : .max, m < messageRuns.count ? mStart : .max)
                let changed = (a < authorRuns.count && aStart == next && a > 0 && authorRuns[a].value != authorRuns[a - 1].value)
                    || (m < messageRuns.count && mStart == next && m > 0 && messageRuns[m].value != messageRuns[m - 1].value)
                if changed { breaks.append(next) }
                if a < authorRuns.count && aStart == next { aStart += authorRuns[a].count; a += 1 }
                if m < messageRuns.count && mStart == next { mStart += messageRuns[m].count; m += 1 }
            }
            // Wire string k is block string k + 1 (block string 0 is the empty string).
            var authors = RunCursor(authorRuns), messages = RunCursor(messageRuns)
            builder.column(breaks: breaks) { c, i in c.author = Int(authors.value(at: i)) + 1; c.message = Int(messages.value(at: i)) }
        }
        do {
            let extraRuns = try uintRuns(.changeExtraLength, n)
            let extraTotal = try sum(extraRuns, "extra field lengths", limit: bytes.count)
            guard col(.changeExtra).bytes.count == extraTotal else { throw ColumnReadError(message: "column changeExtra holds \(col(.changeExtra).bytes.count) bytes, expected \(extraTotal)") }
            guard WireChange.fits(extraTotal) else { throw ColumnReadError(message: "the block is too large (a position passes 2^32)") }
            breaks.removeAll(keepingCapacity: true)
            var i = 0
            for r in extraRuns {
                if r.value != 0 { breakEach(i, i + r.count) }
                i += r.count
            }
            var cursor = SumCursor(extraRuns)
            builder.column(breaks: breaks) { c, i in
                c.extraStart = cursor.sum(before: i)
                c.extraCount = cursor.value(at: i)
            }
        }
        let changes = builder.finish()
        block.strings = [""] + strings
        block.extraBytes = Array(col(.changeExtra).bytes)
        block.changes = changes
        block.depRows = depRows
        // Ops: read kinds and lengths to learn how many rows each sparse column has.
        let opLengthBytes = col(.opKind).bytes.count + col(.opLength).bytes.count
        _ = opLengthBytes
        // The number of op rows is not stored; it is the rows the kind column holds, bounded by units.
        let opRows = try countRows(col(.opKind).bytes, max: unitCount)
        guard opRows <= maxOps else {
            throw ColumnReadError(message: "the block holds \(opRows) ops, more than a \(fileSize)-byte file can hold (at most \(maxRows) in all; \(maxOps) left for this block)")
        }
        let kinds = try uints(.opKind, opRows)
        let rows = kinds.count
        let lengths = try uints(.opLength, rows)
        var noteRows = 0, ref1Rows = 0, ref2Rows = 0, revRows = 0, valueRows = 0, predRows = 0, prioRows = 0, createdRows = 0, payloadRows = 0
        // Which insertText ops store their origins (all of them before version 3).
        var insertRows = 0
        for k in kinds where k == OpKind.insertText.rawValue { insertRows += 1 }
        let originsStored = structures ? try bools(.opOriginsStored, insertRows) : []
        var storedInserts = 0
        for stored in originsStored where stored { storedInserts += 1 }
        if structures { ref1Rows -= insertRows - storedInserts; ref2Rows -= insertRows - storedInserts }
        for k in kinds {
            switch OpKind(rawValue: k) {
            case .setNotebookTitle: valueRows += 1; predRows += 1
            case .createNote: ref1Rows += 1; ref2Rows += 1; createdRows += 1
            case .setNoteTitle: noteRows += 1; valueRows += 1; predRows += 1
            case .insertText: noteRows += 1; ref1Rows += 1; ref2Rows += 1
            case .deleteText: noteRows += 1; ref1Rows += 1; revRows += 1
            case .addTag: noteRows += 1; valueRows += 1
            case .removeTag: noteRows += 1; valueRows += 1; predRows += 1
            case .setPriority: noteRows += 1; prioRows += 1; predRows += 1
            case .deleteNote, .restoreNote: noteRows += 1; predRows += 1
            case .moveNote: noteRows += 1; ref1Rows += 1; ref2Rows += 1; predRows += 1
            case nil: payloadRows += 1
            }
        }
        let noteR = try uints(.opNoteReplica, noteRows), noteC = try deltas(.opNoteCounter, noteRows)
        // A reference's counter is stored only when it names something (its replica is not 0).
        func named(_ replicas: [UInt64]) -> Int {
            var n = 0
            for r in replicas where r != 0 { n += 1 }
            return n
        }
        let r1R = try uints(.opRef1Replica, ref1Rows), r1C = try deltas(.opRef1Counter, named(r1R))
        let r2R = try uints(.opRef2Replica, ref2Rows), r2C = try deltas(.opRef2Counter, named(r2R))
        let rev = try bools(.opReversed, revRows)
        let valueLen = try uints(.opValueLength, valueRows)
        let valueTotal = try sum(valueLen, "value lengths", limit: bytes.count)
        guard col(.opValue).bytes.count == valueTotal else { throw ColumnReadError(message: "column opValue holds \(col(.opValue).bytes.count) bytes, expected \(valueTotal)") }
        let predCount = try uints(.opPredCount, predRows)
        let predTotal = try sum(predCount, "predecessor counts", limit: maxPredecessors)
        let predR = try uints(.opPredReplica, predTotal), predC = try deltas(.opPredCounter, predTotal)
        let prio = try uints(.opPriority, prioRows), created = try deltas(.opCreated, createdRows)
        let payloadLen = try uints(.opPayloadLength, payloadRows)
        let payloadTotal = try sum(payloadLen, "payload lengths", limit: bytes.count)
        guard col(.opPayload).bytes.count == payloadTotal else { throw ColumnReadError(message: "column opPayload holds \(col(.opPayload).bytes.count) bytes, expected \(payloadTotal)") }
        guard let stored = decodeScalars(col(.opText).bytes) else { throw ColumnReadError(message: "inserted text is not valid UTF-8") }
        if let live = liveScalars {
            // Text in document order: which character each insert made is known once the block
            // is replayed (`BlockReplayer.fillText`); until then, placeholders.
            guard live <= unitCount else { throw ColumnReadError(message: "the state section holds more text than the block's ops insert") }
            block.deadText = stored
            if placeholders {
                block.text = [Unicode.Scalar](repeating: .placeholder, count: live + stored.count)
            } else {
                block.placeholderCount = live + stored.count
            }
        } else if textLater {
            block.deadText = stored
        } else {
            block.text = stored
        }
        let textCount = textLater ? Int.max : block.textCount

        var ri = 0, vi = 0, pi = 0, ppos = 0, pri = 0, ci = 0, pli = 0
        var valuePos = col(.opValue).bytes.startIndex, payloadPos = col(.opPayload).bytes.startIndex, textPos = 0
        let nReplicas = block.replicas.count
        func id(_ r: UInt64, _ c: Int64, _ what: String) throws(ColumnReadError) -> LocalID {
            try IDColumns.id(r, c, replicas: nReplicas, what)
        }
        // Read a row at a time through local values, not nested functions: a nested function's
        // captured counters cost about 150 instructions a read (copy A reads 40,000 of them).
        var notes = IDColumns(replicas: noteR, counters: noteC, replicaCount: nReplicas)
        var refs1 = IDColumns(replicas: r1R, counters: r1C, replicaCount: nReplicas)
        var refs2 = IDColumns(replicas: r2R, counters: r2C, replicaCount: nReplicas)
        let valueBytes = col(.opValue).bytes   // looked up once, not per value
        func value() throws(ColumnReadError) -> String {
            let len = Int(valueLen[vi]); vi += 1
            let bytes = valueBytes[valuePos ..< valuePos + len]
            valuePos += len
            guard let s = decodeString(bytes) else { throw ColumnReadError(message: "a title or tag is not valid UTF-8") }
            return s
        }
        func preds() throws(ColumnReadError) -> [LocalID] {
            let k = Int(predCount[pi]); pi += 1
            var out: [LocalID] = []
            for _ in 0 ..< k { out.append(try id(predR[ppos], predC[ppos], "overwritten value")); ppos += 1 }
            return out
        }
        var lv = 0, insertIndex = 0
        // Exactly: a load's log takes a base block's array as its own (`OpLog.beginAdoptingOps`)
        // and never appends to it (`OpStore` keeps appended ops apart).
        block.ops.reserveCapacity(rows)
        for row in 0 ..< rows {
            // Compared as read (64 bits), before it is made an Int.
            let stored = lengths[row]
            guard stored >= 1 && stored <= UInt64(min(unitCount - lv, Op.maxLength)) else { throw ColumnReadError(message: "op \(row): length \(stored) out of range") }
            let len = Int(stored)
            let body: OpBody
            switch OpKind(rawValue: kinds[row]) {
            case .setNotebookTitle: body = .setNotebookTitle(try value(), preds: try preds())
            case .createNote:
                let l = try refs1.nextReference(), r = try refs2.nextReference()
                guard created[ci].magnitude <= Self.maxTime.magnitude else { throw ColumnReadError(message: "op \(row): creation time \(created[ci]) is out of range") }
                body = .createNote(originLeft: l, originRight: r, created: created[ci]); ci += 1
            case .setNoteTitle: let n = try notes.nextNote(); body = .setNoteTitle(note: n, try value(), preds: try preds())
            case .insertText:
                let n = try notes.nextNote()
                let stated = !structures || originsStored[insertIndex]
                insertIndex += 1
                let l = stated ? try refs1.nextReference() : LocalID.unstated, r = stated ? try refs2.nextReference() : LocalID.unstated
                guard textPos + len <= textCount else {
                    if liveScalars != nil { throw ColumnReadError(message: "the state section and the text column hold \(textCount) characters, fewer than the ops insert") }
                    throw ColumnReadError(message: "op \(row): inserted text runs past the text column")
                }
                body = .insertText(note: n, originLeft: l, originRight: r, contentStart: textPos)
                textPos += len
            case .deleteText:
                let n = try notes.nextNote(), t = try refs1.nextReference()
                guard !t.isNone else { throw ColumnReadError(message: "op \(row): delete has no target") }
                body = .deleteText(note: n, target: t, reversed: rev[ri]); ri += 1
            case .addTag: let n = try notes.nextNote(); body = .addTag(note: n, try value())
            case .removeTag: let n = try notes.nextNote(); body = .removeTag(note: n, try value(), removes: try preds())
            case .setPriority:
                let n = try notes.nextNote()
                guard let p = Priority.allCases.first(where: { UInt64($0.rank) == prio[pri] }) else { throw ColumnReadError(message: "op \(row): priority \(prio[pri]) unknown") }
                pri += 1
                body = .setPriority(note: n, p, preds: try preds())
            case .deleteNote: let n = try notes.nextNote(); body = .deleteNote(note: n, preds: try preds())
            case .restoreNote: let n = try notes.nextNote(); body = .restoreNote(note: n, preds: try preds())
            case .moveNote:
                let n = try notes.nextNote(), l = try refs1.nextReference(), r = try refs2.nextReference()
                body = .moveNote(note: n, originLeft: l, originRight: r, preds: try preds())
            case nil:
                let plen = Int(payloadLen[pli]); pli += 1
                body = .unknown(kind: kinds[row], payload: Array(col(.opPayload).bytes[payloadPos ..< payloadPos + plen]))
                payloadPos += plen
            }
            if case .insertText = body {} else if case .deleteText = body {} else if case .unknown = body {} else {
                guard len == 1 else { throw ColumnReadError(message: "op \(row): length \(len), this kind of op has length 1") }
            }
            block.ops.append(Op(lv: lv, length: len, body: body))
            lv += len
        }
        guard lv == unitCount else { throw ColumnReadError(message: "ops cover \(lv) units, block says \(unitCount)") }
        textReached?.pointee = textPos
        guard textLater || textPos == textCount else {
            if liveScalars != nil { throw ColumnReadError(message: "the state section and the text column hold \(textCount) characters, the ops insert \(textPos)") }
            throw ColumnReadError(message: "text column holds \(textCount - textPos) characters no op inserts")
        }
        return predTotal
    }

    /// How many values a uint RLE column holds (walks runs without allocating), at most `max`.
    private static func countRows(_ bytes: ArraySlice<UInt8>, max: Int) throws(ColumnReadError) -> Int {
        var reader = ByteReader(bytes, base: 0)
        var total = 0
        do {
            while !reader.isAtEnd {
                let n = try reader.sleb()
                if n > 0 {
                    _ = try reader.uleb()
                    total += Int(n)
                } else if n < 0 && n > Int64.min {
                    let k = Int(-n)
                    guard k <= max else { throw ColumnReadError(message: "column opKind: run longer than the block's op units") }
                    for _ in 0 ..< k { _ = try reader.uleb() }
                    total += k
                } else {
                    throw ColumnReadError(message: "column opKind: empty run")
                }
                guard total <= max else { throw ColumnReadError(message: "column opKind: more ops than op units") }
            }
        } catch let e as ColumnReadError { throw e } catch {
            throw ColumnReadError(message: "column opKind: \(error)")
        }
        return total
    }
}

/// Reads a column's runs at ascending positions (each read at or after the one before), as
/// `WireChanges.Builder` visits changes.
private struct RunCursor<Value: Equatable & Sendable> {
    private let runs: [ColumnRun<Value>]
    private var run = 0
    /// The position of `runs[run]`'s first value.
    private var start = 0
    init(_ runs: [ColumnRun<Value>]) { self.runs = runs }

    @inline(__always) mutating func value(at i: Int) -> Value {
        while start + runs[run].count <= i { start += runs[run].count; run += 1 }
        return runs[run].value
    }
}

/// `RunCursor` for a delta column's runs.
private struct DeltaCursor {
    private let runs: [DeltaRun]
    private var run = 0, start = 0
    init(_ runs: [DeltaRun]) { self.runs = runs }

    @inline(__always) mutating func value(at i: Int) -> Int64 {
        while start + runs[run].count <= i { start += runs[run].count; run += 1 }
        return runs[run].value(i - start)
    }
}

/// `RunCursor` for a column of counts, that also gives the sum of the counts before a
/// position (where a change's dependencies or extra bytes start). The column's total was
/// checked against a limit, so no sum overflows.
private struct SumCursor {
    private let runs: [ColumnRun<UInt64>]
    private var run = 0, start = 0, before = 0
    init(_ runs: [ColumnRun<UInt64>]) { self.runs = runs }

    @inline(__always) private mutating func seek(_ i: Int) {
        while start + runs[run].count <= i {
            before += Int(runs[run].value) * runs[run].count
            start += runs[run].count
            run += 1
        }
    }
    @inline(__always) mutating func value(at i: Int) -> Int { seek(i); return Int(runs[run].value) }
    @inline(__always) mutating func sum(before i: Int) -> Int { seek(i); return before + Int(runs[run].value) * (i - start) }
}

/// Takes a column's values in order, a run (or the part of one that is wanted) at a time.
private struct RunReader {
    private let runs: [ColumnRun<UInt64>]
    private var run = 0
    /// Values of `runs[run]` already taken.
    private var used = 0
    init(_ runs: [ColumnRun<UInt64>]) { self.runs = runs }

    /// The next value and how many times it repeats, at most `limit` (≥ 1). The caller takes
    /// no more values than the column holds (it was decoded for exactly the sum of the counts).
    @inline(__always) mutating func take(atMost limit: Int) -> (value: UInt64, count: Int) {
        let r = runs[run]
        let m = min(limit, r.count - used)
        used += m
        if used == r.count { run += 1; used = 0 }
        return (r.value, m)
    }
}
