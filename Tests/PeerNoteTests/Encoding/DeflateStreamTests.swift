import Foundation
import Testing
@testable import PeerNote

/// `Deflate.compress` (peernote(5), CANONICAL FORM): one raw DEFLATE stream from one libdeflate
/// compressor at the canonical level, whatever the input's size; and every conforming stream
/// reads, including the two-part streams earlier writers made with zlib.
@Suite("Deflate streams")
struct DeflateStreamTests {
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

    @Test("A compressed result holds little more room than its bytes, whatever the input's size")
    func resultHoldsLittleRoom() throws {
        for input in [[UInt8](repeating: 7, count: 1 << 20), Self.sample(300_000, seed: 5), Self.sample(3, seed: 6), []] {
            let out = Deflate.compress(input)
            #expect(try Deflate.decompress(out, maxOutput: max(input.count, 1)) == input)
            // (Room below a few hundred bytes is the allocator's rounding, not the bound's.)
            #expect(out.capacity <= max(2 * out.count, 256), "\(input.count) bytes: \(out.count) in a room of \(out.capacity)")
        }
    }

    @Test("Inputs from a megabyte on compress in scratch memory: compressible or not, they round-trip at their own size")
    func scratchMemoryInputs() throws {
        var rng = SeededRandom(state: 77)
        let noise = (0 ..< 3 * Deflate.scratchFrom / 2).map { _ in UInt8.random(in: 0 ... 255, using: &rng) }
        let inputs = [Self.sample(Deflate.scratchFrom - 1, seed: 8), Self.sample(Deflate.scratchFrom, seed: 9),
                      Self.sample(3 * Deflate.scratchFrom, seed: 10), noise]
        for input in inputs {
            let out = Deflate.compress(input)
            #expect(try Deflate.decompress(out, maxOutput: input.count) == input)
            // An array of the output's size: only the allocator's rounding beyond it (pages for a
            // block it maps, larger steps on some systems), not the bound's room.
            #expect(out.capacity <= out.count + out.count / 16 + 256, "\(input.count) bytes: \(out.count) in a room of \(out.capacity)")
            // The same bytes from a slice (no copy of the input) and again (deterministic).
            #expect(Deflate.compress(input[...]) == out)
        }
        // Random bytes do not compress: the output needs the bound's room beyond the input.
        #expect(Deflate.compress(noise).count > noise.count)
    }

    @Test("Scratch memory is the size asked for, zero-filled, for every size")
    func scratchMemory() {
        for size in [0, 1, 4096, 3 * 4096 + 5, 1 << 20] {
            let ok = ScratchMemory.with(capacity: size) { buffer -> Bool in
                guard buffer.count >= size, buffer.allSatisfy({ $0 == 0 }) else { return false }
                if size > 0 { buffer[size - 1] = 9; buffer[0] = 1 }
                return true
            }
            #expect(ok, "\(size) bytes")
        }
    }

    @Test("Every size round-trips, and a slice compresses to the same bytes as an array")
    func roundTrips() throws {
        let sizes = [0, 1, 100, 65_535, 65_536, 65_537, 196_613, 400_001]
        for (i, size) in sizes.enumerated() {
            let input = Self.sample(size, seed: UInt64(i + 1))
            let packed = Deflate.compress(input)
            #expect(try Deflate.decompress(packed, maxOutput: size) == input, "size \(size)")
            // A slice that does not start at 0.
            let padded = [UInt8](repeating: 7, count: 9) + input
            #expect(Deflate.compress(padded[9...]) == packed, "size \(size), slice")
        }
    }

    @Test("The canonical level is the one compress uses, and a higher level is not larger")
    func canonicalLevel() {
        let input = Self.sample(200_000, seed: 9)
        #expect(Deflate.compress(input) == Deflate.compress(input[...], level: Deflate.level))
        #expect(Deflate.compress(input[...], level: 1) != Deflate.compress(input))
        #expect(Deflate.compress(input[...], level: 1).count > Deflate.compress(input).count)
    }

    /// 100,000 bytes: a 2,000-byte run of pseudo-random words, repeated.
    static func earlierWriterInput() -> [UInt8] {
        let words = ["peer ", "note ", "merge ", "CRDT ", "text ", "ändern ", "\n"].map { Array($0.utf8) }
        var state: UInt64 = 12_345
        var block: [UInt8] = []
        while block.count < 2_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            block += words[Int((state >> 33) % UInt64(words.count))]
        }
        return Array(Array(repeating: block.prefix(2_000), count: 50).joined().prefix(100_000))
    }

    /// `earlierWriterInput()` as earlier writers compressed it with zlib 1.2.13 (level 6, window
    /// bits -15): its first 50,000 bytes ending with a sync flush, the rest by a second
    /// compressor given the first part's last 32,768 bytes as preset dictionary, so that the
    /// second part's matches reach back into the first.
    static let earlierWriterStream: [UInt8] = Array(Data(base64Encoded: [
        "7NXJkdQwFADQu6KYXCACihBwzYmG6uoDAZEJic2UNOYvckMC7+K21Vq+tv/G4/j1ePl+3F+Pl3H78Tg+3j99+fx1PcbP47h/",
        "lM7K8zGrzrc/v2/fjvttlaRm8zkL12vqZhsi+k3hnB3nNqurVv2suJfMMSPeCPGsMFa3s14KsPR4ftR4zq+YRUy4t5iFs/sI",
        "Y805Cmuv/TctS3R2GeX8iFXapxxzjT2M0Mtit+2eja6rls73ac/HSPHHiVh/pQ7bKC2GMpUy52i3uow9iX9GzDZG2I/y6mCM",
        "fclSiBHO2CNrp+JquZ8dt3KC0r7PRmn8vlpx1ksQ6eLuE13hr1UZ66KnTe8j7idvtf97mSKY6wPU9+1ySfcA62ix2aNUHeXY",
        "lfGu808aePT7lV73zU1L2tNiGqSfj/+mzeigLuio4/Yhcn7e0lnLPKMu2bZ0ee9ywr283inN/3NDU/qvM2mXM7VoufHy3DxN",
        "dK0sdVuS20jxR5ORs1RLRfuZiuLncT4JOm7NzlaEs+eTdlHes1R8vIeeTzLPec5znvOc5zznOc95znOe85znPOc5z3nOc57z",
        "nOc85znPec5znvOc5zznOc95znOe85znPOc5z3nOc57znOc85znPec5znvOc5zznOc95znOe85znPOc5z3nOc57znOc85znP",
        "ec5znvOc5zznOc95znOe85znPOc5z3nOc57znOc85znPec5znvOc5zznOc95znOe85znPOc5z3nOc57znOc85znPec5znvOc",
        "5zznOc95znOe85znPOc5z3nOc57znOc85znPec5znvOc5zznOc95znOe85znPOc5z3nOc57znOc85znPec5znvOc5zznOc95",
        "znOe85znPOc5z3n+BgAA///t1YEMAAAAwCB/63t8JZHPfe5zn/vc5z73uc997nOf+9znPve5z33uc5/73Oc+97nPfe5zn/vc",
        "5z73uc997nOf+9znPve5z33uc5/73Oc+97nPfe5zn/vc5z73uc997nOf+9znPve5z33uc5/73Oc+97nPfe5zn/vc5z73uc99",
        "7nOf+9znPve5z33uc5/73Oc+97nPfe5zn/vc5z73uc997nOf+9znPve5z33uc5/73Oc+97nPfe5zn/vc5z73uc997nOf+9zn",
        "Pve5z33uc5/73Oc+97nPfe5zn/vc5z73uc997nOf+9znPve5z33uc5/73Oc+97nPfe5zn/vc5z73uc997nOf+9znPve5z33u",
        "c5/73Oc+97nPX58H",
    ].joined()) ?? Data())

    @Test("A two-part stream of an earlier writer (sync flush, preset dictionary) inflates to its bytes")
    func readsEarlierTwoPartStreams() throws {
        let input = Self.earlierWriterInput()
        let old = Self.earlierWriterStream
        #expect(try Deflate.decompress(old, maxOutput: input.count) == input)
        // A sync flush (an empty stored block, byte-aligned: 00 00 FF FF) ends its first part.
        #expect((0 ... old.count - 4).contains { Array(old[$0 ..< $0 + 4]) == [0x00, 0x00, 0xFF, 0xFF] })
        // Rewritten by this writer it is one stream, and reads back the same.
        let rewritten = Deflate.compress(input)
        #expect(rewritten != old)
        #expect(try Deflate.decompress(rewritten, maxOutput: input.count) == input)
        // Cut anywhere, or with a byte more, it is refused.
        #expect(throws: DeflateError.self) { try Deflate.decompress(old.dropLast(), maxOutput: input.count) }
        #expect(throws: DeflateError.self) { try Deflate.decompress(old + [0], maxOutput: input.count) }
    }
}
