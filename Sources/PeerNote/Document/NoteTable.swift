/// The notes of a `DocState`, by slot, in chunks of `chunkSize` notes that are each copied on
/// their own when written while shared.
///
/// A state is shared whenever a document keeps the state its file was verified as
/// (`VerifiedFile`, which checks an appended save against it): the first edit after a load
/// changes one note, and an array of all the notes would be copied whole for it (at 20,000
/// notes, each note's dozen references retained: about a tenth of a `peernote edit`), where
/// this copies the one chunk holding the note.
///
/// Invariants: every chunk but the last is full (`chunkSize` notes); `count` is the sum of the
/// chunks' counts; a chunk is written only while this table holds the only reference to it.
///
/// `@unchecked Sendable`, as an array is: its pointers lead into its own chunks, and a chunk is
/// written only while one table holds it.
///
/// - Complexity: reading or writing a note is O(1); the first write to a shared chunk copies
///   its `chunkSize` notes.
struct NoteTable: RandomAccessCollection, MutableCollection, @unchecked Sendable {
    /// Slots per chunk: a power of two (a slot's chunk is a shift, its place a mask).
    static let chunkShift = 8
    static let chunkSize = 1 << chunkShift
    private static let mask = chunkSize - 1

    private var chunks: [NoteChunk] = []
    /// Each chunk's first note (`chunks[c].base`), kept apart: an access reads a pointer, and
    /// `NotePlaces` takes the array as it is.
    private var bases: [UnsafeMutablePointer<NoteState>] = []
    private(set) var count = 0

    var startIndex: Int { 0 }
    var endIndex: Int { count }

    // Addressors, as an array's subscript: a note is read and written where it lies.
    subscript(slot: Int) -> NoteState {
        @inline(__always) unsafeAddress {
            precondition(slot >= 0 && slot < count, "note slot out of range")
            return UnsafePointer(bases[slot >> Self.chunkShift] + (slot & Self.mask))
        }
        @inline(__always) unsafeMutableAddress {
            precondition(slot >= 0 && slot < count, "note slot out of range")
            let c = slot >> Self.chunkShift
            makeUnique(c)
            return bases[c] + (slot & Self.mask)
        }
    }

    /// Adds `note` at slot `count`.
    mutating func append(_ note: consuming NoteState) {
        let place = count & Self.mask
        if place == 0 {
            // The first chunk starts small and grows as an array does (most notebooks hold
            // fewer notes than a chunk); every later one is made whole.
            let chunk = NoteChunk(capacity: chunks.isEmpty ? 4 : Self.chunkSize)
            chunks.append(chunk)
            bases.append(chunk.base)
        } else {
            let last = chunks.count - 1
            makeUnique(last)
            if chunks[last].capacity == place {
                let grown = chunks[last].movedToCapacity(Swift.min(2 * place, Self.chunkSize))
                chunks[last] = grown
                bases[last] = grown.base
            }
        }
        (bases[bases.count - 1] + place).initialize(to: consume note)
        chunks[chunks.count - 1].count += 1
        count += 1
    }

    /// Makes room in the table of chunks for `total` notes in all.
    mutating func reserveCapacity(_ total: Int) {
        chunks.reserveCapacity((total + Self.mask) >> Self.chunkShift)
        bases.reserveCapacity((total + Self.mask) >> Self.chunkShift)
    }

    /// Calls `body` with the notes' places, each chunk made this table's own first: for work
    /// that writes notes through pointers, such as two threads filling the bodies of notes the
    /// other does not touch (`DocState.fillBodies`). The places are valid during the call only.
    mutating func withUniqueNotes<R>(_ body: (NotePlaces) throws -> R) rethrows -> R {
        for c in chunks.indices { makeUnique(c) }
        return try withExtendedLifetime(chunks) { try body(NotePlaces(bases: bases, count: count)) }
    }

    /// Calls `body` with the notes' places, for reading many notes in place. The places are
    /// valid during the call only, and must not be written through.
    func withNotePlaces<R>(_ body: (NotePlaces) throws -> R) rethrows -> R {
        try withExtendedLifetime(chunks) { try body(NotePlaces(bases: bases, count: count)) }
    }

    @inline(__always)
    private mutating func makeUnique(_ c: Int) {
        if !isKnownUniquelyReferenced(&chunks[c]) {
            let copy = chunks[c].copy()
            chunks[c] = copy
            bases[c] = copy.base
        }
    }
}

/// Where each note of a `NoteTable` lies, by slot, while the table's chunks are held
/// (`NoteTable.withNotePlaces`, `withUniqueNotes`). `@unchecked Sendable`: the pointers are
/// only followed during the call that made them; two threads given the same places write
/// disjoint notes.
struct NotePlaces: @unchecked Sendable {
    fileprivate let bases: [UnsafeMutablePointer<NoteState>]
    let count: Int

    @inline(__always)
    subscript(slot: Int) -> UnsafeMutablePointer<NoteState> {
        precondition(slot >= 0 && slot < count, "note slot out of range")
        return bases.withUnsafeBufferPointer { $0[slot >> NoteTable.chunkShift] } + (slot & (NoteTable.chunkSize - 1))
    }

    /// Calls `body` with the note in `slot` where it lies, to read it: `body` must not change
    /// it. An inout access, though nothing is written: a method or computed property called on
    /// `self[slot].pointee` copies the whole note first (retaining and then releasing each of
    /// its dozen references, cold memory in a large notebook), as nothing proves the memory
    /// unchanged during the call; an inout access is exclusive, so the call reads it in place.
    @inline(__always)
    func read<R>(_ slot: Int, _ body: (inout NoteState) throws -> R) rethrows -> R {
        try body(&self[slot].pointee)
    }
}

/// One chunk of a `NoteTable`: room for `capacity` notes (`NoteTable.chunkSize`, except while
/// the first chunk grows), the first `count` initialized. `@unchecked Sendable`: a chunk is
/// written only through a table that holds the only reference to it (copy on write), as an
/// array's storage is.
private final class NoteChunk: @unchecked Sendable {
    let base: UnsafeMutablePointer<NoteState>
    let capacity: Int
    var count = 0

    init(capacity: Int) {
        self.capacity = capacity
        base = UnsafeMutablePointer<NoteState>.allocate(capacity: capacity)
    }

    func copy() -> NoteChunk {
        let other = NoteChunk(capacity: capacity)
        other.base.initialize(from: base, count: count)
        other.count = count
        return other
    }

    /// A chunk of `capacity` holding this one's notes, moved out of it (this one is left
    /// empty). Only for a chunk no other table holds.
    func movedToCapacity(_ capacity: Int) -> NoteChunk {
        let other = NoteChunk(capacity: capacity)
        other.base.moveInitialize(from: base, count: count)
        other.count = count
        count = 0
        return other
    }

    deinit {
        base.deinitialize(count: count)
        base.deallocate()
    }
}
