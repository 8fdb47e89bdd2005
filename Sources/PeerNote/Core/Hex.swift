/// Lowercase hexadecimal text: the one way the library prints bytes, ids and checksums (it
/// needs no `String(format:)`, so the library builds on FoundationEssentials alone).
enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// The digit of `nibble` (0 to 15).
    static func digit(_ nibble: UInt8) -> UInt8 { digits[Int(nibble & 0x0F)] }

    /// Two digits per byte, in order.
    static func string(_ bytes: some Sequence<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `value` in eight digits, zero-padded (checksums: `%08x`).
    static func string(_ value: UInt32) -> String {
        string((0 ..< 4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) })
    }
}
