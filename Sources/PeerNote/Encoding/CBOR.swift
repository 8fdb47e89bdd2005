// The only file in PeerNote that talks to libcbor. Everything else works with
// `CBORItem` trees, `CBORDecoder` and `CBOREncoder`.
import CLibCBOR

// MARK: - Decoded items

/// A CBOR data item as read from bytes: unverified, with where it sits in the input.
/// Invariant (for decoder output): `offset < end`, and `input[offset..<end]` are exactly the item's raw bytes.
struct CBORItem: Sendable, Equatable {
    var offset: Int
    var end: Int
    var value: CBORValue
}

/// One entry of a CBOR map; maps keep their entries in input order (duplicates are not removed).
struct CBORPair: Sendable, Equatable {
    var key: CBORItem
    var value: CBORItem
}

/// The value of a CBOR data item. Strings and containers are definite-length only.
/// `.float` holds half, single and double alike, so NaN != NaN under `==`.
indirect enum CBORValue: Sendable, Equatable {
    case unsigned(UInt64)
    case negative(UInt64)          // represents -1 - n
    case bytes([UInt8])
    case text(String)
    case array([CBORItem])
    case map([CBORPair])
    case tagged(UInt64, CBORItem)
    case bool(Bool), null, undefined
    case simple(UInt8)             // simple values other than false/true/null/undefined
    case float(Double)
}

extension CBORItem {
    var uint: UInt64? { if case .unsigned(let v) = value { v } else { nil } }
    /// Major type 0 or 1 as an `Int64`, or nil if it is not an integer or does not fit.
    var int: Int64? {
        switch value {
        case .unsigned(let v): v <= UInt64(Int64.max) ? Int64(v) : nil
        case .negative(let n): n <= UInt64(Int64.max) ? -1 - Int64(n) : nil
        default: nil
        }
    }
    var bytesValue: [UInt8]? { if case .bytes(let b) = value { b } else { nil } }
    var textValue: String? { if case .text(let s) = value { s } else { nil } }
    var boolValue: Bool? { if case .bool(let b) = value { b } else { nil } }
    var array: [CBORItem]? { if case .array(let a) = value { a } else { nil } }
    var map: [CBORPair]? { if case .map(let m) = value { m } else { nil } }
    var isNull: Bool { value == .null }
    /// The tag number and tagged item, if this item is a tag.
    var tagged: (tag: UInt64, item: CBORItem)? { if case .tagged(let t, let i) = value { (t, i) } else { nil } }
    /// The value of the first entry whose key is the unsigned integer `key` (nil if not a map or absent).
    func mapValue(forKey key: UInt64) -> CBORItem? { map?.first { $0.key.uint == key }?.value }
    /// The value of the first entry whose key is the text string `key` (nil if not a map or absent).
    func mapValue(forKey key: String) -> CBORItem? { map?.first { $0.key.textValue == key }?.value }
}

// MARK: - Decoding

/// A decoding failure: `offset` is the absolute byte offset in the input of the item at fault,
/// `problem` what is wrong there. Callers decide on `problem`; `message` words it.
struct CBORDecodeError: Error, Equatable, CustomStringConvertible {
    /// One case per check the reader makes.
    enum Problem: Equatable, Sendable {
        /// Reading was asked to start at `offset`, outside an input of `inputSize` bytes.
        case startOutsideInput(offset: Int, inputSize: Int)
        /// The input ends inside an item (a head, or a container's elements).
        case endOfInput
        /// More data items than `CBORLimits.maxItems`.
        case tooManyItems(limit: Int)
        /// Containers nested deeper than `CBORLimits.maxDepth`.
        case tooDeep(limit: Int)
        /// An array head declares more elements than bytes remain.
        case countExceedsInput(count: UInt64, remaining: Int)
        /// A map head declares more entries than the bytes that remain can hold.
        case mapSizeExceedsInput(count: UInt64, remaining: Int)
        /// A byte or text string's head declares more bytes than remain.
        case lengthExceedsInput(length: UInt64, remaining: Int)
        /// A text string whose bytes are not UTF-8.
        case invalidUTF8
        /// An indefinite-length item or a break code (`initialByte`), which the format forbids.
        case indefiniteLength(initialByte: UInt8)
        /// A simple value below 32 in the two-byte form.
        case simpleValueTwoByteForm(UInt8)
        /// A reserved or ill-formed initial byte.
        case malformed(initialByte: UInt8)
        /// A head the reader does not expect where it stands (a reader bug, not the input's).
        case unexpectedHead

        /// Whether the input ends before the item does: its bytes end inside it, or it declares a
        /// string, array or map larger than what remains (a file cut short, or damaged there).
        var inputEndsInsideItem: Bool {
            switch self {
            case .endOfInput, .countExceedsInput, .mapSizeExceedsInput, .lengthExceedsInput: true
            case .startOutsideInput, .tooManyItems, .tooDeep, .invalidUTF8, .indefiniteLength, .simpleValueTwoByteForm,
                 .malformed, .unexpectedHead: false
            }
        }

        /// What is wrong, in one line.
        var message: String {
            switch self {
            case .startOutsideInput(let offset, let size): "offset \(offset) is outside the \(size)-byte input"
            case .endOfInput: "unexpected end of input"
            case .tooManyItems(let limit): "more than \(limit) items"
            case .tooDeep(let limit): "nesting deeper than \(limit) levels"
            case .countExceedsInput(let n, let remaining): "declared count \(n) exceeds the \(remaining) bytes that remain"
            case .mapSizeExceedsInput(let n, let remaining): "declared map size \(n) needs more than the \(remaining) bytes that remain"
            case .lengthExceedsInput(let n, let remaining): "declared length \(n) exceeds the \(remaining) bytes that remain"
            case .invalidUTF8: "text string is not valid UTF-8"
            case .indefiniteLength(let initial): "indefinite-length items are not allowed (initial byte 0x\(Hex.string([initial])))"
            case .simpleValueTwoByteForm(let v): "simple value \(v) must use the one-byte form"
            case .malformed(let initial): "malformed item: initial byte 0x\(Hex.string([initial])) is reserved or not well-formed"
            case .unexpectedHead: "internal: unexpected head state"
            }
        }
    }

    var offset: Int
    var problem: Problem
    var message: String { problem.message }
    var description: String { "CBOR error at byte \(offset): \(message)" }
}

/// Resource limits for decoding. `maxDepth` counts enclosing arrays, maps and tags;
/// `maxItems` counts every data item (heads) across one decode call. Reading never recurses,
/// but a decoded tree is freed, compared and re-encoded recursively: keep `maxDepth` in the hundreds.
struct CBORLimits: Sendable {
    var maxDepth = 64
    var maxItems = 10_000_000
}

/// One head as reported by a libcbor callback. Strings carry only their length;
/// the payload is taken from the input, right before `result.read`.
private enum Head {
    case none, indefinite, breakCode
    case unsigned(UInt64), negative(UInt64), bytes(UInt64), text(UInt64)
    case array(UInt64), map(UInt64), tag(UInt64)
    case bool(Bool), null, undefined, simple(UInt8), float(Double)
}

private func record(_ context: UnsafeMutableRawPointer?, _ head: Head) {
    context?.assumingMemoryBound(to: Head.self).pointee = head
}

/// Callbacks that store the single head `cbor_stream_decode` just read into the `Head` behind `context`.
/// (`size_t` arrives as `Int`, so lengths/counts ≥ 2^63 are reinterpreted, never trapped on.)
private let headCallbacks: cbor_callbacks = {
    var c = cbor_empty_callbacks
    c.uint8 = { record($0, .unsigned(UInt64($1))) }
    c.uint16 = { record($0, .unsigned(UInt64($1))) }
    c.uint32 = { record($0, .unsigned(UInt64($1))) }
    c.uint64 = { record($0, .unsigned($1)) }
    c.negint8 = { record($0, .negative(UInt64($1))) }
    c.negint16 = { record($0, .negative(UInt64($1))) }
    c.negint32 = { record($0, .negative(UInt64($1))) }
    c.negint64 = { record($0, .negative($1)) }
    c.byte_string = { ctx, _, length in record(ctx, .bytes(UInt64(UInt(bitPattern: length)))) }
    c.string = { ctx, _, length in record(ctx, .text(UInt64(UInt(bitPattern: length)))) }
    c.array_start = { record($0, .array(UInt64(UInt(bitPattern: $1)))) }
    c.map_start = { record($0, .map(UInt64(UInt(bitPattern: $1)))) }
    c.tag = { record($0, .tag($1)) }
    c.float2 = { record($0, .float(Double($1))) }
    c.float4 = { record($0, .float(Double($1))) }
    c.float8 = { record($0, .float($1)) }
    c.boolean = { record($0, .bool($1)) }
    c.null = { record($0, .null) }
    c.undefined = { record($0, .undefined) }
    c.byte_string_start = { record($0, .indefinite) }
    c.string_start = { record($0, .indefinite) }
    c.indef_array_start = { record($0, .indefinite) }
    c.indef_map_start = { record($0, .indefinite) }
    c.indef_break = { record($0, .breakCode) }
    return c
}()

/// `headCallbacks` at one address, for every call: `withUnsafePointer(to: headCallbacks)` copied
/// the two dozen function pointers to the stack for each head read. Written once, when first
/// used (a global's initialisation runs once, under a lock), and only read after, so reading it
/// from several threads is safe.
nonisolated(unsafe) private let headCallbacksAddress: UnsafePointer<cbor_callbacks> = {
    let address = UnsafeMutablePointer<cbor_callbacks>.allocate(capacity: 1)
    address.initialize(to: headCallbacks)
    return UnsafePointer(address)
}()

/// Iterative, allocation-bounded CBOR decoder over libcbor's `cbor_stream_decode`.
/// Reads one head per libcbor call and keeps open containers on an explicit stack, so
/// nesting never recurses on the Swift stack. Every declared length or count is checked
/// against the remaining input before anything is allocated, so memory stays O(input size).
/// Rejects indefinite lengths, break codes, invalid UTF-8 and malformed heads.
/// Truncated input throws "unexpected end of input" at the offset of the innermost item
/// the input ends inside of (a cut head, or the open array/map/tag still missing elements).
enum CBORDecoder {
    /// Decodes exactly one item starting at `offset`; returns it (offsets absolute into `bytes`).
    /// Bytes after the item are ignored; its `end` says where they start.
    static func decodeItem(_ bytes: [UInt8], at offset: Int = 0, limits: CBORLimits = .init()) throws(CBORDecodeError) -> CBORItem {
        var itemCount = 0
        return try decode(bytes, at: offset, limits: limits, itemCount: &itemCount)
    }

    /// Decodes a CBOR sequence (RFC 8742): items back to back until the end of input.
    /// Empty input is an empty sequence; `limits.maxItems` applies to the whole sequence.
    static func decodeSequence(_ bytes: [UInt8], limits: CBORLimits = .init()) throws(CBORDecodeError) -> [CBORItem] {
        var items: [CBORItem] = []
        var itemCount = 0
        var offset = 0
        while offset < bytes.count {
            let item = try decode(bytes, at: offset, limits: limits, itemCount: &itemCount)
            items.append(item)
            offset = item.end
        }
        return items
    }

    /// An array, map or tag whose elements are still being read.
    private struct Frame {
        enum Kind { case array, map, tag(UInt64) }
        var kind: Kind
        var offset: Int
        var missing: Int          // elements still expected (a map entry counts as 2)
        var items: [CBORItem] = []
    }

    private static func decode(_ bytes: [UInt8], at start: Int, limits: CBORLimits, itemCount: inout Int) throws(CBORDecodeError) -> CBORItem {
        guard start >= 0, start <= bytes.count else {
            throw CBORDecodeError(offset: start, problem: .startOutsideInput(offset: start, inputSize: bytes.count))
        }
        var stack: [Frame] = []
        var pos = start
        while true {
            guard pos < bytes.count else {
                throw CBORDecodeError(offset: stack.last?.offset ?? pos, problem: .endOfInput)
            }
            itemCount += 1
            guard itemCount <= limits.maxItems else {
                throw CBORDecodeError(offset: pos, problem: .tooManyItems(limit: limits.maxItems))
            }
            let (head, end) = try readHead(bytes, at: pos)
            let remaining = bytes.count - end
            var value: CBORValue
            switch head {
            case .array(let n), .map(let n), .tag(let n):
                guard stack.count < limits.maxDepth else {
                    throw CBORDecodeError(offset: pos, problem: .tooDeep(limit: limits.maxDepth))
                }
                var frame: Frame
                switch head {
                case .array:
                    guard n <= UInt64(remaining) else {
                        throw CBORDecodeError(offset: pos, problem: .countExceedsInput(count: n, remaining: remaining))
                    }
                    frame = Frame(kind: .array, offset: pos, missing: Int(n))
                case .map:
                    guard n <= UInt64(remaining / 2) else {
                        throw CBORDecodeError(offset: pos, problem: .mapSizeExceedsInput(count: n, remaining: remaining))
                    }
                    frame = Frame(kind: .map, offset: pos, missing: 2 * Int(n))
                default:
                    frame = Frame(kind: .tag(n), offset: pos, missing: 1)
                }
                if frame.missing > 0 {
                    frame.items.reserveCapacity(frame.missing)   // bounded by `remaining` above
                    stack.append(frame)
                    pos = end
                    continue
                }
                if case .map = frame.kind { value = .map([]) } else { value = .array([]) }
            default:
                guard let leaf = try leaf(head, bytes, end: end, at: pos), let standalone = CBORValue(leaf) else {
                    throw CBORDecodeError(offset: pos, problem: .unexpectedHead)
                }
                value = standalone
            }
            // `value` is complete: attach it to its parents, closing every container it fills.
            var item = CBORItem(offset: pos, end: end, value: value)
            pos = end
            while !stack.isEmpty {
                let top = stack.count - 1
                stack[top].items.append(item)
                stack[top].missing -= 1
                guard stack[top].missing == 0 else { break }
                let frame = stack.removeLast()
                switch frame.kind {
                case .array: value = .array(frame.items)
                case .tag(let t): value = .tagged(t, frame.items[0])
                case .map:
                    value = .map(stride(from: 0, to: frame.items.count, by: 2).map {
                        CBORPair(key: frame.items[$0], value: frame.items[$0 + 1])
                    })
                }
                item = CBORItem(offset: frame.offset, end: item.end, value: value)
            }
            if stack.isEmpty { return item }
        }
    }

    /// The token of a head that stands alone (neither an array, a map nor a tag), a string's
    /// payload taken from `bytes` just before `end` (a text string checked to be UTF-8); nil for
    /// the others. `pos` is where the head starts.
    fileprivate static func leaf(_ head: Head, _ bytes: [UInt8], end: Int, at pos: Int) throws(CBORDecodeError) -> CBORToken? {
        switch head {
        case .unsigned(let v): return .unsigned(v)
        case .negative(let n): return .negative(n)
        case .bool(let b): return .bool(b)
        case .null: return .null
        case .undefined: return .undefined
        case .simple(let v): return .simple(v)
        case .float(let d): return .float(d)
        case .bytes(let n): return .bytes(bytes[(end - Int(n)) ..< end])
        case .text(let n):
            let raw = bytes[(end - Int(n)) ..< end]
            let string = String(decoding: raw, as: UTF8.self)
            guard isASCII(raw) || string.utf8.elementsEqual(raw) else {
                throw CBORDecodeError(offset: pos, problem: .invalidUTF8)
            }
            return .text(string)
        case .array, .map, .tag, .none, .indefinite, .breakCode: return nil
        }
    }

    /// Whether `raw` is valid UTF-8. Invalid UTF-8 decodes to replacement characters, so the
    /// bytes would differ; ASCII (most text, and checked in one fast pass) is valid as it is.
    static func isValidUTF8(_ raw: ArraySlice<UInt8>) -> Bool {
        isASCII(raw) || String(decoding: raw, as: UTF8.self).utf8.elementsEqual(raw)
    }

    /// Whether every byte is below 0x80, read eight bytes at a time (a state section's bodies
    /// are most of its bytes).
    static func isASCII(_ raw: ArraySlice<UInt8>) -> Bool {
        raw.withUnsafeBufferPointer { b in
            var i = 0
            var high: UInt64 = 0
            if let base = UnsafeRawPointer(b.baseAddress) {
                while i + 8 <= b.count {
                    high |= base.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                    i += 8
                }
            }
            var last: UInt8 = 0
            while i < b.count {
                last |= b[i]
                i += 1
            }
            return high & 0x8080_8080_8080_8080 == 0 && last < 0x80
        }
    }

    /// Reads the head at `pos` (plus a definite string's payload) with libcbor.
    /// Returns the head and the offset just past it. Requires `pos < bytes.count`.
    fileprivate static func readHead(_ bytes: [UInt8], at pos: Int) throws(CBORDecodeError) -> (Head, Int) {
        var head = Head.none
        let result = bytes.withUnsafeBufferPointer { buffer -> cbor_decoder_result in
            guard let base = buffer.baseAddress else { return cbor_decoder_result() }
            return withUnsafeMutablePointer(to: &head) { context in
                cbor_stream_decode(base + pos, buffer.count - pos, headCallbacksAddress, context)
            }
        }
        let initial = bytes[pos]
        let available = bytes.count - pos
        switch result.status {
        case CBOR_DECODER_FINISHED:
            let read = Int(result.read)
            switch head {
            case .indefinite, .breakCode:
                throw CBORDecodeError(offset: pos, problem: .indefiniteLength(initialByte: initial))
            case .bytes(let n) where n < UInt64(read) && read <= available: return (head, pos + read)
            case .text(let n) where n < UInt64(read) && read <= available: return (head, pos + read)
            case .bytes, .text, .none: break   // cannot happen: libcbor claimed the payload and called back
            default: if read >= 1 && read <= available { return (head, pos + read) }
            }
        case CBOR_DECODER_NEDATA:
            let info = initial & 0x1f   // 0...27 here: libcbor reports 28...31 as errors
            let extra = info < 24 ? 0 : 1 << Int(info - 24)
            guard available > extra else {
                throw CBORDecodeError(offset: pos, problem: .endOfInput)
            }
            guard initial >> 5 == 2 || initial >> 5 == 3 else { break }
            // The head is complete, so this is a definite string whose payload is cut short.
            let length = extra == 0 ? UInt64(info) : bytes[(pos + 1)...(pos + extra)].reduce(0) { $0 << 8 | UInt64($1) }
            throw CBORDecodeError(offset: pos, problem: .lengthExceedsInput(length: length, remaining: available - 1 - extra))
        default:
            // libcbor 0.8 rejects some well-formed heads: tags 6...20 and all simple values.
            switch initial {
            case 0xc6...0xd4: return (.tag(UInt64(initial - 0xc0)), pos + 1)
            case 0xe0...0xf3: return (.simple(initial & 0x1f), pos + 1)
            case 0xf8 where available < 2:
                throw CBORDecodeError(offset: pos, problem: .endOfInput)
            case 0xf8 where bytes[pos + 1] >= 32: return (.simple(bytes[pos + 1]), pos + 2)
            case 0xf8:
                throw CBORDecodeError(offset: pos, problem: .simpleValueTwoByteForm(bytes[pos + 1]))
            default: break
            }
        }
        throw CBORDecodeError(offset: pos, problem: .malformed(initialByte: initial))
    }

}
/// One head as `CBORReader` reads it: a string with its payload, a container with its count.
enum CBORToken {
    case unsigned(UInt64), negative(UInt64), bytes(ArraySlice<UInt8>), text(String)
    case array(Int), map(Int), tag(UInt64)
    case bool(Bool), null, undefined, simple(UInt8), float(Double)

    var uint: UInt64? { if case .unsigned(let v) = self { v } else { nil } }
    /// An integer of either sign that fits an `Int64`.
    var int: Int64? {
        switch self {
        case .unsigned(let v): v <= UInt64(Int64.max) ? Int64(v) : nil
        case .negative(let n): n <= UInt64(Int64.max) ? -1 - Int64(n) : nil
        default: nil
        }
    }
    var textValue: String? { if case .text(let s) = self { s } else { nil } }
    var boolValue: Bool? { if case .bool(let b) = self { b } else { nil } }
    /// A byte string's bytes (a slice of the bytes read, indexed as they are).
    var bytesValue: ArraySlice<UInt8>? { if case .bytes(let b) = self { b } else { nil } }
    /// An array's element count.
    var arrayCount: Int? { if case .array(let n) = self { n } else { nil } }
}

extension CBORValue {
    /// The value of a token that stands alone (`CBORDecoder.leaf`); nil for an array, map or
    /// tag, which the decoder builds from their elements.
    fileprivate init?(_ leaf: CBORToken) {
        switch leaf {
        case .unsigned(let v): self = .unsigned(v)
        case .negative(let n): self = .negative(n)
        case .bytes(let b): self = .bytes(Array(b))
        case .text(let s): self = .text(s)
        case .bool(let b): self = .bool(b)
        case .null: self = .null
        case .undefined: self = .undefined
        case .simple(let v): self = .simple(v)
        case .float(let d): self = .float(d)
        case .array, .map, .tag: return nil
        }
    }
}

/// Reads CBOR head by head, building no tree: for a layout known in advance (the state
/// section's one array per note), where `CBORDecoder`'s tree cost an allocation and a release
/// per item. Heads are checked as `CBORDecoder` checks them (definite lengths only, valid
/// UTF-8, strings and counts that fit the bytes that remain); the caller checks the layout,
/// reading each item as the kind it expects.
struct CBORReader {
    let bytes: [UInt8]
    /// Where the next head starts.
    private(set) var offset: Int

    init(_ bytes: [UInt8], at offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    /// Reads the next head (a string with its payload); `at` is where it starts.
    mutating func next() throws(CBORDecodeError) -> (token: CBORToken, at: Int) {
        let pos = offset
        guard pos >= 0, pos < bytes.count else { throw CBORDecodeError(offset: pos, problem: .endOfInput) }
        let (head, end) = try CBORDecoder.readHead(bytes, at: pos)
        let remaining = bytes.count - end
        let token: CBORToken
        switch head {
        case .array(let n):
            guard n <= UInt64(remaining) else {
                throw CBORDecodeError(offset: pos, problem: .countExceedsInput(count: n, remaining: remaining))
            }
            token = .array(Int(n))
        case .map(let n):
            guard n <= UInt64(remaining / 2) else {
                throw CBORDecodeError(offset: pos, problem: .mapSizeExceedsInput(count: n, remaining: remaining))
            }
            token = .map(Int(n))
        case .tag(let t): token = .tag(t)
        default:
            guard let leaf = try CBORDecoder.leaf(head, bytes, end: end, at: pos) else {
                throw CBORDecodeError(offset: pos, problem: .unexpectedHead)
            }
            token = leaf
        }
        offset = end
        return (token, pos)
    }

    /// The next head's value as `value` gives it from the head (its end given, to check a count
    /// against the bytes after it); when `value` gives nil, the head is read as `next()` reads
    /// it (with its errors) and `token` gives the result. The typed reads below skip making a
    /// `CBORToken` for the usual head: a state section has a dozen heads a note.
    @inline(__always)
    private mutating func nextValue<T>(_ value: (Head, Int) -> T?, else token: (CBORToken) -> T?) throws(CBORDecodeError) -> T? {
        let pos = offset
        guard pos >= 0, pos < bytes.count else { throw CBORDecodeError(offset: pos, problem: .endOfInput) }
        let (head, end) = try CBORDecoder.readHead(bytes, at: pos)
        guard let v = value(head, end) else { return token(try next().token) }
        offset = end
        return v
    }

    /// The next head when it is an unsigned integer: its value; else nil (see `nextValue`).
    mutating func nextUnsigned() throws(CBORDecodeError) -> UInt64? {
        try nextValue({ head, _ in if case .unsigned(let v) = head { v } else { nil } }, else: \.uint)
    }

    /// The next head when it is an integer of either sign that fits an `Int64`, as
    /// `CBORToken.int` reads it; else nil (see `nextValue`).
    mutating func nextInt() throws(CBORDecodeError) -> Int64? {
        // An integer out of range is read, then nil, as `CBORToken.int` gives.
        try nextValue({ head, _ in
            switch head {
            case .unsigned(let v) where v <= UInt64(Int64.max): Int64(v)
            case .negative(let n) where n <= UInt64(Int64.max): -1 - Int64(n)
            default: nil
            }
        }, else: \.int)
    }

    /// The next head when it is a boolean; else nil (see `nextValue`).
    mutating func nextBool() throws(CBORDecodeError) -> Bool? {
        try nextValue({ head, _ in if case .bool(let b) = head { b } else { nil } }, else: \.boolValue)
    }

    /// The next head when it is an array: its element count, checked as `next()` checks it;
    /// else nil (see `nextValue`).
    mutating func nextArrayCount() throws(CBORDecodeError) -> Int? {
        let size = bytes.count
        return try nextValue({ head, end in
            if case .array(let n) = head, n <= UInt64(size - end) { Int(n) } else { nil }
        }, else: \.arrayCount)
    }

    /// Reads the next head when it is a text string: its text, checked as `next()` checks it.
    /// For any other head, reads it as `next()` does and returns nil.
    mutating func nextString() throws(CBORDecodeError) -> String? {
        guard let raw = try nextText() else { return nil }
        return String(decoding: raw, as: UTF8.self)
    }

    /// Reads the next head when it is a text string: its UTF-8, checked as `next()` checks it,
    /// as a slice of the input (no `String` made). For any other head, reads it as `next()`
    /// does (with its errors) and returns nil.
    mutating func nextText() throws(CBORDecodeError) -> ArraySlice<UInt8>? {
        var scalars = 0
        return try nextText(countingScalarsInto: &scalars)
    }

    /// `nextText()`, adding the text's scalar count to `scalars`: known from the check for
    /// ASCII text (one scalar a byte), counted for the rest.
    mutating func nextText(countingScalarsInto scalars: inout Int) throws(CBORDecodeError) -> ArraySlice<UInt8>? {
        let pos = offset
        guard pos >= 0, pos < bytes.count else { throw CBORDecodeError(offset: pos, problem: .endOfInput) }
        let (head, end) = try CBORDecoder.readHead(bytes, at: pos)
        guard case .text(let n) = head else {
            _ = try next()
            return nil
        }
        let raw = bytes[(end - Int(n)) ..< end]
        if CBORDecoder.isASCII(raw) {
            scalars += raw.count
        } else {
            let string = String(decoding: raw, as: UTF8.self)
            guard string.utf8.elementsEqual(raw) else { throw CBORDecodeError(offset: pos, problem: .invalidUTF8) }
            scalars += string.unicodeScalars.count
        }
        offset = end
        return raw
    }
}

// MARK: - Encoding

/// Appends CBOR to `bytes` using libcbor's buffer encoders. Every head is written in its
/// shortest form and strings/containers are always definite-length (RFC 8949 §4.2.1).
/// The caller is responsible for writing as many items after a header as it declares.
///
/// An encoder made by `init(writingInto:)` writes into memory it is given instead (a part of a
/// buffer that another thread fills another part of), never past it: what does not fit is not
/// written, and `overflowed` says so.
struct CBOREncoder {
    private(set) var bytes: [UInt8] = []
    /// The memory written into instead of `bytes` (`init(writingInto:)`), from `written` on.
    private let region: UnsafeMutableBufferPointer<UInt8>?
    /// How many bytes were written into `region`.
    private(set) var written = 0
    /// Whether a write did not fit in `region` (it and every write after it were left out).
    private(set) var overflowed = false

    init() { region = nil }

    /// An encoder that writes into `region` (uninitialized or not) rather than `bytes`.
    init(writingInto region: UnsafeMutableBufferPointer<UInt8>) { self.region = region }

    /// Appends `b` to `bytes`, or writes it into `region` when it fits.
    @inline(__always)
    private mutating func put<C: Collection<UInt8>>(_ b: C) {
        guard let region else {
            bytes.append(contentsOf: b)
            return
        }
        let n = b.count
        guard !overflowed, n <= region.count - written, let base = region.baseAddress else {
            overflowed = true
            return
        }
        let target = base + written
        let copied: Void? = b.withContiguousStorageIfAvailable { (source: UnsafeBufferPointer<UInt8>) -> Void in
            if let from = source.baseAddress { target.initialize(from: from, count: n) }
        }
        if copied == nil {
            var k = 0
            for byte in b { (target + k).initialize(to: byte); k += 1 }
        }
        written += n
    }

    /// Makes room for `count` bytes in all, so that encoding up to that many grows nothing.
    mutating func reserveCapacity(_ count: Int) { bytes.reserveCapacity(count) }

    /// The bytes of the head that carries `argument` (a count, a length or an unsigned value):
    /// the shortest form (RFC 8949 §4.2.1), the one libcbor writes.
    static func headSize(_ argument: UInt64) -> Int {
        argument < 24 ? 1 : argument <= 0xff ? 2 : argument <= 0xffff ? 3 : argument <= 0xffff_ffff ? 5 : 9
    }

    /// The bytes `text(_:)` writes for a string of `utf8Count` bytes of UTF-8.
    static func textSize(utf8Count: Int) -> Int { headSize(UInt64(utf8Count)) + utf8Count }

    /// The bytes `int(_:)` writes for `v`.
    static func intSize(_ v: Int64) -> Int { headSize(v >= 0 ? UInt64(v) : UInt64(~v)) }

    /// Writes one head with a libcbor encoder; 9 bytes always suffice for a head.
    private mutating func head(_ encode: (UnsafeMutablePointer<UInt8>, Int) -> Int) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 9) { buffer in
            guard let base = buffer.baseAddress else { return }
            let written = encode(base, buffer.count)
            precondition(written > 0, "libcbor head encoder needs more than \(buffer.count) bytes")
            put(buffer[..<written])
        }
    }

    mutating func unsigned(_ v: UInt64) { head { cbor_encode_uint(v, $0, $1) } }
    /// Encodes -1 - n.
    mutating func negative(_ n: UInt64) { head { cbor_encode_negint(n, $0, $1) } }
    /// Encodes `v` as an unsigned (major 0) or negative (major 1) integer.
    mutating func int(_ v: Int64) { v >= 0 ? unsigned(UInt64(v)) : negative(UInt64(~v)) }
    /// Head plus payload.
    mutating func bytes(_ b: [UInt8]) {
        head { cbor_encode_bytestring_start(b.count, $0, $1) }
        put(b)
    }
    /// A text string whose UTF-8 is `utf8` (valid UTF-8).
    mutating func text(utf8: ArraySlice<UInt8>) {
        head { cbor_encode_string_start(utf8.count, $0, $1) }
        put(utf8)
    }
    mutating func text(_ s: String) {
        let count = s.utf8.count
        head { cbor_encode_string_start(count, $0, $1) }
        put(s.utf8)
    }
    mutating func arrayHeader(_ count: Int) { head { cbor_encode_array_start(count, $0, $1) } }
    /// `count` is the number of key/value pairs that follow.
    mutating func mapHeader(_ count: Int) { head { cbor_encode_map_start(count, $0, $1) } }
    mutating func tag(_ t: UInt64) { head { cbor_encode_tag(t, $0, $1) } }
    mutating func bool(_ b: Bool) { head { cbor_encode_bool(b, $0, $1) } }
    mutating func null() { head { cbor_encode_null($0, $1) } }
    mutating func undefined() { head { cbor_encode_undef($0, $1) } }
    /// A simple value other than 20...23 (false/true/null/undefined); 24...31 are not well-formed.
    mutating func simple(_ v: UInt8) {
        precondition(!(20...31).contains(v), "simple value \(v) is reserved or has its own encoder")
        head { cbor_encode_ctrl(v, $0, $1) }
    }

    /// Encodes `d` in the shortest of half/single/double that preserves its value exactly
    /// (RFC 8949 §4.2.1 preferred serialization); every NaN becomes the canonical f97e00.
    mutating func double(_ d: Double) {
        if let half = Self.halfBits(d) {
            // Written by hand: libcbor 0.8's cbor_encode_half mis-rounds half subnormals.
            put([0xf9, UInt8(half >> 8), UInt8(half & 0xff)])
        } else if let single = Float(exactly: d) {
            head { cbor_encode_single(single, $0, $1) }
        } else {
            head { cbor_encode_double(d, $0, $1) }
        }
    }

    /// The IEEE 754 binary16 bit pattern of `d` if it is NaN or exactly representable, else nil.
    private static func halfBits(_ d: Double) -> UInt16? {
        if d.isNaN { return 0x7e00 }
        let sign: UInt16 = d.sign == .minus ? 0x8000 : 0
        if d.isInfinite { return sign | 0x7c00 }
        if d == 0 { return sign }
        let magnitude = d.magnitude, exponent = Int(magnitude.exponent)
        guard (-24...15).contains(exponent) else { return nil }
        if exponent >= -14 {   // normal half: 10 fraction bits of the double's 52
            let fraction = magnitude.significandBitPattern
            guard fraction & ((1 << 42) - 1) == 0 else { return nil }
            return sign | UInt16(exponent + 15) << 10 | UInt16(fraction >> 42)
        }
        let units = magnitude * 0x1p24   // subnormal half: a multiple of 2^-24 (exact scaling)
        guard units == units.rounded(.towardZero) else { return nil }
        return sign | UInt16(units)
    }

    /// Appends already-encoded CBOR verbatim (e.g. to preserve unknown fields byte for byte).
    mutating func raw(_ b: [UInt8]) { put(b) }

    /// Re-encodes a decoded item with definite lengths and shortest heads. Recurses once per
    /// nesting level (decoder output is bounded by `CBORLimits.maxDepth`).
    mutating func item(_ item: CBORItem) {
        switch item.value {
        case .unsigned(let v): unsigned(v)
        case .negative(let n): negative(n)
        case .bytes(let b): bytes(b)
        case .text(let s): text(s)
        case .array(let items):
            arrayHeader(items.count)
            for element in items { self.item(element) }
        case .map(let pairs):
            mapHeader(pairs.count)
            for pair in pairs {
                self.item(pair.key)
                self.item(pair.value)
            }
        case .tagged(let t, let inner):
            tag(t)
            self.item(inner)
        case .bool(let b): bool(b)
        case .null: null()
        case .undefined: undefined()
        case .simple(let v): simple(v)
        case .float(let d): double(d)
        }
    }
}
