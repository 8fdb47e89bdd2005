// Shared pieces of the PeerNote fuzz targets: invariant checks that crash loudly (libFuzzer
// records a crash), and a tiny writer for the .peernote envelope (CBOR heads, CRC-32, stored
// DEFLATE) so that structure-aware targets get past the checksum and reach the decoders behind it.
// Only PeerNote's public API is used, as by any client of the library.
import Foundation
import PeerNote
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Invariant checks for fuzz targets: a violated invariant prints why and aborts, which libFuzzer
/// reports as a crash and saves the input as `crash-*`.
public enum FuzzCheck {
    public static func require(_ condition: Bool, _ message: @autoclosure () -> String) {
        guard !condition else { return }
        fail(message())
    }

    public static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("FUZZ INVARIANT VIOLATED: \(message)\n".utf8))
        abort()
    }

    /// The checks every loaded document must pass: its compact save loads again to the same notebook,
    /// history and heads, and saving that copy gives the same bytes (canonical form); an incremental
    /// save with nothing new returns the loaded bytes unchanged.
    public static func roundTrip(_ document: Document, loadedFrom bytes: [UInt8]?, _ what: String) {
        if let bytes {
            require(document.save(.incremental) == bytes, "\(what): incremental save of an unchanged document is not its input")
        }
        let compact = document.save(.compact)
        let again: Document
        do { again = try Document.load(compact) } catch {
            fail("\(what): its compact save does not load again: \(error)")
        }
        require(again.notebook == document.notebook, "\(what): the notebook changed in a save/load round trip")
        require(again.changeCount == document.changeCount, "\(what): change count \(document.changeCount) became \(again.changeCount)")
        require(again.heads == document.heads, "\(what): heads changed in a save/load round trip")
        require(again.save(.compact) == compact, "\(what): compact save is not canonical (differs after a round trip)")
    }
}

/// Writes the pieces of a .peernote block by hand (RFC 8949 heads in shortest form).
public struct EnvelopeWriter {
    public private(set) var bytes: [UInt8] = []
    public init() {}

    mutating func head(_ major: UInt8, _ value: UInt64) {
        let m = major << 5
        switch value {
        case 0 ..< 24: bytes.append(m | UInt8(value))
        case 24 ..< 0x100: bytes += [m | 24, UInt8(value)]
        case 0x100 ..< 0x10000: bytes += [m | 25, UInt8(value >> 8), UInt8(value & 0xff)]
        case 0x10000 ..< 0x1_0000_0000: bytes += [m | 26] + (0 ..< 4).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
        default: bytes += [m | 27] + (0 ..< 8).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
        }
    }

    public mutating func unsigned(_ v: UInt64) { head(0, v) }
    public mutating func byteString(_ b: [UInt8]) { head(2, UInt64(b.count)); bytes += b }
    public mutating func text(_ s: String) { let u = Array(s.utf8); head(3, UInt64(u.count)); bytes += u }
    public mutating func array(_ n: Int) { head(4, UInt64(n)) }
    public mutating func map(_ n: Int) { head(5, UInt64(n)) }
    public mutating func tag(_ t: UInt64) { head(6, t) }

    /// `55799(0x706E6F74([1, payload, crc32(payload)]))`: one block whose checksum is right.
    public static func block(payload: [UInt8]) -> [UInt8] {
        var w = EnvelopeWriter()
        w.tag(55_799)
        w.tag(0x706E_6F74)
        w.array(3)
        w.unsigned(1)
        w.byteString(payload)
        w.unsigned(UInt64(CRC32.checksum(payload)))
        return w.bytes
    }
}

/// CRC-32 (ISO-HDLC, as zlib), table-driven.
public enum CRC32 {
    private static let table: [UInt32] = (0 ..< 256).map { n in
        var c = UInt32(n)
        for _ in 0 ..< 8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    public static func checksum(_ bytes: [UInt8]) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for b in bytes { c = table[Int((c ^ UInt32(b)) & 0xff)] ^ (c >> 8) }
        return c ^ 0xFFFF_FFFF
    }
}

/// Raw DEFLATE (RFC 1951) made of stored blocks only: valid input for any inflater, no zlib needed.
public enum StoredDeflate {
    public static func compress(_ input: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var pos = 0
        repeat {
            let n = min(65_535, input.count - pos)
            let final: UInt8 = pos + n == input.count ? 1 : 0
            out += [final, UInt8(n & 0xff), UInt8(n >> 8), UInt8(~n & 0xff), UInt8((~n >> 8) & 0xff)]
            out += input[pos ..< pos + n]
            pos += n
        } while pos < input.count
        return out
    }
}

/// Reads the fuzzer's bytes front to back; every read is total (missing bytes read as 0 / empty).
public struct FuzzInput {
    private let bytes: [UInt8]
    public private(set) var position = 0
    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    public var remaining: [UInt8] { position < bytes.count ? Array(bytes[position...]) : [] }
    public var isAtEnd: Bool { position >= bytes.count }

    public mutating func byte() -> UInt8 {
        guard position < bytes.count else { return 0 }
        defer { position += 1 }
        return bytes[position]
    }

    public mutating func take(_ n: Int) -> [UInt8] {
        let end = min(bytes.count, position + max(0, n))
        defer { position = end }
        return position < end ? Array(bytes[position ..< end]) : []
    }

    /// An unsigned LEB128 value (at most 10 bytes; extra bits are dropped).
    public mutating func uleb() -> UInt64 {
        var v: UInt64 = 0
        for shift in stride(from: 0, to: 70, by: 7) {
            let b = byte()
            if shift < 64 { v |= UInt64(b & 0x7f) << UInt64(shift) }
            if b < 0x80 { break }
        }
        return v
    }
}

/// Copies libFuzzer's input into an array.
public func fuzzBytes(_ data: UnsafePointer<UInt8>, _ size: Int) -> [UInt8] {
    Array(UnsafeBufferPointer(start: data, count: size))
}
