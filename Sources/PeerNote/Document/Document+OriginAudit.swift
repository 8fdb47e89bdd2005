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
    /// The runs as format version 3 stores them (`StructureCodec`: replica index,
    /// counter offset, length and deleted flag as LEB128 numbers, one run after another),
    /// deflated as the file's sections are.
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
        // The structure as format version 3 stores it (`StructureCodec`), the log's
        // agent numbers standing for the block's replica indices.
        var structure: [WireStructureRun] = []
        var runHasException = false
        var previous: (id: LocalID, deleted: Bool)?
        var runStart = LocalID.none
        var runLength = 0
        var runDeleted = false
        func closeRun() {
            guard runLength > 0 else { return }
            audit.runs += 1
            if runHasException { audit.runsWithExceptions += 1 }
            structure.append(WireStructureRun(replica: Int(runStart.agent), counter: runStart.counter, length: runLength, deleted: runDeleted))
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
        var bytes: [UInt8] = []
        if !structure.isEmpty { StructureCodec.encode(structure, into: &bytes) }
        audit.structureBytes = bytes.isEmpty ? 0 : Deflate.compress(bytes[...]).count
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

    /// Every note body's structure and elements, as a file storing the structure would hold
    /// them: the input of `buildBodies(from:)`.
    @_spi(Diagnostics) public func bodyStructures() -> BodyStructures {
        BodyStructures(lists: state.noteStates.map { note in
            var runs: [StructureRun] = [], elements: [Unicode.Scalar] = []
            note.body.forEachRun { id, length, deleted, content in
                runs.append(StructureRun(id: id, length: length, deleted: deleted))
                elements.append(contentsOf: content)
            }
            return (runs, elements)
        })
    }

    /// Builds every note body from `structures` (this document's `bodyStructures()`) as a
    /// reader of such a file would: each element's place in the log, the origins that follow,
    /// the tree at once. Returns the lists, or nil when the log lacks an element.
    func buildBodies(from structures: BodyStructures) -> [ListCRDT<Unicode.Scalar>]? {
        let log = self.log
        var lists: [ListCRDT<Unicode.Scalar>] = []
        lists.reserveCapacity(structures.lists.count)
        for (runs, elements) in structures.lists {
            guard let ranks = log.localVersions(of: runs, total: elements.count) else { return nil }
            lists.append(ListCRDT(structure: runs, elements: elements, ranks: ranks))
        }
        return lists
    }

    /// The work a reader of format version 3 (docs/FORMAT-V3.md) does for the bodies once
    /// the log is built, on this document's own structures: the structures checked against the
    /// log, the bodies built from them, and every insert given the origins its first unit got
    /// (`OpLog.buildBodies(from:)`, on a copy of the log). The number of elements built, or -1
    /// when it failed.
    @_spi(Diagnostics) public func readBodiesAsVersion3(from structures: BodyStructures) -> Int {
        var read = version3BodyRead(from: structures)
        return read.run()
    }

    /// `readBodiesAsVersion3(from:)` made ready to run, its copy of the log already made (a
    /// reader builds its own log), so that timing it times the reader's work alone.
    @_spi(Diagnostics) public func version3BodyRead(from structures: BodyStructures) -> Version3BodyRead {
        var log = self.log
        // Storage of its own, as a reader's log has: the copy is made here, not in `run`.
        log.copyOpsStorage()
        return Version3BodyRead(log: log, stored: zip(state.noteStates, structures.lists).map {
            StoredBody(note: $0.id, runs: $1.runs, elements: ScalarStore($1.elements))
        })
    }

    /// `buildBodies(from:)` for timing: the number of elements built (-1 when it failed).
    @_spi(Diagnostics) public func buildBodyCount(from structures: BodyStructures) -> Int {
        buildBodies(from: structures)?.reduce(0) { $0 + $1.totalCount } ?? -1
    }

    /// Whether every note body built from its structure (`buildBodies`) holds the elements and
    /// tombstones the replayed one holds, in the same order, and, where all its origins follow
    /// from the structure, the same origins.
    @_spi(Diagnostics) public func bodiesRebuildIdentically() -> Bool {
        guard let built = buildBodies(from: bodyStructures()) else { return false }
        let log = self.log
        for (note, list) in zip(state.noteStates, built) {
            var a: [LocalID] = [], b: [LocalID] = [], ad: [Bool] = [], bd: [Bool] = []
            note.body.forEachElement { id, _, deleted in a.append(id); ad.append(deleted) }
            list.forEachElement { id, _, deleted in b.append(id); bd.append(deleted) }
            guard a == b, ad == bd, note.body.visibleElements == list.visibleElements,
                  note.body.deletedElements == list.deletedElements else { return false }
            let audit = note.body.originAudit { log.lv(of: $0) ?? Int.max }
            if audit.leftExceptions + audit.rightExceptions == 0 {
                let x = note.body.elementsWithOrigins(), y = list.elementsWithOrigins()
                guard zip(x, y).allSatisfy({ $0.left == $1.left && $0.right == $1.right }) else { return false }
            }
        }
        return true
    }
}

/// The structures of a document's note bodies (`Document.bodyStructures()`).
@_spi(Diagnostics) public struct BodyStructures: Sendable {
    var lists: [(runs: [StructureRun], elements: [Unicode.Scalar])]
}

/// The input of a version 3 reader's work on the bodies (`Document.version3BodyRead(from:)`).
@_spi(Diagnostics) public struct Version3BodyRead: Sendable {
    var log: OpLog
    var stored: [StoredBody]

    /// Checks the structures against the log, builds the bodies and gives the inserts their
    /// origins: the number of elements built, or -1 when the structures were refused.
    public mutating func run() -> Int {
        guard case .success(let bodies) = log.buildBodies(from: stored) else { return -1 }
        return bodies.reduce(0) { $0 + $1.totalCount }
    }
}
