import Testing
@testable import PeerNote

/// `WireCodec.decodeScalars` (the text column's UTF-8, read eight ASCII bytes at a time) against
/// the plain reading it replaced: the standard library's decoder over the whole input. Both
/// must give the same scalars for valid UTF-8 and refuse the same inputs.
@Suite("Reading the text column's UTF-8")
struct ScalarDecodingTests {
    /// The reading `decodeScalars` replaced, kept as the reference.
    static func reference(_ bytes: ArraySlice<UInt8>) -> [Unicode.Scalar]? {
        var out: [Unicode.Scalar] = []
        var it = bytes.makeIterator()
        var utf8 = UTF8()
        while true {
            switch utf8.decode(&it) {
            case .scalarValue(let s): out.append(s)
            case .emptyInput: return out
            case .error: return nil
            }
        }
    }

    /// Pieces text is made of: ASCII runs of every length around the eight-byte steps, valid
    /// scalars of two to four bytes, and what UTF-8 forbids (a lone continuation byte, a
    /// truncated sequence, an overlong form, a surrogate, a value past U+10FFFF, 0xFF).
    static let valid: [[UInt8]] = [
        Array("a".utf8), Array("hello, w".utf8), Array("seventeen chars!!".utf8),
        Array("é".utf8), Array("€".utf8), Array("😀".utf8), Array("日本語".utf8), [0x7F], [0x00],
    ]
    static let invalid: [[UInt8]] = [[0x80], [0xC3], [0xE2, 0x82], [0xF0, 0x9F, 0x98], [0xC0, 0xAF], [0xE0, 0x80, 0xAF],
                                     [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xFF], [0xF8, 0x88, 0x80, 0x80, 0x80]]

    @Test("Valid and invalid inputs, built at random from those pieces, decode as the reference decodes them", arguments: 0 ..< 4)
    func randomInputs(seed: UInt64) {
        var rng = SeededRandom(state: seed)
        var refused = 0, read = 0
        for round in 0 ..< 500 {
            var bytes: [UInt8] = []
            let pieces = Int(rng.next() % 40)
            for _ in 0 ..< pieces {
                let pick = rng.next() % 100
                if pick < 70 {
                    bytes += Array(repeating: UInt8(0x20 + rng.next() % 0x5F), count: Int(rng.next() % 20))
                } else if pick < 97 || round % 2 == 0 {
                    bytes += Self.valid[Int(rng.next() % UInt64(Self.valid.count))]
                } else {
                    bytes += Self.invalid[Int(rng.next() % UInt64(Self.invalid.count))]
                }
            }
            // Also read as a slice that does not start at index 0, as the column is.
            let padded = [UInt8](repeating: 0x41, count: Int(rng.next() % 9)) + bytes
            let slice = padded[(padded.count - bytes.count)...]
            let expected = Self.reference(slice)
            #expect(WireCodec.decodeScalars(slice) == expected, "seed \(seed) round \(round): \(bytes)")
            if expected == nil { refused += 1 } else { read += 1 }
        }
        // Both kinds were met, so neither half of the comparison is vacuous.
        #expect(refused > 20 && read > 200, "\(refused) refused, \(read) read")
    }

    @Test("Every single byte and every pair of bytes after seven ASCII ones (a step's edge)")
    func bytesAtTheEdge() {
        let prefix = Array("abcdefg".utf8)
        for a in 0 ... 255 {
            let one = prefix + [UInt8(a)]
            #expect(WireCodec.decodeScalars(one[...]) == Self.reference(one[...]), "\(a)")
            for b in stride(from: 0, through: 255, by: 15) {
                let two = prefix + [UInt8(a), UInt8(b)] + prefix
                #expect(WireCodec.decodeScalars(two[...]) == Self.reference(two[...]), "\(a) \(b)")
            }
        }
        #expect(WireCodec.decodeScalars([][...]) == [])
    }
}
