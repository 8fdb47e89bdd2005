#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Salvager {
    // MARK: Deciding which changes to keep

    /// Assigns rows: the base block starts at row 0, append blocks at their `firstRow`. Blocks that
    /// cannot be placed are left out whole: a second base block starts another notebook (or
    /// another copy of this one), which every block after it belongs to until the next base block;
    /// append blocks before the base block or whose rows overlap earlier blocks fit nowhere.
    /// Gaps between placed blocks are rows lost in damaged bytes.
    mutating func numberRows() {
        var placed: [Trusted] = []
        var nextRow = 0
        var base: WireBlock?
        var notebookPart: Int?, orphanPart: Int?, unplacedPart: Int?
        func leaveOut(_ t: Trusted, in part: inout Int?, kind: SalvageLeftOut.Kind, problem: String) {
            regions[t.region].problem = problem
            let p: Int
            if let existing = part {
                p = existing
                parts[p].range = parts[p].range.lowerBound ..< max(parts[p].range.upperBound, t.raw.end)
            } else {
                parts.append(SalvageLeftOut(kind: kind, range: t.raw.offset ..< t.raw.end, documentID: nil, changes: [], onItsOwn: nil))
                p = parts.count - 1
                part = p
            }
            leftOutBlocks.append(LeftOutBlock(trusted: t, part: p))
        }
        for t in trusted {
            if t.block.kind == .base, let mainBase = base {
                // Another notebook, or another copy of this one, glued on: it runs to the next base block.
                if let p = notebookPart { parts[p].range = parts[p].range.lowerBound ..< t.raw.offset }
                let same = t.block.documentID == mainBase.documentID
                var part: Int?
                leaveOut(t, in: &part, kind: same ? .copy : .otherDocument,
                         problem: same ? "it starts a second copy of this notebook" : "it starts another notebook (id \(t.block.documentID.map { $0.uuidString.lowercased() } ?? "unknown"))")
                if let p = part {
                    parts[p].range = t.raw.offset ..< bytes.count
                    parts[p].documentID = t.block.documentID
                }
                notebookPart = part
                continue
            }
            if let p = notebookPart {
                regions[t.region].problem = "part of the \(parts[p].kind == .copy ? "copy of this notebook" : "other notebook") that starts at offset \(parts[p].range.lowerBound)"
                leftOutBlocks.append(LeftOutBlock(trusted: t, part: p))
                continue
            }
            if t.block.kind == .append && base == nil {
                leaveOut(t, in: &orphanPart, kind: .orphanAppends, problem: "an append block whose base block is lost: its history is lost")
                continue
            }
            if t.block.kind == .append && t.block.firstRow < nextRow {
                leaveOut(t, in: &unplacedPart, kind: .unplacedAppends,
                         problem: "its changes are numbered from row \(t.block.firstRow), but the blocks before it already hold \(nextRow) rows")
                continue
            }
            if t.block.kind == .base { base = t.block; baseOffset = t.raw.offset }
            let first = t.block.kind == .base ? 0 : t.block.firstRow
            if first > nextRow { unreadableRows.append(nextRow ..< first) }
            let blockIndex = placed.count
            for i in 0 ..< t.block.changes.count { changeAtRow[first + i] = ChangeKey(block: blockIndex, index: i) }
            placed.append(t)
            nextRow = first + t.block.changes.count
        }
        // Damaged bytes inside a left-out notebook or copy are its loss, not this notebook's.
        let notebooks = parts.filter { $0.kind == .otherDocument || $0.kind == .copy }.map(\.range)
        func ours(_ r: SalvageRegion) -> Bool { r.kind == .damaged && r.changeCount != 0 && !notebooks.contains { $0.contains(r.offset) } }
        // Damaged bytes after the last placed block may hold changes that nothing counts (unless they cannot hold one).
        if let last = placed.last, regions.contains(where: { ours($0) && $0.offset >= last.raw.end }) {
            uncounted.append(regions.last.map(ours) == true ? .truncated : .noLaterBlock)
        }
        // Damaged bytes before the base block held the start of some notebook (or junk): the first
        // append block after them says how many rows at least.
        if regions.contains(where: { ours($0) && $0.offset < baseOffset }) {
            let orphans = leftOutBlocks.filter { parts[$0.part].kind == .orphanAppends }
            let firstRow = orphans.first.map { $0.trusted.block.firstRow } ?? 0
            orphansAreOurs = Self.continues(orphans.map(\.trusted), placed, bytes)
            start = orphansAreOurs ? .earlierCopy : .unknownNotebook
            let before = orphans.first.map { o in regions.filter { $0.offset < o.trusted.raw.offset } } ?? []
            if orphansAreOurs, before.count == 1, before[0].kind == .damaged, before[0].offset == 0,
               !regions.contains(where: { ours($0) && $0.offset > 0 && $0.offset < baseOffset }) {
                // The first append block after them says (by its checksum of every byte before it and
                // its first row) that these bytes were the recovered notebook's first rows, byte for
                // byte: the output holds those changes.
                regions[0].changeCount = firstRow
                regions[0].alreadyRecovered = firstRow
                regions[0].problem = (regions[0].problem ?? "") + "; the append block after them continues the recovered blocks' bytes, "
                    + "so they held an earlier copy of this notebook's first \(firstRow == 1 ? "change" : "\(firstRow) changes"), which the output holds"
            } else {
                uncounted.insert(.beforeBase, at: 0)
                rowsBeforeBase = firstRow
            }
        } else if let p = parts.firstIndex(where: { $0.kind == .orphanAppends }) {
            orphansAreOurs = Self.continues(leftOutBlocks.filter { $0.part == p }.map(\.trusted), placed, bytes)
            start = orphansAreOurs ? .earlierCopy : .unknownNotebook
        }
        trusted = placed
    }

    /// Whether the first of `orphans` continues bytes identical to the placed blocks: its
    /// `previousCRC` and `firstRow` are those of the placed blocks up to some block, read as one file.
    static func continues(_ orphans: [Trusted], _ placed: [Trusted], _ bytes: [UInt8]) -> Bool {
        guard let first = orphans.first else { return false }
        var crc: UInt32 = 0, rows = 0
        for t in placed {
            if t.block.kind == .append && (t.block.previousCRC != crc || t.block.firstRow != rows) { return false }
            crc = CRC32.checksum(bytes[t.raw.offset ..< t.raw.end], initial: crc)
            rows += t.block.changes.count
            if first.block.previousCRC == crc && first.block.firstRow == rows { return true }
        }
        return false
    }

    func row(of key: ChangeKey) -> Int {
        let b = trusted[key.block].block
        return (b.kind == .base ? 0 : b.firstRow) + key.index
    }

    func changeID(_ key: ChangeKey) -> ChangeID {
        let b = trusted[key.block].block
        let c = b.changes[key.index]
        return ChangeID(replica: b.replicas[c.replica], seq: c.seq)
    }

    /// Keeps each change whose history is complete, in row order.
    func decideFates() -> [ChangeKey: Fate] {
        var fates: [ChangeKey: Fate] = [:]
        var nextSeq: [ReplicaID: UInt32] = [:]
        var lostSeq: [ReplicaID: ChangeID] = [:]
        let genesis = trusted.first?.block.genesis
        for (bi, t) in trusted.enumerated() {
            for (i, c) in t.block.changes.enumerated() {
                let key = ChangeKey(block: bi, index: i)
                let r = row(of: key)
                let id = ChangeID(replica: t.block.replicas[c.replica], seq: c.seq)
                let expected = nextSeq[id.replica, default: 1]
                var reason: String?
                if r == 0 {
                    if id != genesis || c.depCount > 0 { reason = "it is not the document's first change" }
                } else if c.depCount == 0 {
                    reason = "it has no dependencies (a second origin)"
                }
                if reason == nil {
                    for d in t.block.deps(of: i) {
                        if let dk = changeAtRow[d] {
                            if case .dropped = fates[dk] ?? .dropped("") { reason = "it depends on change \(changeID(dk)), which was dropped"; break }
                        } else {
                            reason = "it depends on the change at row \(d), which was in the damaged bytes"
                            break
                        }
                    }
                }
                if reason == nil && id.seq != expected {
                    if id.seq > expected {
                        let lost = ChangeID(replica: id.replica, seq: expected)
                        reason = lostSeq[id.replica] != nil ? "its replica's earlier change \(lost) was dropped" : "its replica's earlier change \(lost) was in the damaged bytes"
                    } else {
                        reason = "it repeats its replica's change \(id)"
                    }
                }
                if let reason {
                    fates[key] = .dropped(reason)
                    if id.seq >= expected, lostSeq[id.replica] == nil { lostSeq[id.replica] = id }
                } else {
                    fates[key] = .kept
                    nextSeq[id.replica] = expected + 1
                }
            }
        }
        return fates
    }

    /// Drops every change whose history lost a change because of `fates` (after a replay failure).
    func propagateDrops(_ fates: [ChangeKey: Fate]) -> [ChangeKey: Fate] {
        var out = fates
        var brokenReplicas: [ReplicaID: ChangeID] = [:]
        for key in fates.keys.sorted() {
            let t = trusted[key.block].block
            let id = changeID(key)
            if case .dropped = out[key] ?? .kept {
                if brokenReplicas[id.replica] == nil { brokenReplicas[id.replica] = id }
                continue
            }
            if let lost = brokenReplicas[id.replica] {
                out[key] = .dropped("its replica's change \(lost) was dropped before it")
                continue
            }
            for d in t.deps(of: key.index) {
                if let dk = changeAtRow[d], case .dropped = out[dk] ?? .kept {
                    out[key] = .dropped("it depends on change \(changeID(dk)), which was dropped")
                    brokenReplicas[id.replica] = id
                    break
                }
            }
        }
        return out
    }
}
