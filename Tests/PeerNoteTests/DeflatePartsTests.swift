import Foundation
import Testing
@testable import PeerNote

/// `Deflate.compress` (peernote(5), CANONICAL FORM): one raw DEFLATE stream; an input of more
/// than `Deflate.partThreshold` bytes is compressed in two parts, the second primed with the end
/// of the first, so that two threads can share the work and the bytes stay the same.
@Suite("Deflate in two parts")
struct DeflatePartsTests {
    /// Bytes like a notebook's columns: text, then numbers that repeat a little.
    static func sample(_ count: Int, seed: UInt64) -> [UInt8] {
        var rng = SeededRandom(state: seed)
        let words = Array("the quick brown fox jumps over a lazy dog, and then 日本語 text again. ".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(count)
        while out.count < count {
            if Int.random(in: 0 ..< 4, using: &rng) == 0 {
                out.append(UInt8.random(in: 0 ... 255, using: &rng))
            } else {
                let start = Int.random(in: 0 ..< words.count, using: &rng)
                out.append(contentsOf: words[start ..< min(words.count, start + Int.random(in: 1 ... 12, using: &rng))])
            }
        }
        return Array(out.prefix(count))
    }

    @Test("Every size round-trips, on one thread or two, to the same bytes")
    func roundTrips() throws {
        let t = Deflate.partThreshold, w = Deflate.windowSize
        let sizes = [0, 1, 100, t - 1, t, t + 1, t + 2, 2 * w - 1, 2 * w + 1, 3 * t + 5, 5 * w + 3, 400_001]
        for (i, size) in sizes.enumerated() {
            let input = Self.sample(size, seed: UInt64(i + 1))
            let one = Deflate.compress(input, concurrent: false)
            let two = Deflate.compress(input, concurrent: true)
            #expect(one == two, "size \(size)")
            #expect(try Deflate.decompress(one, maxOutput: size) == input, "size \(size)")
            // Also as a slice that does not start at 0 (the parts are cut by offsets into it).
            let padded = [UInt8](repeating: 7, count: 9) + input
            #expect(Deflate.compress(padded[9...], concurrent: true) == one, "size \(size), slice")
        }
    }

    @Test("A large input is two parts: a sync flush ends the first, and the second reaches back into it")
    func twoParts() throws {
        let input = Self.sample(3 * Deflate.partThreshold, seed: 42)
        let whole = Deflate.compress(input)
        #expect(try Deflate.decompress(whole, maxOutput: input.count) == input)
        // A sync flush is an empty stored block, byte-aligned: 00 00 FF FF.
        let marker: [UInt8] = [0x00, 0x00, 0xFF, 0xFF]
        #expect((0 ... whole.count - 4).contains { Array(whole[$0 ..< $0 + 4]) == marker })
        // Two parts cost little: within 1% of one stream over the whole input.
        let single = Deflate.compressWhole(input[...])
        #expect(whole != single)
        #expect(whole.count <= single.count + single.count / 100, "\(whole.count) against \(single.count)")

        // Noise does not compress, except where the second part starts with a copy of the first
        // part's last 1,000 bytes: its compressor was given them as dictionary.
        var rng = SeededRandom(state: 7)
        let first = (0 ..< 40_000).map { _ in UInt8.random(in: 0 ... 255, using: &rng) }
        let noise = first + first.suffix(1_000) + (0 ..< 39_000).map { _ in UInt8.random(in: 0 ... 255, using: &rng) }
        let packed = Deflate.compress(noise, concurrent: true)
        #expect(packed.count < noise.count - 800, "\(packed.count) bytes for \(noise.count)")
        #expect(try Deflate.decompress(packed, maxOutput: noise.count) == noise)
    }
}
