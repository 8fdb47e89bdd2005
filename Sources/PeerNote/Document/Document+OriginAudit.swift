#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One list's structure against its origins: how many elements and runs it has, and how many of
/// its elements have origins that `DerivedOrigins` does not give (which a format storing the
/// structure would have to store).
@_spi(Diagnostics) public struct OriginAudit: Sendable, Equatable {
    /// Elements ever inserted, tombstones included.
    public var elements = 0
    /// Maximal runs of elements with consecutive ids of one replica, in list order, all
    /// deleted or all not.
    public var runs = 0
    /// Elements whose left origin is not the derived one.
    public var leftExceptions = 0
    /// Elements whose right origin is not the derived one.
    public var rightExceptions = 0
    /// Runs (as `runs` counts them) holding at least one exception.
    public var runsWithExceptions = 0
    /// The runs in a draft encoding (replica index, counter offset, length and deleted flag as
    /// LEB128 numbers, one run after another), deflated as the file's sections are.
    public var structureBytes = 0

    public static func += (a: inout OriginAudit, b: OriginAudit) {
        a.elements += b.elements
        a.runs += b.runs
        a.leftExceptions += b.leftExceptions
        a.rightExceptions += b.rightExceptions
        a.runsWithExceptions += b.runsWithExceptions
        a.structureBytes += b.structureBytes
    }
}

extension ListCRDT {
    /// Compares this list's origins with the ones its structure gives, `rank(id)` being an
    /// element's position in the log's order.
    func originAudit(rank: (LocalID) -> Int) -> OriginAudit {
        let elements = elementsWithOrigins()
        let ranks = elements.map { rank($0.id) }
        let derived = DerivedOrigins.nearestEarlier(ranks)
        var audit = OriginAudit()
        audit.elements = elements.count
        var draft: [UInt8] = []
        var runHasException = false
        var previous: (id: LocalID, deleted: Bool)?
        func leb(_ v: Int) {
            var v = UInt(bitPattern: v)
            repeat {
                let byte = UInt8(v & 0x7F)
                v >>= 7
                draft.append(v == 0 ? byte : byte | 0x80)
            } while v != 0
        }
        var runStart = LocalID.none
        var runLength = 0
        var runDeleted = false
        var lastCounterOfAgent: [UInt32: Int] = [:]
        func closeRun() {
            guard runLength > 0 else { return }
            audit.runs += 1
            if runHasException { audit.runsWithExceptions += 1 }
            // A run's counter as an offset from where the same replica's previous run ended.
            let base = lastCounterOfAgent[runStart.agent] ?? 0
            leb(Int(runStart.agent))
            let delta = Int(runStart.counter) - base
            leb(delta >= 0 ? delta << 1 : (-delta << 1) | 1)
            leb(runLength << 1 | (runDeleted ? 1 : 0))
            lastCounterOfAgent[runStart.agent] = Int(runStart.counter) + runLength
        }
        for (i, e) in elements.enumerated() {
            let continues = previous.map { $0.id.agent == e.id.agent && Int($0.id.counter) + 1 == Int(e.id.counter) && $0.deleted == e.deleted } ?? false
            if !continues {
                closeRun()
                runStart = e.id
                runLength = 0
                runDeleted = e.deleted
                runHasException = false
            }
            runLength += 1
            let derivedLeft = derived.left[i] < 0 ? LocalID.none : elements[derived.left[i]].id
            let derivedRight = derived.right[i] < 0 ? LocalID.none : elements[derived.right[i]].id
            if derivedLeft != e.left { audit.leftExceptions += 1; runHasException = true }
            if derivedRight != e.right { audit.rightExceptions += 1; runHasException = true }
            previous = (e.id, e.deleted)
        }
        closeRun()
        audit.structureBytes = draft.isEmpty ? 0 : Deflate.compress(draft[...]).count
        return audit
    }
}

extension Document {
    /// Every list of this document (the order of notes, then each note's body, in the order
    /// this copy learned of the notes) audited against the origins its structure gives
    /// (`OriginAudit`), with their sum. A diagnostic for the format work issue 6 needs.
    @_spi(Diagnostics) public func originAudit() -> (order: OriginAudit, bodies: OriginAudit, noteCount: Int) {
        let log = self.log
        let state = self.state
        func rank(_ id: LocalID) -> Int { log.lv(of: id) ?? Int.max }
        let order = state.order.originAudit(rank: rank)
        var bodies = OriginAudit()
        for note in state.noteStates { bodies += note.body.originAudit(rank: rank) }
        return (order, bodies, state.noteStates.count)
    }
}
