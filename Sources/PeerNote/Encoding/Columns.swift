// Columnar integer encodings for PeerNote history: LEB128 varints, run-length
// encoded integer columns, delta columns, boolean columns and the column-set
// container that lays several columns out in one byte string.
//
// Conventions used throughout this file:
// * A `base` parameter is the absolute file offset of the *first* byte of the
//   bytes passed alongside it (`bytes.startIndex` for a slice, whatever its
//   indices are). Every `ColumnError.offset` is absolute in the file.
// * Encodings are canonical: encoders are deterministic, varints are minimal
//   and decoders reject non-minimal varints, so one value sequence has exactly
//   one byte representation produced by these encoders.
// * Decoders never allocate more than they can justify: see
//   `ColumnAllocationPolicy`.
//
// LEB128 varints and the byte writer and reader are in LEB128.swift; the column set in
// ColumnSet.swift.


/// Why column bytes could not be read.
///
/// `offset` is the absolute file offset of the offending item (usually the
/// first byte of the varint or run that was rejected); `message` says what was
/// wrong with it.
struct ColumnError: Error, Equatable, CustomStringConvertible {
    var offset: Int
    var message: String

    var description: String { "column data invalid at offset \(offset): \(message)" }
}

// MARK: - Run-length core (shared by UInt and Int columns)

/// How a value type is written inside a run-length column.
private protocol RunLengthValueCodec {
    associatedtype Value: FixedWidthInteger & Sendable
    static func write(_ v: Value, to out: inout [UInt8])
    static func read(_ p: UnsafeBufferPointer<UInt8>, _ i: inout Int, base: Int) throws(ColumnError) -> Value
}

private enum UnsignedValueCodec: RunLengthValueCodec {
    @inline(__always)
    static func write(_ v: UInt64, to out: inout [UInt8]) { LEB128.appendUnsigned(v, to: &out) }
    @inline(__always)
    static func read(_ p: UnsafeBufferPointer<UInt8>, _ i: inout Int, base: Int) throws(ColumnError) -> UInt64 {
        try LEB128.readUnsigned(p, &i, base: base)
    }
}

private enum SignedValueCodec: RunLengthValueCodec {
    @inline(__always)
    static func write(_ v: Int64, to out: inout [UInt8]) { LEB128.appendSigned(v, to: &out) }
    @inline(__always)
    static func read(_ p: UnsafeBufferPointer<UInt8>, _ i: inout Int, base: Int) throws(ColumnError) -> Int64 {
        try LEB128.readSigned(p, &i, base: base)
    }
}

/// Bounds on what column decoders allocate.
///
/// A decoder fills exactly `count` values and rejects any run longer than the
/// values still expected, so it never produces more than `count`. Before it
/// allocates `count` values it also makes sure the allocation is justified:
/// when `count` is at most `directRatio` values per input byte it allocates at
/// once (≤ 16 values per byte); otherwise it first validates the whole column
/// without allocating and only then allocates. So the memory used is bounded
/// by `16 × bytes.count` values or by a `count` the bytes really encode —
/// never by a bare claim. (A fixed values-per-byte cap would reject legitimate
/// columns: a million equal values encode in four bytes.)
private enum ColumnAllocationPolicy {
    static let directRatio = 16

    /// True when `count` values may be allocated before the column is validated.
    static func mayAllocateDirectly(count: Int, byteCount: Int) -> Bool {
        count / directRatio <= byteCount
    }
}

/// Deterministic run-length encoder state machine (Automerge's RLE encoder).
///
/// Repeat runs cover ≥ 2 equal consecutive values; everything else goes into
/// literal runs, and adjacent literal values are merged into one run. Pending
/// literal values are kept already encoded in `literal` to avoid per-value
/// allocation.
private struct RunLengthEncoder<Codec: RunLengthValueCodec> {
    private enum Mode { case empty, lone, run, literal }

    private var out: [UInt8] = []
    private var literal: [UInt8] = []
    private var literalCount = 0
    private var mode = Mode.empty
    /// The lone value, the repeated value, or the last (still pending) literal value.
    private var current: Codec.Value = 0
    private var runLength = 0
    private(set) var count = 0

    /// Appends `v`. Inlined for its common case, a value that repeats the run being counted
    /// (columns of a long history are mostly runs); everything else goes to `appendOther`.
    @inline(__always)
    mutating func append(_ v: Codec.Value) {
        if mode == .run && v == current {
            count += 1
            runLength += 1
            return
        }
        appendOther(v)
    }

    /// Appends `v` `n` times: the same bytes as `n` single appends, in constant time (after
    /// two appends of one value the encoder counts a run of it).
    mutating func append(_ v: Codec.Value, count n: Int) {
        guard n > 0 else { return }
        append(v)
        guard n > 1 else { return }
        append(v)
        count += n - 2
        runLength += n - 2
    }

    private mutating func appendOther(_ v: Codec.Value) {
        count += 1
        switch mode {
        case .empty:
            current = v
            mode = .lone
        case .lone:
            if v == current {
                runLength = 2
                mode = .run
            } else {
                Codec.write(current, to: &literal)
                literalCount = 1
                current = v
                mode = .literal
            }
        case .run:
            if v == current {
                runLength += 1
            } else {
                flushRun()
                current = v
                mode = .lone
            }
        case .literal:
            if v == current {
                flushLiteral()
                runLength = 2
                mode = .run
            } else {
                Codec.write(current, to: &literal)
                literalCount += 1
                current = v
            }
        }
    }

    private mutating func flushRun() {
        LEB128.appendSigned(Int64(runLength), to: &out)
        Codec.write(current, to: &out)
        runLength = 0
    }

    private mutating func flushLiteral() {
        LEB128.appendSigned(-Int64(literalCount), to: &out)
        out.append(contentsOf: literal)
        literal.removeAll(keepingCapacity: true)
        literalCount = 0
    }

    func finish() -> [UInt8] {
        var copy = self
        switch copy.mode {
        case .empty:
            break
        case .lone:
            LEB128.appendSigned(-1, to: &copy.out)
            Codec.write(copy.current, to: &copy.out)
        case .run:
            copy.flushRun()
        case .literal:
            Codec.write(copy.current, to: &copy.literal)
            copy.literalCount += 1
            copy.flushLiteral()
        }
        return copy.out
    }
}

/// `count` consecutive values of a column, all equal to `value`.
struct ColumnRun<Value: Equatable & Sendable>: Equatable, Sendable {
    var value: Value
    var count: Int
}

/// `count` consecutive values of a delta column: `first`, `first + step`, `first + 2 × step`, ...
/// (`last` is the run's last value).
struct DeltaRun: Equatable, Sendable {
    var first: Int64
    var step: Int64
    var count: Int
    var last: Int64
    /// The run's `k`-th value.
    @inline(__always) func value(_ k: Int) -> Int64 { first &+ step &* Int64(k) }
}

/// Run-length decoder shared by the unsigned and signed integer columns.
private enum RunLengthDecoder<Codec: RunLengthValueCodec> {
    /// False for a column of zero values (which must have no bytes); throws for a negative count.
    private static func holdsValues(_ bytes: ArraySlice<UInt8>, base: Int, count: Int, kind: String) throws(ColumnError) -> Bool {
        guard count >= 0 else {
            throw ColumnError(offset: base, message: "\(kind) column: negative value count \(count)")
        }
        if count == 0 {
            guard bytes.isEmpty else {
                throw ColumnError(offset: base, message: "\(kind) column: \(bytes.count) bytes for zero values")
            }
            return false
        }
        return true
    }

    static func decode(
        _ bytes: ArraySlice<UInt8>, base: Int, count: Int, kind: String
    ) throws(ColumnError) -> [Codec.Value] {
        guard try holdsValues(bytes, base: base, count: count, kind: kind) else { return [] }
        return try bytes.withUnsafeBufferPointer { (p) throws(ColumnError) -> [Codec.Value] in
            if !ColumnAllocationPolicy.mayAllocateDirectly(count: count, byteCount: p.count) {
                // Validate first so a tiny column cannot make us allocate `count`.
                try walk(p, base: base, count: count, kind: kind, into: nil)
            }
            return try [Codec.Value](unsafeUninitializedCapacity: count) {
                (buffer, initialized) throws(ColumnError) in
                guard let start = buffer.baseAddress else {
                    throw ColumnError(offset: base, message: "\(kind) column: allocation failed")
                }
                try walk(p, base: base, count: count, kind: kind, into: start, initialized: &initialized)
            }
        }
    }

    /// The column as runs of equal values (a literal run gives a run per value), with the
    /// checks of `decode`. There are at most as many runs as the column has bytes, so the
    /// allocation is bounded by the bytes whatever `count` claims.
    static func decodeRuns(
        _ bytes: ArraySlice<UInt8>, base: Int, count: Int, kind: String
    ) throws(ColumnError) -> [ColumnRun<Codec.Value>] {
        guard try holdsValues(bytes, base: base, count: count, kind: kind) else { return [] }
        return try bytes.withUnsafeBufferPointer { (p) throws(ColumnError) -> [ColumnRun<Codec.Value>] in
            var runs: [ColumnRun<Codec.Value>] = []
            try walk(p, base: base, count: count, kind: kind) { v, n in
                // A literal value equal to the run before it (an encoder would not write that) joins it.
                if let last = runs.last, last.value == v { runs[runs.count - 1].count += n } else { runs.append(ColumnRun(value: v, count: n)) }
            }
            return runs
        }
    }

    /// Validation-only walk (no output).
    private static func walk(
        _ p: UnsafeBufferPointer<UInt8>, base: Int, count: Int, kind: String,
        into: UnsafeMutablePointer<Codec.Value>?
    ) throws(ColumnError) {
        var ignored = 0
        try walk(p, base: base, count: count, kind: kind, into: into, initialized: &ignored)
    }

    /// Parses every run, checking each against the values still expected.
    /// When `out` is non-nil, values are written there and `initialized`
    /// tracks how many have been.
    @inline(__always)
    private static func walk(
        _ p: UnsafeBufferPointer<UInt8>, base: Int, count: Int, kind: String,
        into out: UnsafeMutablePointer<Codec.Value>?, initialized: inout Int
    ) throws(ColumnError) {
        var filled = 0
        try walk(p, base: base, count: count, kind: kind) { v, m in
            if let out {
                (out + filled).initialize(repeating: v, count: m)
                initialized = filled + m
            }
            filled += m
        }
    }

    /// Parses every run, checking each against the values still expected, and hands each
    /// value to `emit` with how many times it repeats (1 for a literal run's values).
    @inline(__always)
    private static func walk(
        _ p: UnsafeBufferPointer<UInt8>, base: Int, count: Int, kind: String,
        emit: (Codec.Value, Int) -> Void
    ) throws(ColumnError) {
        var i = 0
        var filled = 0
        while filled < count {
            if i == p.count {
                throw ColumnError(
                    offset: base + i,
                    message: "\(kind) column ends after \(filled) of \(count) values")
            }
            let runStart = i
            let n = try LEB128.readSigned(p, &i, base: base)
            let remaining = count - filled
            if n > 0 {
                guard n <= Int64(remaining) else {
                    throw ColumnError(
                        offset: base + runStart,
                        message: "\(kind) column: repeat run of \(n) exceeds the \(remaining) values still expected")
                }
                let v = try Codec.read(p, &i, base: base)
                let m = Int(n)
                emit(v, m)
                filled += m
            } else if n < 0 {
                guard n.magnitude <= UInt64(remaining) else {
                    throw ColumnError(
                        offset: base + runStart,
                        message: "\(kind) column: literal run of \(n.magnitude) exceeds the \(remaining) values still expected")
                }
                let m = Int(n.magnitude)
                for _ in 0..<m { emit(try Codec.read(p, &i, base: base), 1) }
                filled += m
            } else {
                throw ColumnError(offset: base + runStart, message: "\(kind) column: run length 0")
            }
        }
        guard i == p.count else {
            throw ColumnError(
                offset: base + i,
                message: "\(kind) column: \(p.count - i) trailing bytes after \(count) values")
        }
    }
}

// MARK: - UIntColumn

/// Encodes a sequence of `UInt64` as an Automerge-style run-length column.
///
/// Layout: runs, each a signed LEB128 `n` then either one ULEB128 value repeated
/// `n > 0` times or `-n` literal ULEB128 values (`n < 0`); `n == 0` never occurs.
/// Output is deterministic: repeat runs for ≥ 2 equal consecutive values,
/// maximal literal runs otherwise. An empty column encodes to no bytes.
struct UIntColumnEncoder {
    private var core = RunLengthEncoder<UnsignedValueCodec>()

    init() {}

    /// Number of values appended so far.
    var count: Int { core.count }

    @inline(__always) mutating func append(_ v: UInt64) { core.append(v) }

    /// Appends `v` `n` times (the bytes of `n` single appends).
    mutating func append(_ v: UInt64, count n: Int) { core.append(v, count: n) }

    /// The encoded column (does not reset the encoder).
    func finish() -> [UInt8] { core.finish() }
}

/// Decodes a column written by `UIntColumnEncoder`.
///
/// Returns exactly `count` values or throws: on a malformed varint, a run of
/// length 0, a run longer than the values still expected, too few values, or
/// bytes left over. Non-canonical but well-formed run splits are accepted.
/// Allocation is bounded as described on `ColumnAllocationPolicy`.
enum UIntColumnDecoder {
    /// - Parameters:
    ///   - bytes: the column bytes (exactly the column, nothing after it).
    ///   - base: absolute file offset of `bytes.first`.
    ///   - count: number of values the column must hold.
    static func decode(_ bytes: ArraySlice<UInt8>, base: Int, count: Int) throws(ColumnError) -> [UInt64] {
        try RunLengthDecoder<UnsignedValueCodec>.decode(bytes, base: base, count: count, kind: "uint")
    }

    /// The same column as runs of equal values (at most one run per byte), with the same checks.
    static func decodeRuns(_ bytes: ArraySlice<UInt8>, base: Int, count: Int) throws(ColumnError) -> [ColumnRun<UInt64>] {
        try RunLengthDecoder<UnsignedValueCodec>.decodeRuns(bytes, base: base, count: count, kind: "uint")
    }
}

// MARK: - IntColumn

/// Encodes a sequence of `Int64` as a run-length column: the same layout as
/// `UIntColumnEncoder` but with SLEB128 (two's complement) values.
/// Deterministic; an empty column encodes to no bytes.
struct IntColumnEncoder {
    private var core = RunLengthEncoder<SignedValueCodec>()

    init() {}

    /// Number of values appended so far.
    var count: Int { core.count }

    @inline(__always) mutating func append(_ v: Int64) { core.append(v) }

    /// Appends `v` `n` times (the bytes of `n` single appends).
    mutating func append(_ v: Int64, count n: Int) { core.append(v, count: n) }

    /// The encoded column (does not reset the encoder).
    func finish() -> [UInt8] { core.finish() }
}

/// Decodes a column written by `IntColumnEncoder`; same checks and
/// allocation bounds as `UIntColumnDecoder`.
enum IntColumnDecoder {
    /// - Parameters:
    ///   - bytes: the column bytes (exactly the column, nothing after it).
    ///   - base: absolute file offset of `bytes.first`.
    ///   - count: number of values the column must hold.
    static func decode(_ bytes: ArraySlice<UInt8>, base: Int, count: Int) throws(ColumnError) -> [Int64] {
        try RunLengthDecoder<SignedValueCodec>.decode(bytes, base: base, count: count, kind: "int")
    }
}

// MARK: - DeltaColumn

/// Encodes `Int64` values as the differences `value[i] - value[i-1]`
/// (with `value[-1] = 0`) stored in an `IntColumnEncoder` column.
///
/// Precondition: each difference must fit in `Int64` (true for counters,
/// timestamps and sequence numbers; fails only for pairs like `Int64.min`
/// followed by `Int64.max`). Violating it traps, because the decoder would
/// reject the overflowing sum.
struct DeltaColumnEncoder {
    private var inner = IntColumnEncoder()
    private var last: Int64 = 0

    init() {}

    /// Number of values appended so far.
    var count: Int { inner.count }

    @inline(__always)
    mutating func append(_ v: Int64) {
        let (delta, overflow) = v.subtractingReportingOverflow(last)
        precondition(!overflow, "DeltaColumnEncoder: difference \(v) - \(last) does not fit in Int64")
        inner.append(delta)
        last = v
    }

    /// Appends `n` values, each `step` more than the one before it (the last value appended, or
    /// 0): the bytes of `n` single appends.
    mutating func append(steps step: Int64, count n: Int) {
        guard n > 0 else { return }
        let (total, o1) = step.multipliedReportingOverflow(by: Int64(n))
        let (end, o2) = last.addingReportingOverflow(total)
        precondition(!o1 && !o2, "DeltaColumnEncoder: \(n) steps of \(step) from \(last) do not fit in Int64")
        inner.append(step, count: n)
        last = end
    }

    /// The encoded column (does not reset the encoder).
    func finish() -> [UInt8] { inner.finish() }
}

/// Decodes a column written by `DeltaColumnEncoder`: an `IntColumnDecoder`
/// column followed by a running sum. Throws (rather than trapping) if the sum
/// leaves `Int64`; the error's offset is the column start because positions of
/// individual values are not tracked.
enum DeltaColumnDecoder {
    /// - Parameters:
    ///   - bytes: the column bytes (exactly the column, nothing after it).
    ///   - base: absolute file offset of `bytes.first`.
    ///   - count: number of values the column must hold.
    static func decode(_ bytes: ArraySlice<UInt8>, base: Int, count: Int) throws(ColumnError) -> [Int64] {
        var values = try RunLengthDecoder<SignedValueCodec>.decode(bytes, base: base, count: count, kind: "delta")
        try values.withUnsafeMutableBufferPointer { (buffer) throws(ColumnError) in
            var sum: Int64 = 0
            for k in buffer.indices {
                let (next, overflow) = sum.addingReportingOverflow(buffer[k])
                if overflow {
                    throw ColumnError(offset: base, message: "delta column: value \(k) overflows Int64")
                }
                sum = next
                buffer[k] = next
            }
        }
        return values
    }

    /// The same column as runs of equally spaced values (one per run of equal differences),
    /// with the same checks and messages.
    static func decodeRuns(_ bytes: ArraySlice<UInt8>, base: Int, count: Int) throws(ColumnError) -> [DeltaRun] {
        let steps = try RunLengthDecoder<SignedValueCodec>.decodeRuns(bytes, base: base, count: count, kind: "delta")
        var runs: [DeltaRun] = []
        runs.reserveCapacity(steps.count)
        var sum: Int64 = 0, k = 0
        for r in steps {
            let (first, overflow) = sum.addingReportingOverflow(r.value)
            if overflow { throw ColumnError(offset: base, message: "delta column: value \(k) overflows Int64") }
            // How many steps fit between the first value and the end of Int64 it heads for (the
            // distance taken unsigned, which holds it), so the first value outside is found exactly.
            if r.count > 1 && r.value != 0 {
                let room = r.value > 0 ? UInt64(bitPattern: Int64.max) &- UInt64(bitPattern: first) : UInt64(bitPattern: first) &- UInt64(bitPattern: Int64.min)
                let fitting = room / r.value.magnitude
                if fitting < UInt64(r.count - 1) {
                    throw ColumnError(offset: base, message: "delta column: value \(k + Int(fitting) + 1) overflows Int64")
                }
            }
            // Every value of the run fits, so the wrapping arithmetic is exact.
            let last = first &+ r.value &* Int64(r.count - 1)
            runs.append(DeltaRun(first: first, step: r.value, count: r.count, last: last))
            sum = last
            k += r.count
        }
        return runs
    }
}

// MARK: - BoolColumn

/// Encodes booleans as alternating ULEB128 run lengths, starting with a run of
/// `false` (which is 0 when the first value is `true`).
///
/// Invariants: every run after the first is ≥ 1; an empty column encodes to no
/// bytes; output is deterministic.
struct BoolColumnEncoder {
    private var out: [UInt8] = []
    private var current = false
    private var runLength: UInt64 = 0
    private(set) var count = 0

    init() {}

    mutating func append(_ v: Bool) {
        count += 1
        if v == current {
            runLength += 1
        } else {
            LEB128.appendUnsigned(runLength, to: &out)
            current = v
            runLength = 1
        }
    }

    /// The encoded column (does not reset the encoder).
    func finish() -> [UInt8] {
        guard count > 0 else { return [] }
        var copy = out
        LEB128.appendUnsigned(runLength, to: &copy)
        return copy
    }
}

/// Decodes a column written by `BoolColumnEncoder`.
///
/// Returns exactly `count` values or throws: on a malformed varint, a zero run
/// other than the first, a run longer than the values still expected, too few
/// values, or bytes left over (a column for zero values must be empty).
/// Allocation is bounded as for `UIntColumnDecoder`.
enum BoolColumnDecoder {
    /// - Parameters:
    ///   - bytes: the column bytes (exactly the column, nothing after it).
    ///   - base: absolute file offset of `bytes.first`.
    ///   - count: number of values the column must hold.
    static func decode(_ bytes: ArraySlice<UInt8>, base: Int, count: Int) throws(ColumnError) -> [Bool] {
        guard count >= 0 else {
            throw ColumnError(offset: base, message: "bool column: negative value count \(count)")
        }
        if count == 0 {
            guard bytes.isEmpty else {
                throw ColumnError(offset: base, message: "bool column: \(bytes.count) bytes for zero values")
            }
            return []
        }
        return try bytes.withUnsafeBufferPointer { (p) throws(ColumnError) -> [Bool] in
            if !ColumnAllocationPolicy.mayAllocateDirectly(count: count, byteCount: p.count) {
                _ = try walk(p, base: base, count: count, into: nil)
            }
            return try [Bool](unsafeUninitializedCapacity: count) { (buffer, initialized) throws(ColumnError) in
                guard let start = buffer.baseAddress else {
                    throw ColumnError(offset: base, message: "bool column: allocation failed")
                }
                initialized = try walk(p, base: base, count: count, into: start)
            }
        }
    }

    /// Parses the runs; writes values to `out` when given. Returns the number
    /// of values written (always `count` on success; trivially-typed output
    /// needs no cleanup on failure).
    @inline(__always)
    private static func walk(
        _ p: UnsafeBufferPointer<UInt8>, base: Int, count: Int, into out: UnsafeMutablePointer<Bool>?
    ) throws(ColumnError) -> Int {
        var i = 0
        var filled = 0
        var value = false
        var isFirstRun = true
        while filled < count {
            if i == p.count {
                throw ColumnError(offset: base + i, message: "bool column ends after \(filled) of \(count) values")
            }
            let runStart = i
            let n = try LEB128.readUnsigned(p, &i, base: base)
            let remaining = count - filled
            if n == 0 && !isFirstRun {
                throw ColumnError(offset: base + runStart, message: "bool column: run length 0")
            }
            guard n <= UInt64(remaining) else {
                throw ColumnError(
                    offset: base + runStart,
                    message: "bool column: run of \(n) exceeds the \(remaining) values still expected")
            }
            let m = Int(n)
            if let out, m > 0 {
                (out + filled).initialize(repeating: value, count: m)
            }
            filled += m
            value.toggle()
            isFirstRun = false
        }
        guard i == p.count else {
            throw ColumnError(offset: base + i, message: "bool column: \(p.count - i) trailing bytes after \(count) values")
        }
        return filled
    }
}
