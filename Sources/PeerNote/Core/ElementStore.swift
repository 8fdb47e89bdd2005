#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An element a list holds (`ListCRDT`): a Unicode scalar of a note body, or a note id in the
/// order of notes. Each kind names how a list's arena stores its elements (`Store`).
protocol ListElement: Sendable {
    associatedtype Store: ElementStore where Store.Element == Self
}

/// The arena of a list's elements, in the order the list integrated them (`ListTree.content`):
/// runs name their elements by offset in it. Elements are appended, rewritten in place (a run's
/// text written in after a load), and read back; never removed.
protocol ElementStore<Element>: Sendable {
    associatedtype Element: Sendable
    /// A stretch of the arena, as a collection of elements.
    associatedtype Run: RandomAccessCollection where Run.Element == Element, Run.Index == Int
    init()
    init(_ elements: [Element])
    var count: Int { get }
    subscript(_ i: Int) -> Element { get }
    /// The elements at `range`.
    subscript(_ range: Range<Int>) -> Run { get }
    /// Every element, in arena order.
    var elements: [Element] { get }
    mutating func append(_ element: Element)
    mutating func append(contentsOf elements: some Collection<Element>)
    /// Replaces the elements from `start` on with `elements` (as many as it holds).
    /// Requires `start + elements.count <= count`.
    mutating func overwrite(from start: Int, with elements: some Collection<Element>)
    /// Appends the elements at `range` to `out`.
    func append(_ range: Range<Int>, to out: inout [Element])
    /// The elements of `source` at `ranges`, in that order, as one store.
    static func gathering(_ ranges: [Range<Int>], of source: Self) -> Self
}

extension ElementStore {
    static func gathering(_ ranges: [Range<Int>], of source: Self) -> Self {
        var out = Self()
        for r in ranges { out.append(contentsOf: source[r]) }
        return out
    }
}

/// The arena of elements without a smaller form: an array of them.
struct ArrayStore<Element: Sendable>: ElementStore {
    private var storage: [Element]

    init() { storage = [] }
    init(_ elements: [Element]) { storage = elements }
    var count: Int { storage.count }
    subscript(_ i: Int) -> Element { storage[i] }
    subscript(_ range: Range<Int>) -> ArraySlice<Element> { storage[range] }
    var elements: [Element] { storage }
    mutating func append(_ element: Element) { storage.append(element) }
    mutating func append(contentsOf elements: some Collection<Element>) { storage.append(contentsOf: elements) }
    mutating func overwrite(from start: Int, with elements: some Collection<Element>) {
        storage.replaceSubrange(start ..< start + elements.count, with: elements)
    }
    func append(_ range: Range<Int>, to out: inout [Element]) { out.append(contentsOf: storage[range]) }
}

/// The scalars of a note body, one byte each while every one of them is below U+0100 (Latin-1,
/// which holds most text people type in Western languages), else four each: the body's arena
/// widens for good when the first scalar past U+00FF comes. A notebook's bodies then take about
/// a quarter of the memory they took as scalars; each body decides for itself, so one note with
/// an emoji widens that note alone.
/// The op log's inserted text is one store too (`OpLog.textView`: after a load, the notes'
/// arenas, then the log's own store): it widens when any insert it holds brings a scalar past
/// U+00FF.
/// A load's arenas cost no memory of their own until written: the placeholders its replay
/// inserts are counted, not stored (`unwritten`), and a body whose text is its state section's
/// ASCII in list order reads that text where the section holds it (`init(borrowing:)`); the
/// first write copies what the store holds.
/// - Complexity: reading an element, O(1); widening, O(n) once.
struct ScalarStore: ElementStore, RandomAccessCollection, Equatable {
    /// The scalars while none is past U+00FF (empty once widened): bytes of the store's own, or
    /// a stretch of other bytes it reads until its first write (`init(borrowing:)`). Indices
    /// are the slice's: offset `i` is `narrow[narrow.startIndex + i]`.
    private var narrow: ArraySlice<UInt8> = []
    /// Placeholders (`Unicode.Scalar.placeholder`) after `narrow`, counted but not stored: a
    /// load's inserts before their text is read in. Written out (`settle`) before any other
    /// write; 0 while wide.
    private var unwritten = 0
    /// The scalars once one is past U+00FF.
    private var wide: [Unicode.Scalar] = []
    private(set) var isWide = false
    /// Whether the store still reads the bytes it was made to read in place
    /// (`init(borrowing:)`): no write has come since (placeholders counted after them aside).
    private(set) var readsInPlace = false

    init() {}

    init(_ elements: [Unicode.Scalar]) {
        if Self.allNarrow(elements) {
            narrow = ArraySlice(elements.map { UInt8(truncatingIfNeeded: $0.value) })
        } else {
            wide = elements
            isWide = true
        }
    }

    /// `count` placeholders (`Unicode.Scalar.placeholder`) with room for `capacity` scalars:
    /// a store whose text is then written in place (`overwrite`).
    init(placeholders count: Int, reserving capacity: Int) {
        narrow.reserveCapacity(Swift.max(count, capacity))
        Self.grow(&narrow, by: count, with: UInt8(truncatingIfNeeded: Unicode.Scalar.placeholder.value))
    }

    /// A store that reads `bytes` as its scalars, one a byte (Latin-1; ASCII included), without
    /// a copy: a loaded body reads its text in the state section's bytes, which the store keeps
    /// alive. Its first write copies them.
    init(borrowing bytes: consuming ArraySlice<UInt8>) {
        narrow = bytes
        readsInPlace = true
    }

    /// Where this store's scalars lie in `whole`, as offsets from its start, when the store
    /// reads them in place (`init(borrowing:)`, no write since) within `whole`'s bytes; else nil.
    /// Two live buffers never share memory, so bytes within `whole`'s are `whole`'s own.
    func inPlaceRange(within whole: borrowing [UInt8]) -> Range<Int>? {
        guard readsInPlace, !isWide, unwritten == 0 else { return nil }
        return narrow.withUnsafeBufferPointer { mine in
            whole.withUnsafeBufferPointer { all -> Range<Int>? in
                guard let m = mine.baseAddress, let a = all.baseAddress, m >= a, m + mine.count <= a + all.count else { return nil }
                return m - a ..< m - a + mine.count
            }
        }
    }

    /// Makes this store what `init(borrowing: bytes)` makes, in place: `bytes` moves in, and
    /// the store made apart would be copied in and dropped.
    mutating func read(inPlace bytes: consuming ArraySlice<UInt8>) {
        narrow = bytes
        unwritten = 0
        wide = []
        isWide = false
        readsInPlace = true
    }

    var count: Int { isWide ? wide.count : narrow.count + unwritten }
    var isEmpty: Bool { count == 0 }
    var startIndex: Int { 0 }
    var endIndex: Int { count }

    /// Whether every scalar is a placeholder counted but not stored (a load's body before its
    /// text is read in), and there is at least one.
    var isUnwritten: Bool { unwritten > 0 && narrow.isEmpty }

    /// The store with its unwritten placeholders stored (for a read that needs them in memory):
    /// O(n) a read. Reads of placeholders not stored are expected only while a load runs,
    /// before its text is read in, and hardly even then.
    private var settled: ScalarStore {
        var copy = self
        copy.settle()
        return copy
    }

    /// Stores the placeholders counted in `unwritten`, before a write (which then writes to
    /// bytes of the store's own: `readsInPlace` ends).
    private mutating func settle() {
        readsInPlace = false
        guard unwritten > 0 else { return }
        let n = unwritten
        unwritten = 0
        narrow.reserveCapacity(narrow.count + n)
        Self.grow(&narrow, by: n, with: UInt8(truncatingIfNeeded: Unicode.Scalar.placeholder.value))
    }

    mutating func reserveCapacity(_ n: Int) {
        settle()
        if isWide { wide.reserveCapacity(n) } else { narrow.reserveCapacity(n) }
    }

    /// Removes the last `n` scalars (a roll-back of what was appended since). Stays as wide
    /// as it was.
    mutating func removeLast(_ n: Int) {
        if n > unwritten { readsInPlace = false }
        if isWide {
            wide.removeLast(n)
            return
        }
        let counted = Swift.min(n, unwritten)
        unwritten -= counted
        narrow.removeLast(n - counted)
    }

    /// Appends ASCII bytes (each a scalar below U+0080) as scalars.
    mutating func append(ascii bytes: UnsafeBufferPointer<UInt8>) {
        settle()
        if isWide {
            wide.append(contentsOf: bytes.lazy.map { Unicode.Scalar($0) })
        } else {
            narrow.append(contentsOf: bytes)
        }
    }

    /// Whether the scalars at `range` are those `other` holds from `otherStart` on: one memory
    /// comparison when both are stored alike.
    func sameScalars(_ range: Range<Int>, as other: ScalarStore, from otherStart: Int) -> Bool {
        let n = range.count
        guard n > 0 else { return true }
        if unwritten > 0 || other.unwritten > 0 { return settled.sameScalars(range, as: other.settled, from: otherStart) }
        switch (isWide, other.isWide) {
        case (false, false):
            return narrow.withUnsafeBufferPointer { a in
                other.narrow.withUnsafeBufferPointer { b in
                    guard let a = a.baseAddress, let b = b.baseAddress else { return false }
                    return memcmp(a + range.lowerBound, b + otherStart, n) == 0
                }
            }
        case (true, true):
            return wide.withUnsafeBufferPointer { a in
                other.wide.withUnsafeBufferPointer { b in
                    guard let a = a.baseAddress, let b = b.baseAddress else { return false }
                    return memcmp(a + range.lowerBound, b + otherStart, n * MemoryLayout<Unicode.Scalar>.stride) == 0
                }
            }
        default:
            return zip(self[range], other[otherStart ..< otherStart + n]).allSatisfy { $0 == $1 }
        }
    }

    /// Stores holding the same scalars are equal, however each stores them.
    static func == (a: ScalarStore, b: ScalarStore) -> Bool {
        a.count == b.count && a.sameScalars(0 ..< a.count, as: b, from: 0)
    }

    /// Feeds the scalars at `range` to `hasher` as their four-byte values, however they are
    /// stored: a narrow and a wide store holding the same scalars hash alike.
    func hash(_ range: Range<Int>, into hasher: inout Hasher) {
        if unwritten > 0 {
            settled.hash(range, into: &hasher)
            return
        }
        if isWide {
            wide.withUnsafeBufferPointer { t in hasher.combine(bytes: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: t[range]))) }
            return
        }
        // Widened a chunk at a time on the stack: the hasher takes a stream of bytes.
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 256) { chunk in
            narrow.withUnsafeBufferPointer { source in
                var k = range.lowerBound
                while k < range.upperBound {
                    let n = Swift.min(256, range.upperBound - k)
                    for j in 0 ..< n { chunk[j] = UInt32(source[k + j]) }
                    hasher.combine(bytes: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: chunk[0 ..< n])))
                    k += n
                }
            }
        }
    }

    subscript(_ i: Int) -> Unicode.Scalar {
        if isWide { return wide[i] }
        if i < narrow.count { return Unicode.Scalar(narrow[narrow.startIndex + i]) }
        precondition(i < count, "an offset within the arena")
        return .placeholder
    }

    subscript(_ range: Range<Int>) -> ScalarRun {
        if isWide { return ScalarRun(wide: wide[range]) }
        if range.upperBound > narrow.count && unwritten > 0 { return settled[range] }
        let base = narrow.startIndex
        return ScalarRun(narrow: narrow[base + range.lowerBound ..< base + range.upperBound], offsetBy: base)
    }

    var elements: [Unicode.Scalar] {
        if isWide { return wide }
        var out: [Unicode.Scalar] = []
        append(0 ..< count, to: &out)
        return out
    }

    mutating func append(_ element: Unicode.Scalar) {
        settle()
        if isWide {
            wide.append(element)
        } else if element.value < 0x100 {
            narrow.append(UInt8(truncatingIfNeeded: element.value))
        } else {
            widen(reserving: narrow.count + 1)
            wide.append(element)
        }
    }

    mutating func append(contentsOf elements: some Collection<Unicode.Scalar>) {
        // Placeholders (a load's inserts, before their text is read in): a fill, with nothing
        // to read or check.
        // Counted, not stored, in a narrow store: its text is written in later.
        if let run = elements as? PlaceholderRun {
            if isWide {
                wide.append(contentsOf: repeatElement(.placeholder, count: run.count))
            } else {
                unwritten += run.count
            }
            return
        }
        settle()
        // A narrow run (of another store) into a narrow store: one block of memory.
        if !isWide, let run = elements as? ScalarRun, let bytes = run.narrowBytes {
            narrow.append(contentsOf: bytes)
            return
        }
        if isWide {
            wide.append(contentsOf: elements)
            return
        }
        let start = narrow.count, n = elements.count
        // A few scalars (a keystroke's run): one by one.
        if n <= 16, elements.allSatisfy({ $0.value < 0x100 }) {
            for e in elements { narrow.append(UInt8(truncatingIfNeeded: e.value)) }
            return
        }
        // Contiguous scalars (a slice of an array, of the log's text stored wide), the usual
        // case: narrowed and checked in one pass over memory.
        if let narrowed = elements.withContiguousStorageIfAvailable({ source in
            Self.grow(&narrow, by: n, with: 0)
            let fits = narrow.withUnsafeMutableBufferPointer { out in
                Self.narrowing(source, into: UnsafeMutableBufferPointer(rebasing: out[start ..< start + n]))
            }
            if !fits { narrow.removeLast(n) }
            return fits
        }) {
            if narrowed { return }
            widen(reserving: narrow.count + n)
            wide.append(contentsOf: elements)
        } else if Self.allNarrow(elements) {
            Self.grow(&narrow, by: n, with: 0)
            narrow.withUnsafeMutableBufferPointer { out in
                var k = start
                for e in elements { out[k] = UInt8(truncatingIfNeeded: e.value); k += 1 }
            }
        } else {
            widen(reserving: narrow.count + elements.count)
            wide.append(contentsOf: elements)
        }
    }

    mutating func overwrite(from start: Int, with elements: some Collection<Unicode.Scalar>) {
        precondition(start >= 0 && start + elements.count <= count, "an overwrite stays within the arena")
        settle()
        // A narrow run into a narrow arena: one block of memory.
        if !isWide, let run = elements as? ScalarRun, let bytes = run.narrowBytes {
            narrow.withUnsafeMutableBufferPointer { out in
                bytes.withUnsafeBufferPointer { source in
                    _ = UnsafeMutableBufferPointer(rebasing: out[start ..< start + source.count]).update(fromContentsOf: source)
                }
            }
            return
        }
        // Contiguous scalars into a narrow arena: narrowed and checked in one pass; when one
        // does not fit, the arena widens and the wide loop below writes the stretch again.
        if !isWide, let fits = elements.withContiguousStorageIfAvailable({ source in
            narrow.withUnsafeMutableBufferPointer { out in
                Self.narrowing(source, into: UnsafeMutableBufferPointer(rebasing: out[start ..< start + source.count]))
            }
        }), fits {
            return
        }
        if !isWide && !Self.allNarrow(elements) { widen(reserving: narrow.count) }
        if isWide {
            wide.withUnsafeMutableBufferPointer { out in
                var k = start
                for e in elements { out[k] = e; k += 1 }
            }
        } else {
            narrow.withUnsafeMutableBufferPointer { out in
                var k = start
                for e in elements { out[k] = UInt8(truncatingIfNeeded: e.value); k += 1 }
            }
        }
    }

    /// Writes `bytes`, scalars below U+0100 one a byte (Latin-1, ASCII included), from `start`
    /// on: one block of memory into a narrow arena. Requires `start + bytes.count <= count`.
    mutating func overwrite(from start: Int, latin1 bytes: UnsafeBufferPointer<UInt8>) {
        precondition(start >= 0 && start + bytes.count <= count, "an overwrite stays within the arena")
        settle()
        if isWide {
            wide.withUnsafeMutableBufferPointer { out in
                for k in bytes.indices { out[start + k] = Unicode.Scalar(bytes[k]) }
            }
        } else {
            narrow.withUnsafeMutableBufferPointer { out in
                _ = UnsafeMutableBufferPointer(rebasing: out[start ..< start + bytes.count]).update(fromContentsOf: bytes)
            }
        }
    }

    /// Writes the scalars `source` holds at `range` from `start` on: one block of memory when
    /// both are stored narrow. Requires `range` within `source` and `start + range.count <= count`.
    mutating func overwrite(from start: Int, with source: ScalarStore, _ range: Range<Int>) {
        if source.unwritten > 0 {
            overwrite(from: start, with: source.settled, range)
            return
        }
        if source.isWide {
            source.wide.withUnsafeBufferPointer { overwrite(from: start, with: UnsafeBufferPointer(rebasing: $0[range])) }
        } else {
            source.narrow.withUnsafeBufferPointer { overwrite(from: start, latin1: UnsafeBufferPointer(rebasing: $0[range])) }
        }
    }

    func append(_ range: Range<Int>, to out: inout [Unicode.Scalar]) {
        if isWide {
            out.append(contentsOf: wide[range])
            return
        }
        if range.upperBound > narrow.count && unwritten > 0 {
            settled.append(range, to: &out)
            return
        }
        // A few scalars (a keystroke's run): appended one by one, which costs less than
        // growing the array for them and writing them in.
        if range.count <= 16 {
            for k in range { out.append(Unicode.Scalar(narrow[narrow.startIndex + k])) }
            return
        }
        let start = out.count
        Self.grow(&out, by: range.count, with: Unicode.Scalar(0))
        narrow.withUnsafeBufferPointer { source in
            out.withUnsafeMutableBufferPointer { target in
                for k in 0 ..< range.count { target[start + k] = Unicode.Scalar(source[range.lowerBound + k]) }
            }
        }
    }

    /// Appends the UTF-8 of the scalars at `range` to `out`. A narrow stretch of ASCII, the
    /// usual text, is one copy (found eight bytes at a time); each Latin-1 letter past U+007F
    /// takes two bytes.
    /// - Complexity: O(`range.count`).
    func appendUTF8(_ range: Range<Int>, to out: inout [UInt8]) {
        if !isWide && range.upperBound > narrow.count && unwritten > 0 {
            settled.appendUTF8(range, to: &out)
            return
        }
        if isWide {
            for k in range {
                let s = wide[k]
                if s.isASCII { out.append(UInt8(truncatingIfNeeded: s.value)) } else { UTF8.encode(s) { out.append($0) } }
            }
            return
        }
        narrow.withUnsafeBufferPointer { source in
            let bytes = UnsafeBufferPointer(rebasing: source[range])
            guard let base = UnsafeRawPointer(bytes.baseAddress) else { return }
            var i = 0
            while i + 8 <= bytes.count, base.loadUnaligned(fromByteOffset: i, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 { i += 8 }
            while i < bytes.count, bytes[i] < 0x80 { i += 1 }
            if i == bytes.count {
                out.append(contentsOf: bytes)
                return
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[..<i]))
            for b in bytes[i...] {
                if b < 0x80 {
                    out.append(b)
                } else {
                    out.append(0xC0 | b >> 6)
                    out.append(0x80 | b & 0x3F)
                }
            }
        }
    }

    /// The scalars of `source` at `ranges`, as one store: one pass over a narrow store's bytes
    /// (no run made a range), into room reserved for them all.
    static func gathering(_ ranges: [Range<Int>], of source: ScalarStore) -> ScalarStore {
        if source.unwritten > 0 { return gathering(ranges, of: source.settled) }
        var out = ScalarStore()
        let total = ranges.reduce(0) { $0 + $1.count }
        if source.isWide {
            var all: [Unicode.Scalar] = []
            all.reserveCapacity(total)
            source.wide.withUnsafeBufferPointer { p in
                for r in ranges {
                    precondition(r.lowerBound >= 0 && r.upperBound <= p.count, "a gathered stretch lies within its store")
                    all.append(contentsOf: UnsafeBufferPointer(rebasing: p[r]))
                }
            }
            out.wide = all
            out.isWide = true
            return out
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(total)
        source.narrow.withUnsafeBufferPointer { p in
            for r in ranges {
                precondition(r.lowerBound >= 0 && r.upperBound <= p.count, "a gathered stretch lies within its store")
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: p[r]))
            }
        }
        out.narrow = bytes[...]
        return out
    }

    /// How many bytes `appendUTF8(_:to:)` appends for `range`, without making them.
    /// - Complexity: O(`range.count`).
    func utf8Count(_ range: Range<Int>) -> Int {
        if !isWide && range.upperBound > narrow.count && unwritten > 0 { return settled.utf8Count(range) }
        if isWide {
            var total = 0
            for k in range { total += UTF8.width(wide[k]) }
            return total
        }
        // One byte a scalar, two for each past U+007F: their high bits counted eight bytes at a
        // time, each moved to its byte's low bit and the eight bytes summed by a multiply (no
        // population count: the baseline x86-64 the tools are built for has no instruction for it).
        return narrow.withUnsafeBufferPointer { source in
            let bytes = UnsafeBufferPointer(rebasing: source[range])
            guard let base = UnsafeRawPointer(bytes.baseAddress) else { return 0 }
            var high = 0, i = 0
            while i + 8 <= bytes.count {
                let bits = (base.loadUnaligned(fromByteOffset: i, as: UInt64.self) & 0x8080_8080_8080_8080) >> 7
                high += Int((bits &* 0x0101_0101_0101_0101) >> 56)
                i += 8
            }
            while i < bytes.count {
                if bytes[i] >= 0x80 { high += 1 }
                i += 1
            }
            return bytes.count + high
        }
    }

    /// Moves every scalar to four bytes each, with room for `capacity`.
    private mutating func widen(reserving capacity: Int) {
        settle()
        var all: [Unicode.Scalar] = []
        all.reserveCapacity(Swift.max(capacity, narrow.count))
        append(0 ..< narrow.count, to: &all)
        wide = all
        narrow = []
        isWide = true
    }

    /// Appends `n` copies of `value` (zeros to be written over, or placeholders) to `array`: a
    /// few one by one, more a block of memory at a time from a stretch of them on the stack.
    /// (`repeatElement` goes through the generic path, an element at a time, which cost more
    /// than the copy; a shared array of them has a reference count, which both of a load's
    /// threads took at once.)
    private static func grow<T: BitwiseCopyable, C: RangeReplaceableCollection<T>>(_ array: inout C, by n: Int, with value: T) {
        if n <= 16 {
            for _ in 0 ..< n { array.append(value) }
            return
        }
        withUnsafeTemporaryAllocation(of: T.self, capacity: Swift.min(n, 4096)) { block in
            block.initialize(repeating: value)
            var left = n
            while left > 0 {
                let m = Swift.min(left, block.count)
                array.append(contentsOf: UnsafeBufferPointer(rebasing: block[0 ..< m]))
                left -= m
            }
        }
    }

    /// Writes the low byte of each of `source`'s scalars to `target` (as long), and returns
    /// whether every scalar was below U+0100 (when not, `target` holds nothing of use). One
    /// plain loop, which the compiler turns into vector code.
    private static func narrowing(_ source: UnsafeBufferPointer<Unicode.Scalar>, into target: UnsafeMutableBufferPointer<UInt8>) -> Bool {
        source.withMemoryRebound(to: UInt32.self) { words in
            var high: UInt32 = 0
            for k in words.indices {
                high |= words[k]
                target[k] = UInt8(truncatingIfNeeded: words[k])
            }
            return high < 0x100
        }
    }

    private static func allNarrow(_ elements: some Collection<Unicode.Scalar>) -> Bool {
        // Through contiguous storage when there is some: the check is a plain loop the compiler
        // vectorizes.
        if let result = elements.withContiguousStorageIfAvailable({ buffer in
            buffer.withMemoryRebound(to: UInt32.self) { words in words.allSatisfy { $0 < 0x100 } }
        }) {
            return result
        }
        return elements.allSatisfy { $0.value < 0x100 }
    }
}

/// A stretch of a `ScalarStore`: its scalars, stored narrow or wide. Indices are the arena's
/// offsets (as an array slice's are its array's), and a slice of a run is a run.
struct ScalarRun: RandomAccessCollection, Sendable {
    private let narrow: ArraySlice<UInt8>
    private let wide: ArraySlice<Unicode.Scalar>
    private let isWide: Bool
    /// `narrow`'s index of arena offset 0 (a store's bytes may be a stretch of other bytes).
    private let offset: Int

    /// The scalars `narrow` holds, at arena offsets `narrow.indices` less `offset`.
    init(narrow: ArraySlice<UInt8>, offsetBy offset: Int = 0) {
        self.narrow = narrow
        wide = []
        isWide = false
        self.offset = offset
    }

    init(wide: ArraySlice<Unicode.Scalar>) {
        narrow = []
        self.wide = wide
        isWide = true
        offset = 0
    }

    /// The run's scalars as Latin-1 bytes, when it is stored narrow.
    var narrowBytes: ArraySlice<UInt8>? { isWide ? nil : narrow }

    var startIndex: Int { isWide ? wide.startIndex : narrow.startIndex - offset }
    var endIndex: Int { isWide ? wide.endIndex : narrow.endIndex - offset }
    subscript(_ i: Int) -> Unicode.Scalar { isWide ? wide[i] : Unicode.Scalar(narrow[i + offset]) }
    subscript(_ bounds: Range<Int>) -> ScalarRun {
        isWide ? ScalarRun(wide: wide[bounds]) : ScalarRun(narrow: narrow[bounds.lowerBound + offset ..< bounds.upperBound + offset], offsetBy: offset)
    }

    /// Writes the run's scalars to `target`, which has room for exactly them: as one block of
    /// memory when they are stored wide (an element at a time through the generic path was
    /// most of a load's copying), widened a byte at a time otherwise.
    func copy(into target: UnsafeMutableBufferPointer<Unicode.Scalar>) {
        precondition(target.count == count, "the target holds the run exactly")
        if isWide {
            _ = wide.withUnsafeBufferPointer { target.update(fromContentsOf: $0) }
        } else {
            narrow.withUnsafeBufferPointer { source in
                for k in source.indices { target[k] = Unicode.Scalar(source[k]) }
            }
        }
    }

    func withContiguousStorageIfAvailable<R>(_ body: (UnsafeBufferPointer<Unicode.Scalar>) throws -> R) rethrows -> R? {
        isWide ? try wide.withContiguousStorageIfAvailable(body) : nil
    }
}

/// Placeholders (`Unicode.Scalar.placeholder`) at the offsets `startIndex ..< endIndex`, with no
/// storage: the text a load integrates before it reads the text in (`DocState.applyBase`).
/// Every offset from 0 on holds one, so a slice of any range of offsets is a run of its own
/// (an insert joined from stored ones may be longer than the run it is sliced from).
/// A `ScalarStore` appends one as a fill.
struct PlaceholderRun: RandomAccessCollection, Sendable {
    let startIndex: Int
    let endIndex: Int

    init(_ offsets: Range<Int>) {
        precondition(offsets.lowerBound >= 0, "placeholders lie at offsets from 0 on")
        startIndex = offsets.lowerBound
        endIndex = offsets.upperBound
    }

    subscript(_ i: Int) -> Unicode.Scalar { .placeholder }
    subscript(_ bounds: Range<Int>) -> PlaceholderRun { PlaceholderRun(bounds) }
}

extension Unicode.Scalar: ListElement {
    typealias Store = ScalarStore

    /// What stands for a character a load has not read yet (a block whose text a state section
    /// holds: the replay inserts these, and the text is written in over them). U+001A
    /// SUBSTITUTE, which is Latin-1: a body holding placeholders stays one byte a scalar.
    static var placeholder: Unicode.Scalar { "\u{1A}" }
}

extension LocalID: ListElement {
    typealias Store = ArrayStore<LocalID>
}
