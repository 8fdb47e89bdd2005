#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One block of a .peernote file as read from bytes: its envelope and
/// checksum are checked, its payload is not yet interpreted or verified.
///
/// On disk: `55799(0x706E6F74([version, payload: bstr, crc32(payload)]))`.
struct RawBlock: Sendable {
    /// Absolute offsets of the block in the file.
    var offset: Int
    var end: Int
    var version: UInt64
    /// Absolute offset of the first payload byte.
    var payloadOffset: Int
    var payload: [UInt8]
}

/// Why bytes are not a valid .peernote file (unverified stage).
struct FormatError: Error, Sendable, Equatable, CustomStringConvertible {
    var offset: Int?
    var message: String
    /// Set when the file is a newer format version than this library reads.
    var unsupportedVersion: UInt64?
    /// Set when reading the file would need more memory than the process can use (`MemoryBudget`):
    /// not damage.
    var memory: MemoryShortfall?
    /// The CBOR reader's problem, when the error is one it found (readers of damaged files,
    /// such as salvage, decide on it rather than on `message`).
    var cbor: CBORDecodeError.Problem?
    var description: String { offset.map { "offset \($0): \(message)" } ?? message }

    init(offset: Int?, message: String, unsupportedVersion: UInt64? = nil, memory: MemoryShortfall? = nil) {
        self.offset = offset
        self.message = message
        self.unsupportedVersion = unsupportedVersion
        self.memory = memory
    }

    /// The CBOR reader's `error`, `base` bytes further into the file than the bytes it read;
    /// its message after `context` when given (`file is truncated or damaged`).
    init(_ error: CBORDecodeError, base: Int = 0, context: String? = nil) {
        self.init(offset: base + error.offset, message: context.map { "\($0): \(error.message)" } ?? error.message)
        cbor = error.problem
    }
}

enum BlockCodec {
    static func encode(payload: [UInt8], version: UInt64 = 1) -> [UInt8] {
        var e = CBOREncoder()
        e.tag(Format.selfDescribeTag)
        e.tag(Format.blockTag)
        e.arrayHeader(3)
        e.unsigned(version)
        e.bytes(payload)
        e.unsigned(UInt64(CRC32.checksum(payload)))
        return e.bytes
    }

    /// Splits a file into checked blocks.
    static func decode(_ bytes: [UInt8]) throws(FormatError) -> [RawBlock] {
        try decode(bytes, from: 0)
    }

    /// The checked blocks of `bytes` from offset `start`, where a block begins (the blocks before
    /// it were read already: a save appending to a checked file is read from where it appends).
    /// Offsets, in the blocks and in errors, are the file's. The same blocks and errors as
    /// `decode(bytes)` gives from there.
    static func decode(_ bytes: [UInt8], from start: Int) throws(FormatError) -> [RawBlock] {
        guard !bytes.isEmpty else { throw FormatError(offset: 0, message: "file is empty") }
        let prefix = Array(bytes.prefix(Format.magic.count))
        guard prefix == Array(Format.magic.prefix(prefix.count)) else {
            throw FormatError(offset: 0, message: "not a .peernote file (wrong magic bytes)")
        }
        let tooShort = "file is truncated (only \(bytes.count) \(bytes.count == 1 ? "byte" : "bytes"))"
        guard bytes.count >= Format.magic.count else { throw FormatError(offset: bytes.count, message: tooShort) }
        var blocks: [RawBlock] = []
        var pos = start
        let limits = CBORLimits(maxDepth: 8, maxItems: 16)
        while pos < bytes.count {
            guard bytes.count - pos >= Format.magic.count, Array(bytes[pos ..< pos + Format.magic.count]) == Format.magic else {
                if bytes.count - pos < Format.magic.count && Array(bytes[pos...]) == Array(Format.magic.prefix(bytes.count - pos)) {
                    throw FormatError(offset: pos, message: "file is truncated inside a block header")
                }
                throw FormatError(offset: pos, message: "expected a block (magic bytes D9 D9 F7 DA 70 6E 6F 74), found other data")
            }
            // Magic bytes and nothing after them: cut short as a shorter file is (the CBOR reader
            // would name the inner tag's offset, 3 bytes in, as where input ended).
            if bytes.count - pos == Format.magic.count {
                throw pos == 0 ? FormatError(offset: bytes.count, message: tooShort)
                    : FormatError(offset: pos, message: "file is truncated inside a block header")
            }
            let item: CBORItem
            do { item = try CBORDecoder.decodeItem(bytes, at: pos, limits: limits) } catch {
                throw FormatError(error, context: error.problem.inputEndsInsideItem ? "file is truncated or damaged" : nil)
            }
            guard case .tagged(_, let inner) = item.value, case .tagged(_, let body) = inner.value,
                  let fields = body.array, fields.count == 3 else {
                throw FormatError(offset: pos, message: "block is not [version, payload, checksum]")
            }
            guard let version = fields[0].uint else { throw FormatError(offset: fields[0].offset, message: "format version is not an unsigned integer") }
            guard version <= Format.version, version >= 1 else {
                throw FormatError(offset: fields[0].offset, message: "format version \(version) is not supported (this tool reads version \(Format.version))", unsupportedVersion: version > Format.version ? version : nil)
            }
            guard let payload = fields[1].bytesValue else { throw FormatError(offset: fields[1].offset, message: "block payload is not a byte string") }
            guard let crc = fields[2].uint else { throw FormatError(offset: fields[2].offset, message: "block checksum is not an unsigned integer") }
            let actual = CRC32.checksum(payload)
            guard UInt64(actual) == crc else {
                throw FormatError(offset: fields[1].offset, message: "checksum mismatch: block says \(Hex.string(UInt32(truncatingIfNeeded: crc))), contents give \(Hex.string(actual)) (the file is damaged)")
            }
            blocks.append(RawBlock(offset: pos, end: item.end, version: version, payloadOffset: fields[1].end - payload.count, payload: payload))
            pos = item.end
        }
        return blocks
    }
}
