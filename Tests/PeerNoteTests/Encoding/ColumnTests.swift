import Testing
@testable import PeerNote

// MARK: - Helpers

private func hex(_ s: String) -> [UInt8] {
    let digits = s.filter { !$0.isWhitespace }
    var out: [UInt8] = []
    var i = digits.startIndex
    while i < digits.endIndex {
        let j = digits.index(i, offsetBy: 2)
        out.append(UInt8(digits[i..<j], radix: 16) ?? 0)
        i = j
    }
    return out
}

private func uleb(_ v: UInt64) -> [UInt8] { var w = ByteWriter(); w.uleb(v); return w.bytes }
private func sleb(_ v: Int64) -> [UInt8] { var w = ByteWriter(); w.sleb(v); return w.bytes }

private func readULEB(_ bytes: [UInt8], base: Int = 0) throws(ColumnError) -> UInt64 {
    var r = ByteReader(bytes, base: base)
    let v = try r.uleb()
    #expect(r.isAtEnd)
    return v
}

private func readSLEB(_ bytes: [UInt8], base: Int = 0) throws(ColumnError) -> Int64 {
    var r = ByteReader(bytes, base: base)
    let v = try r.sleb()
    #expect(r.isAtEnd)
    return v
}

/// Runs `body` and returns the ColumnError it threw (nil if it did not throw).
/// Used instead of `#expect(throws:)` so tests can check the error's offset and message.
private func columnError(_ body: () throws -> Void) -> ColumnError? {
    do {
        try body()
    } catch let error as ColumnError {
        return error
    } catch {
        Issue.record("unexpected error type: \(error)")
    }
    return nil
}

/// Runs `body` and returns the DeflateError it threw (nil if it did not throw).
private func deflateError(_ body: () throws -> Void) -> DeflateError? {
    do {
        try body()
    } catch let error as DeflateError {
        return error
    } catch {
        Issue.record("unexpected error type: \(error)")
    }
    return nil
}

private func encodeUInt(_ values: [UInt64]) -> [UInt8] {
    var e = UIntColumnEncoder(); for v in values { e.append(v) }; return e.finish()
}
private func encodeInt(_ values: [Int64]) -> [UInt8] {
    var e = IntColumnEncoder(); for v in values { e.append(v) }; return e.finish()
}
private func encodeDelta(_ values: [Int64]) -> [UInt8] {
    var e = DeltaColumnEncoder(); for v in values { e.append(v) }; return e.finish()
}
private func encodeBool(_ values: [Bool]) -> [UInt8] {
    var e = BoolColumnEncoder(); for v in values { e.append(v) }; return e.finish()
}

/// Named input shapes every column type is round-tripped on.
private func uintShapes() -> [(String, [UInt64])] {
    var rng = SeededRandom(state: 42)
    let small = (0..<5000).map { _ in UInt64.random(in: 0...3, using: &rng) }
    let full = (0..<5000).map { _ in rng.next() >> UInt64.random(in: 0...63, using: &rng) }
    var runs: [UInt64] = []
    while runs.count < 5000 {
        let v = UInt64.random(in: 0...1000, using: &rng)
        runs += Array(repeating: v, count: Int.random(in: 1...20, using: &rng))
    }
    return [
        ("empty", []),
        ("single", [7]),
        ("single max", [UInt64.max]),
        ("all equal", Array(repeating: 5, count: 1000)),
        ("alternating", (0..<1000).map { UInt64($0 % 2) }),
        ("ascending", (0..<1000).map { UInt64($0) }),
        ("boundaries", [0, 127, 128, 16383, 16384, UInt64(Int64.max), UInt64.max, UInt64.max, 0]),
        ("random small", small),
        ("random full range", full),
        ("random runs", runs),
    ]
}

private func intShapes() -> [(String, [Int64])] {
    var rng = SeededRandom(state: 7)
    let small = (0..<5000).map { _ in Int64.random(in: -3...3, using: &rng) }
    let full = (0..<5000).map { _ in Int64(bitPattern: rng.next()) >> Int64.random(in: 0...63, using: &rng) }
    return [
        ("empty", []),
        ("single", [-7]),
        ("all equal", Array(repeating: -1, count: 1000)),
        ("alternating", (0..<1000).map { $0 % 2 == 0 ? Int64.min : Int64.max }),
        ("boundaries", [0, -1, 63, 64, -64, -65, Int64.max, Int64.min, Int64.min]),
        ("random small", small),
        ("random full range", full),
    ]
}

// MARK: - LEB128

@Suite("LEB128")
struct LEB128Tests {
    @Test func unsignedKnownVectors() throws {
        let vectors: [(UInt64, String)] = [
            (0, "00"), (1, "01"), (127, "7f"), (128, "8001"), (300, "ac02"), (16383, "ff7f"),
            (16384, "808001"), (624_485, "e58e26"),
            (UInt64(Int64.max), "ffffffffffffffff7f"),
            (UInt64.max, "ffffffffffffffffff01"),
        ]
        for (value, bytes) in vectors {
            #expect(uleb(value) == hex(bytes), "uleb \(value)")
            #expect(try readULEB(hex(bytes)) == value)
        }
    }

    @Test func signedKnownVectors() throws {
        let vectors: [(Int64, String)] = [
            (0, "00"), (1, "01"), (-1, "7f"), (63, "3f"), (64, "c000"), (-64, "40"), (-65, "bf7f"),
            (127, "ff00"), (-128, "807f"), (-123_456, "c0bb78"), (624_485, "e58e26"), (-624_485, "9bf159"),
            (Int64.max, "ffffffffffffffffff00"),
            (Int64.min, "8080808080808080807f"),
        ]
        for (value, bytes) in vectors {
            #expect(sleb(value) == hex(bytes), "sleb \(value)")
            #expect(try readSLEB(hex(bytes)) == value)
        }
    }

    @Test func roundTripsPowersOfTwoAndRandomValues() throws {
        var unsigned: [UInt64] = []
        var signed: [Int64] = []
        for k in 0..<64 {
            let p = UInt64(1) << k
            unsigned += [p - 1, p, p + 1]
            let x = Int64(bitPattern: p)
            signed += [x &- 1, x, 0 &- x, (0 &- x) &- 1]
        }
        var rng = SeededRandom(state: 1)
        for _ in 0..<2000 {
            let shift = UInt64.random(in: 0...63, using: &rng)
            unsigned.append(rng.next() >> shift)
            signed.append(Int64(bitPattern: rng.next()) >> Int64(shift))
        }
        var w = ByteWriter()
        for v in unsigned { w.uleb(v) }
        for v in signed { w.sleb(v) }
        var r = ByteReader(w.bytes, base: 0)
        for v in unsigned { #expect(try r.uleb() == v) }
        for v in signed { #expect(try r.sleb() == v) }
        #expect(r.isAtEnd)
        // Minimal length: ceil(significant bits / 7).
        for v in unsigned {
            let bits = max(1, 64 - v.leadingZeroBitCount)
            #expect(uleb(v).count == (bits + 6) / 7)
        }
    }

    @Test func rejectsTruncated() {
        for bytes in ["", "80", "ffff", "ffffffffffffffffff"] {
            #expect(columnError { _ = try readULEB(hex(bytes)) } != nil, "uleb \(bytes)")
            #expect(columnError { _ = try readSLEB(hex(bytes)) } != nil, "sleb \(bytes)")
        }
        let e = columnError { _ = try readULEB(hex("e58e"), base: 1000) }
        #expect(e?.offset == 1000)
        #expect(e?.message.contains("truncated") == true)
    }

    @Test func rejectsOverlongAndOverflow() {
        // 11 bytes, 10th byte with continuation bit.
        #expect(columnError { _ = try readULEB(hex("ffffffffffffffffff8101")) } != nil)
        #expect(columnError { _ = try readSLEB(hex("ffffffffffffffffff8100")) } != nil)
        // 10th byte sets bits beyond 64.
        #expect(columnError { _ = try readULEB(hex("ffffffffffffffffff02")) }?.message.contains("64 bits") == true)
        #expect(columnError { _ = try readSLEB(hex("ffffffffffffffffff01")) }?.message.contains("64 bits") == true)
        #expect(columnError { _ = try readSLEB(hex("80808080808080808040")) } != nil)
    }

    @Test func rejectsNonMinimal() {
        for bytes in ["8000", "808000", "ff8000", "80808080808080808000"] {
            #expect(columnError { _ = try readULEB(hex(bytes)) }?.message.contains("non-minimal") == true, "\(bytes)")
        }
        // Signed: 0 as 80 00, -1 as ff 7f, 1 as 81 00, Int64.max/min padded further.
        for bytes in ["8000", "ff7f", "8100", "c07f", "ffffffffffffffffff7f", "80808080808080808000"] {
            #expect(columnError { _ = try readSLEB(hex(bytes)) }?.message.contains("non-minimal") == true, "\(bytes)")
        }
        // ...but ff 00 (127) and 80 7f (-128) are minimal.
        #expect(throws: Never.self) { _ = try readSLEB(hex("ff00")) }
        #expect(throws: Never.self) { _ = try readSLEB(hex("807f")) }
    }

    @Test func readerTracksAbsolutePositionAndDoesNotMoveOnFailure() throws {
        let file = hex("aa bb e58e26 80")
        var r = ByteReader(file[2...], base: 502)  // slice indices start at 2
        #expect(r.position == 502)
        #expect(r.remaining == 4)
        #expect(try r.uleb() == 624_485)
        #expect(r.position == 505)
        let e = columnError { _ = try r.uleb() }
        #expect(e?.offset == 505)
        #expect(r.position == 505)  // unchanged
        #expect(!r.isAtEnd)
    }

    @Test func readerBytes() throws {
        var r = ByteReader(hex("0102030405"), base: 10)
        let a = try r.bytes(2)
        #expect(Array(a) == [1, 2])
        #expect(r.position == 12)
        #expect(columnError { _ = try r.bytes(4) }?.offset == 12)
        #expect(columnError { _ = try r.bytes(-1) } != nil)
        #expect(r.position == 12)
        #expect(Array(try r.bytes(3)) == [3, 4, 5])
        #expect(r.isAtEnd)
        #expect(try r.bytes(0).isEmpty)
        #expect(columnError { _ = try r.bytes(1) } != nil)
    }

    @Test func writerAppend() {
        var w = ByteWriter()
        w.uleb(1)
        w.append([9, 9])
        w.sleb(-1)
        #expect(w.bytes == [1, 9, 9, 0x7F])
    }
}

// MARK: - Columns

@Suite("Columns")
struct ColumnCodecTests {
    @Test func uintRoundTrips() throws {
        for (name, values) in uintShapes() {
            let bytes = encodeUInt(values)
            #expect(try UIntColumnDecoder.decode(bytes[...], base: 0, count: values.count) == values, "\(name)")
            #expect(encodeUInt(values) == bytes, "deterministic: \(name)")
        }
    }

    @Test func intRoundTrips() throws {
        for (name, values) in intShapes() {
            let bytes = encodeInt(values)
            #expect(try IntColumnDecoder.decode(bytes[...], base: 0, count: values.count) == values, "\(name)")
            #expect(encodeInt(values) == bytes, "deterministic: \(name)")
        }
    }

    @Test func deltaRoundTrips() throws {
        var rng = SeededRandom(state: 99)
        var counter: Int64 = 1_700_000_000_000
        let timestamps = (0..<5000).map { _ in
            counter += Int64.random(in: 0...5000, using: &rng)
            return counter
        }
        var shapes = intShapes().filter { $0.0 != "alternating" && $0.0 != "random full range" && $0.0 != "boundaries" }
        shapes += [
            ("timestamps", timestamps),
            ("sequence", (1...1000).map { Int64($0) }),
            ("extremes", [Int64.max, 0, Int64.min, -1, Int64.max - 1]),
        ]
        for (name, values) in shapes {
            let bytes = encodeDelta(values)
            #expect(try DeltaColumnDecoder.decode(bytes[...], base: 0, count: values.count) == values, "\(name)")
        }
        // An arithmetic sequence is one literal (the start) plus one repeat run.
        #expect(encodeDelta([10, 11, 12, 13]) == hex("7f0a 0301"))
        #expect(encodeDelta((1...1000).map { Int64($0) }).count <= 4)
    }

    @Test func boolRoundTrips() throws {
        var rng = SeededRandom(state: 5)
        let shapes: [(String, [Bool])] = [
            ("empty", []),
            ("single false", [false]),
            ("single true", [true]),
            ("all false", Array(repeating: false, count: 1000)),
            ("all true", Array(repeating: true, count: 1000)),
            ("alternating", (0..<1000).map { $0 % 2 == 1 }),
            ("random", (0..<5000).map { _ in Bool.random(using: &rng) }),
            ("random runs", (0..<5000).map { _ in rng.next() % 10 == 0 }),
        ]
        for (name, values) in shapes {
            let bytes = encodeBool(values)
            #expect(try BoolColumnDecoder.decode(bytes[...], base: 0, count: values.count) == values, "\(name)")
            #expect(encodeBool(values) == bytes, "deterministic: \(name)")
        }
    }

    @Test func exactEncodings() {
        #expect(encodeUInt([]) == [])
        #expect(encodeUInt([7]) == hex("7f07"))
        #expect(encodeUInt([1, 1, 1, 2, 3]) == hex("0301 7e0203"))
        #expect(encodeUInt([1, 2, 2, 3]) == hex("7f01 0202 7f03"))
        #expect(encodeUInt([1, 1, 2, 3, 3]) == hex("0201 7f02 0203"))
        #expect(encodeUInt([1, 2, 3, 4]) == hex("7c01020304"))
        #expect(encodeUInt(Array(repeating: 9, count: 1000)) == hex("e807 09"))
        #expect(encodeInt([-1, -1, 5]) == hex("027f 7f05"))
        #expect(encodeBool([]) == [])
        #expect(encodeBool([false, false, true]) == hex("0201"))
        #expect(encodeBool([true]) == hex("0001"))
        #expect(encodeBool([true, true, false, true]) == hex("00020101"))
        #expect(encodeBool(Array(repeating: false, count: 1000)) == hex("e807"))
    }

    @Test func obviousSizes() {
        #expect(encodeUInt(Array(repeating: 123_456, count: 1000)).count <= 5)
        #expect(encodeInt(Array(repeating: -5, count: 1_000_000)).count <= 5)
        #expect(encodeBool(Array(repeating: true, count: 1_000_000)).count <= 5)
        // Alternating values never form repeat runs: one literal run.
        let alternating = encodeUInt((0..<1000).map { UInt64($0 % 2) })
        #expect(alternating.count == sleb(-1000).count + 1000)
    }

    @Test func encoderCount() {
        var u = UIntColumnEncoder()
        var b = BoolColumnEncoder()
        for k in 0..<17 { u.append(UInt64(k)); b.append(k % 3 == 0) }
        #expect(u.count == 17)
        #expect(b.count == 17)
        // finish does not consume the encoder.
        #expect(u.finish() == u.finish())
    }

    @Test func highlyCompressibleColumnsDecode() throws {
        // A million equal values is four bytes: more than 2^16 values per byte.
        let n = 1_000_000
        let u = encodeUInt(Array(repeating: 3, count: n))
        #expect(u.count == 4)
        let decoded = try UIntColumnDecoder.decode(u[...], base: 0, count: n)
        #expect(decoded.count == n && decoded.allSatisfy { $0 == 3 })
        let b = encodeBool(Array(repeating: false, count: n))
        #expect(try BoolColumnDecoder.decode(b[...], base: 0, count: n).count == n)
    }

    @Test func decodersUseAbsoluteOffsetsForSlices() {
        // Column starts at index 3 of the buffer and at absolute offset 1003.
        let buffer = hex("aaaaaa 0201 0203 ff")
        let column = buffer[3..<7]
        let e = columnError { _ = try UIntColumnDecoder.decode(column, base: 1003, count: 3) }
        #expect(e?.offset == 1005)  // the second run (2 values) exceeds the 1 remaining
        #expect(throws: Never.self) { _ = try UIntColumnDecoder.decode(column, base: 1003, count: 4) }
    }

    @Test func rejectTruncatedVarint() {
        #expect(columnError { _ = try UIntColumnDecoder.decode(hex("0380")[...], base: 0, count: 3) } != nil)
        #expect(columnError { _ = try UIntColumnDecoder.decode(hex("80")[...], base: 0, count: 3) } != nil)
        #expect(columnError { _ = try IntColumnDecoder.decode(hex("7e01ff")[...], base: 0, count: 2) } != nil)
        #expect(columnError { _ = try BoolColumnDecoder.decode(hex("0280")[...], base: 0, count: 3) } != nil)
    }

    @Test func rejectOverlongVarint() {
        let overlong = hex("7f ffffffffffffffffff8101")
        #expect(columnError { _ = try UIntColumnDecoder.decode(overlong[...], base: 0, count: 1) } != nil)
        #expect(columnError { _ = try UIntColumnDecoder.decode(hex("7f8000")[...], base: 0, count: 1) } != nil)
        #expect(columnError { _ = try BoolColumnDecoder.decode(hex("ffffffffffffffffff8101")[...], base: 0, count: 1) } != nil)
    }

    @Test func rejectHugeRunsQuickly() throws {
        let hugeRepeat = sleb(1 << 60) + [5]  // 10 bytes claiming 2^60 values
        #expect(hugeRepeat.count == 10)
        let hugeLiteral = sleb(-(1 << 60)) + [5]
        let hugeBool = uleb(1 << 60)
        let clock = ContinuousClock()
        let start = clock.now
        for bytes in [hugeRepeat, hugeLiteral, sleb(Int64.max) + [1], sleb(Int64.min) + [1]] {
            let e = columnError { _ = try UIntColumnDecoder.decode(bytes[...], base: 0, count: 10) }
            #expect(e?.message.contains("exceeds") == true)
            #expect(e?.offset == 0)
            #expect(columnError { _ = try IntColumnDecoder.decode(bytes[...], base: 0, count: 10) } != nil)
            #expect(columnError { _ = try DeltaColumnDecoder.decode(bytes[...], base: 0, count: 10) } != nil)
        }
        #expect(columnError { _ = try BoolColumnDecoder.decode(hugeBool[...], base: 0, count: 10) } != nil)
        #expect(columnError { _ = try BoolColumnDecoder.decode((uleb(5) + uleb(1 << 60))[...], base: 0, count: 10) } != nil)
        // A huge caller-supplied count with a tiny column fails during validation,
        // before anything is allocated (2^50 UInt64s would be 8 PiB).
        let big = 1 << 50
        #expect(columnError { _ = try UIntColumnDecoder.decode(hugeRepeat[...], base: 0, count: big) } != nil)
        #expect(columnError { _ = try BoolColumnDecoder.decode(hugeBool[...], base: 0, count: big) } != nil)
        #expect(clock.now - start < HangGuard.duration)
    }

    @Test func rejectFewerValuesThanCount() {
        let bytes = encodeUInt([1, 2, 3])
        let e = columnError { _ = try UIntColumnDecoder.decode(bytes[...], base: 50, count: 4) }
        #expect(e?.offset == 50 + bytes.count)
        #expect(columnError { _ = try IntColumnDecoder.decode(encodeInt([1])[...], base: 0, count: 2) } != nil)
        #expect(columnError { _ = try DeltaColumnDecoder.decode(encodeDelta([1])[...], base: 0, count: 2) } != nil)
        #expect(columnError { _ = try BoolColumnDecoder.decode(encodeBool([true])[...], base: 0, count: 2) } != nil)
        #expect(columnError { _ = try UIntColumnDecoder.decode([][...], base: 0, count: 1) } != nil)
        #expect(columnError { _ = try BoolColumnDecoder.decode([][...], base: 0, count: 1) } != nil)
        // A count larger than any run validation would accept, with too few values.
        #expect(columnError { _ = try UIntColumnDecoder.decode(bytes[...], base: 0, count: 1 << 40) } != nil)
    }

    @Test func rejectTrailingBytes() {
        let bytes = encodeUInt([1, 2, 3]) + [0x7F, 0x01]
        let e = columnError { _ = try UIntColumnDecoder.decode(bytes[...], base: 0, count: 3) }
        #expect(e?.offset == bytes.count - 2)
        #expect(e?.message.contains("trailing") == true)
        #expect(columnError { _ = try UIntColumnDecoder.decode(hex("7f01")[...], base: 0, count: 0) } != nil)
        #expect(columnError { _ = try BoolColumnDecoder.decode((encodeBool([true, false]) + [1])[...], base: 0, count: 2) } != nil)
        #expect(columnError { _ = try BoolColumnDecoder.decode(hex("00")[...], base: 0, count: 0) } != nil)
        #expect(columnError { _ = try DeltaColumnDecoder.decode((encodeDelta([4]) + [0])[...], base: 0, count: 1) } != nil)
    }

    @Test func rejectZeroRuns() {
        let e = columnError { _ = try UIntColumnDecoder.decode(hex("7f01 00 7f02")[...], base: 0, count: 2) }
        #expect(e?.offset == 2)
        #expect(e?.message.contains("run length 0") == true)
        #expect(columnError { _ = try IntColumnDecoder.decode(hex("00")[...], base: 0, count: 1) } != nil)
        // Bool: the first (false) run may be 0, later runs may not.
        #expect(throws: Never.self) { _ = try BoolColumnDecoder.decode(hex("0003")[...], base: 0, count: 3) }
        #expect(columnError { _ = try BoolColumnDecoder.decode(hex("020001")[...], base: 0, count: 3) }?.offset == 1)
    }

    @Test func rejectNegativeCount() {
        #expect(columnError { _ = try UIntColumnDecoder.decode([][...], base: 0, count: -1) } != nil)
        #expect(columnError { _ = try BoolColumnDecoder.decode([][...], base: 0, count: -1) } != nil)
    }

    @Test func acceptsNonCanonicalRunSplits() throws {
        // Well-formed but not what the encoder would write: two repeat runs of the same value.
        #expect(try UIntColumnDecoder.decode(hex("0205 0205")[...], base: 0, count: 4) == [5, 5, 5, 5])
    }

    @Test func deltaOverflowIsAnErrorNotATrap() {
        let bytes = encodeInt([Int64.max, 1])
        let e = columnError { _ = try DeltaColumnDecoder.decode(bytes[...], base: 77, count: 2) }
        #expect(e?.offset == 77)
        #expect(e?.message.contains("overflow") == true)
        let under = encodeInt([Int64.min, -1])
        #expect(columnError { _ = try DeltaColumnDecoder.decode(under[...], base: 0, count: 2) } != nil)
    }

    /// Save appends a run of continuing changes' values at once; the bytes must be those of
    /// appending them one at a time, whatever state the encoder was in (empty, a lone value,
    /// a run, a literal run ending in the same or another value).
    @Test func bulkAppendsWriteTheBytesOfSingleAppends() {
        var rng = SeededRandom(state: 31)
        for _ in 0 ..< 300 {
            var oneU = UIntColumnEncoder(), bulkU = UIntColumnEncoder()
            var oneI = IntColumnEncoder(), bulkI = IntColumnEncoder()
            var oneD = DeltaColumnEncoder(), bulkD = DeltaColumnEncoder()
            var last: Int64 = 0
            for _ in 0 ..< Int.random(in: 1 ... 12, using: &rng) {
                let v = UInt64.random(in: 0 ... 3, using: &rng)
                let n = [0, 1, 2, 3, 7][Int.random(in: 0 ... 4, using: &rng)]
                let step = Int64.random(in: -2 ... 2, using: &rng)
                for _ in 0 ..< n { oneU.append(v); oneI.append(Int64(v) - 1) }
                bulkU.append(v, count: n)
                bulkI.append(Int64(v) - 1, count: n)
                for _ in 0 ..< n { last += step; oneD.append(last) }
                bulkD.append(steps: step, count: n)
                // Single values in between, so that bulk appends meet every encoder state.
                if Bool.random(using: &rng) {
                    let w = UInt64.random(in: 0 ... 3, using: &rng)
                    oneU.append(w); bulkU.append(w); oneI.append(Int64(w)); bulkI.append(Int64(w))
                    last = Int64(w); oneD.append(last); bulkD.append(last)
                }
            }
            #expect(bulkU.finish() == oneU.finish() && bulkU.count == oneU.count)
            #expect(bulkI.finish() == oneI.finish() && bulkI.count == oneI.count)
            #expect(bulkD.finish() == oneD.finish() && bulkD.count == oneD.count)
        }
    }

    /// Load reads the change columns as runs; expanded, the runs are the values `decode`
    /// gives, and a column `decode` refuses is refused (random runs, literals and damage).
    @Test func runsExpandToTheDecodedValues() throws {
        var rng = SeededRandom(state: 77)
        for round in 0 ..< 400 {
            var values: [UInt64] = []
            for _ in 0 ..< Int.random(in: 1 ... 8, using: &rng) {
                let v = UInt64.random(in: 0 ... 4, using: &rng)
                values += Array(repeating: v, count: [1, 1, 2, 5][Int.random(in: 0 ... 3, using: &rng)])
            }
            var bytes = encodeUInt(values)
            if round % 4 == 3 { bytes[Int.random(in: 0 ..< bytes.count, using: &rng)] ^= UInt8.random(in: 1 ... 255, using: &rng) }
            let plain = try? UIntColumnDecoder.decode(bytes[...], base: 0, count: values.count)
            let runs = try? UIntColumnDecoder.decodeRuns(bytes[...], base: 0, count: values.count)
            let expanded = runs.map { $0.flatMap { Array(repeating: $0.value, count: $0.count) } }
            // Equal neighbours are one run.
            let merged = runs.map { r in r.indices.dropFirst().allSatisfy { r[$0].value != r[$0 - 1].value } } ?? true
            if expanded != plain || !merged { Issue.record("uint round \(round): \(String(describing: runs)) vs \(String(describing: plain))") }
            let ints = values.map { Int64($0) - 2 }
            var signed = encodeInt(ints)
            if round % 4 == 3 { signed[Int.random(in: 0 ..< signed.count, using: &rng)] ^= UInt8.random(in: 1 ... 255, using: &rng) }
            let sums = try? DeltaColumnDecoder.decode(signed[...], base: 0, count: ints.count)
            let deltaRuns = try? DeltaColumnDecoder.decodeRuns(signed[...], base: 0, count: ints.count)
            let expandedSums = deltaRuns.map { $0.flatMap { r in (0 ..< r.count).map { r.value($0) } } }
            let lastsRight = deltaRuns.map { $0.allSatisfy { $0.value($0.count - 1) == $0.last } } ?? true
            if expandedSums != sums || !lastsRight { Issue.record("delta round \(round): \(String(describing: deltaRuns)) vs \(String(describing: sums))") }
        }
    }

    /// Runs whose values all fit although `step × (count − 1)` does not, and runs that do leave
    /// Int64: the value named is the first outside, as `decode` names it.
    @Test func deltaRunsNameTheFirstValueOutsideInt64() throws {
        let fits: [Int64] = [Int64.min, 1 << 62, 1 << 62, 1 << 62]       // -2^63, -2^62, 0, 2^62
        let bytes = encodeInt(fits)
        let runs = try DeltaColumnDecoder.decodeRuns(bytes[...], base: 0, count: fits.count)
        #expect(runs.flatMap { r in (0 ..< r.count).map { r.value($0) } } == [Int64.min, -(1 << 62), 0, 1 << 62])
        for steps in [[Int64.max - 10, 4, 4, 4, 4], [Int64.min + 10, -4, -4, -4, -4], [5, Int64.max / 2, Int64.max / 2]] {
            let b = encodeInt(steps)
            let plain = columnError { _ = try DeltaColumnDecoder.decode(b[...], base: 0, count: steps.count) }
            let run = columnError { _ = try DeltaColumnDecoder.decodeRuns(b[...], base: 0, count: steps.count) }
            #expect(plain != nil && run == plain, "\(steps)")
        }
    }

    @Test func largeRandomColumnsRoundTrip() throws {
        var rng = SeededRandom(state: 2024)
        let values = (0..<200_000).map { _ in UInt64.random(in: 0...200, using: &rng) }
        let bytes = encodeUInt(values)
        #expect(try UIntColumnDecoder.decode(bytes[...], base: 0, count: values.count) == values)
    }
}

// MARK: - ColumnSet

@Suite("ColumnSet")
struct ColumnSetTests {
    @Test func roundTrip() throws {
        let columns: [UInt64: [UInt8]] = [
            300: [9, 9, 9],
            0: [1],
            7: [],  // omitted
            UInt64.max: [4, 5],
            3: [2, 3],
        ]
        let bytes = ColumnSet.encode(columns)
        #expect(bytes == hex("0001 01  0302 0203  ac0203 090909  ffffffffffffffffff01 02 0405"))
        let prefix: [UInt8] = [0xEE, 0xEE]
        let file = prefix + bytes
        let decoded = try ColumnSet.decode(file[2...], base: 1002)
        #expect(decoded.keys.sorted() == [0, 3, 300, UInt64.max])
        for (id, slice) in decoded {
            #expect(Array(slice.bytes) == columns[id])
            // base is the absolute offset of the slice's first byte.
            #expect(slice.base - 1000 == slice.bytes.startIndex)
        }
        #expect(decoded[3]?.base == 1007)
        #expect(try ColumnSet.decode(bytes, base: 0).mapValues { Array($0.bytes) } == columns.filter { !$0.value.isEmpty })
    }

    @Test func emptySet() throws {
        #expect(ColumnSet.encode([:]) == [])
        #expect(ColumnSet.encode([1: [], 2: []]) == [])
        #expect(try ColumnSet.decode([], base: 0).isEmpty)
    }

    @Test func columnsFeedDecoders() throws {
        var ids = UIntColumnEncoder()
        var flags = BoolColumnEncoder()
        for k in 0..<100 { ids.append(UInt64(k / 10)); flags.append(k % 7 == 0) }
        let set = ColumnSet.encode([1: ids.finish(), 2: flags.finish()])
        let file = [UInt8](repeating: 0, count: 64) + set
        let cols = try ColumnSet.decode(file[64...], base: 64)
        let idCol = try #require(cols[1])
        let flagCol = try #require(cols[2])
        #expect(try UIntColumnDecoder.decode(idCol.bytes, base: idCol.base, count: 100) == (0..<100).map { UInt64($0 / 10) })
        #expect(try BoolColumnDecoder.decode(flagCol.bytes, base: flagCol.base, count: 100) == (0..<100).map { $0 % 7 == 0 })
        // Errors inside a column report absolute file offsets.
        let e = columnError { _ = try UIntColumnDecoder.decode(idCol.bytes, base: idCol.base, count: 99) }
        #expect(e.map { $0.offset >= idCol.base && $0.offset <= idCol.base + idCol.bytes.count } == true)
    }

    @Test func rejectsBadSets() {
        // Duplicate id.
        #expect(columnError { _ = try ColumnSet.decode(hex("0101aa 0101bb"), base: 0) }?.message.contains("duplicate") == true)
        // Descending ids; offset points at the bad id.
        #expect(columnError { _ = try ColumnSet.decode(hex("0501aa 0301bb"), base: 100) }?.offset == 103)
        // Length past the end.
        let e = columnError { _ = try ColumnSet.decode(hex("0105aabb"), base: 10) }
        #expect(e?.offset == 11)
        // Huge length.
        #expect(columnError { _ = try ColumnSet.decode(hex("01ffffffffffffffff7f aa"), base: 0) } != nil)
        // Truncated id / length varints, missing length.
        #expect(columnError { _ = try ColumnSet.decode(hex("80"), base: 0) } != nil)
        #expect(columnError { _ = try ColumnSet.decode(hex("0180"), base: 0) } != nil)
        #expect(columnError { _ = try ColumnSet.decode(hex("01"), base: 0) } != nil)
        // Explicit empty column.
        #expect(columnError { _ = try ColumnSet.decode(hex("0100"), base: 0) }?.message.contains("empty") == true)
    }
}

// MARK: - Deflate / Gzip / CRC32

private func mixedText(bytes: Int, seed: UInt64) -> [UInt8] {
    var rng = SeededRandom(state: seed)
    let words = ["peer", "note", "CRDT", "merge", "ändern", "カラム", "run", "length", "{\"op\":", "\n", "🙂", "the", "of"]
    var out: [UInt8] = []
    out.reserveCapacity(bytes + 32)
    while out.count < bytes {
        if rng.next() % 5 == 0 {
            out += Array(String(rng.next() % 100_000).utf8)
        } else {
            out += Array(words[Int(rng.next() % UInt64(words.count))].utf8)
        }
        out.append(rng.next() % 3 == 0 ? 0x2C : 0x20)
    }
    return Array(out.prefix(bytes))
}

/// Wraps raw DEFLATE in a gzip member (RFC 1952) using only PeerNote APIs.
private func gzipMember(_ data: [UInt8]) -> [UInt8] {
    var out: [UInt8] = [0x1F, 0x8B, 0x08, 0x00, 0, 0, 0, 0, 0x02, 0x03]
    out += Deflate.compress(data)
    let crc = CRC32.checksum(data)
    let size = UInt32(truncatingIfNeeded: data.count)
    for shift in stride(from: 0, to: 32, by: 8) { out.append(UInt8(truncatingIfNeeded: crc >> UInt32(shift))) }
    for shift in stride(from: 0, to: 32, by: 8) { out.append(UInt8(truncatingIfNeeded: size >> UInt32(shift))) }
    return out
}

/// `printf 'hello, peernote\n' | gzip -9n`
private let helloGzip = hex("""
    1f8b0800000000000203cb48cdc9c9d75128484d2dcacb2f49e502006608006510000000
    """)
/// `printf 'second member\n' | gzip -9n`
private let secondGzip = hex("""
    1f8b08000000000002032b4e4dcecf4b51c84dcd4d4a2de2020036184b0e0e000000
    """)

@Suite("Deflate")
struct DeflateTests {
    @Test func roundTrips() throws {
        let inputs: [[UInt8]] = [
            [],
            [0x42],
            Array("hello, hello, hello, peernote".utf8),
            (0..<256).map { UInt8($0) },
            mixedText(bytes: 1 << 20, seed: 3),
        ]
        for input in inputs {
            let compressed = Deflate.compress(input)
            #expect(try Deflate.decompress(compressed[...], maxOutput: input.count) == input, "\(input.count) bytes")
            #expect(try Deflate.decompress(compressed, maxOutput: Int.max) == input)
        }
        // No bytes: one short empty block.
        #expect(Deflate.compress([]).count <= 5)
    }

    @Test func compressesText() {
        let text = mixedText(bytes: 1 << 20, seed: 4)
        #expect(Deflate.compress(text).count < text.count / 2)
    }

    @Test func deterministic() {
        let text = mixedText(bytes: 200_000, seed: 5)
        #expect(Deflate.compress(text) == Deflate.compress(text))
        #expect(Deflate.compress(text[...]) == Deflate.compress(Array(text)))
    }

    @Test func decompressesSlices() throws {
        let data = mixedText(bytes: 5000, seed: 6)
        let file = [0xAA, 0xBB] + Deflate.compress(data) + [0xCC]
        #expect(try Deflate.decompress(file[2..<(file.count - 1)], maxOutput: 5000) == data)
    }

    @Test func rejectsCorrupt() {
        // BFINAL=1, BTYPE=11 (reserved).
        #expect(deflateError { _ = try Deflate.decompress([0xFF, 0xFF], maxOutput: 100) }?.message.contains("corrupt") == true)
        // Stored block whose LEN/NLEN do not match.
        #expect(deflateError { _ = try Deflate.decompress([0x01, 0x05, 0x00, 0x00, 0x00], maxOutput: 100) } != nil)
        // Flipping bits inside a compressed stream is caught (as corruption, truncation or trailing data).
        var compressed = Deflate.compress(mixedText(bytes: 10_000, seed: 7))
        compressed[compressed.count / 2] ^= 0xFF
        compressed[compressed.count / 2 + 1] ^= 0x5A
        compressed[10] ^= 0xFF
        let original = mixedText(bytes: 10_000, seed: 7)
        let result = try? Deflate.decompress(compressed, maxOutput: 1 << 20)
        #expect(result != original)
    }

    @Test func rejectsTruncated() {
        let data = mixedText(bytes: 100_000, seed: 8)
        let compressed = Deflate.compress(data)
        for cut in [1, 10, compressed.count / 2, compressed.count - 1] {
            let e = deflateError { _ = try Deflate.decompress(compressed[..<cut], maxOutput: 1 << 20) }
            #expect(e != nil, "cut at \(cut)")
        }
        #expect(deflateError { _ = try Deflate.decompress([], maxOutput: 10) }?.message.contains("truncated") == true)
    }

    @Test func rejectsTrailingInput() {
        let compressed = Deflate.compress(Array("trailing".utf8))
        let e = deflateError { _ = try Deflate.decompress(compressed + [0], maxOutput: 100) }
        #expect(e?.message.contains("trailing") == true)
        #expect(deflateError { _ = try Deflate.decompress(compressed + compressed, maxOutput: 100) } != nil)
    }

    @Test func enforcesMaxOutput() throws {
        let zeros = [UInt8](repeating: 0, count: 10 << 20)
        let bomb = Deflate.compress(zeros)
        #expect(bomb.count < 20_000)
        let e = deflateError { _ = try Deflate.decompress(bomb, maxOutput: 1 << 20) }
        #expect(e?.message.contains("exceeds") == true)
        // Exactly at the limit is fine; one byte below is not.
        let data = mixedText(bytes: 12_345, seed: 9)
        let compressed = Deflate.compress(data)
        #expect(try Deflate.decompress(compressed, maxOutput: 12_345) == data)
        #expect(deflateError { _ = try Deflate.decompress(compressed, maxOutput: 12_344) } != nil)
        #expect(try Deflate.decompress(Deflate.compress([]), maxOutput: 0) == [])
        #expect(deflateError { _ = try Deflate.decompress(Deflate.compress([1]), maxOutput: 0) } != nil)
        #expect(deflateError { _ = try Deflate.decompress(compressed, maxOutput: -1) } != nil)
    }

    @Test func gzipKnownVectors() throws {
        #expect(try Gzip.decompress(helloGzip, maxOutput: 100) == Array("hello, peernote\n".utf8))
        // Multi-member file: outputs concatenate.
        #expect(try Gzip.decompress(helloGzip + secondGzip, maxOutput: 100) == Array("hello, peernote\nsecond member\n".utf8))
        #expect(deflateError { _ = try Gzip.decompress(helloGzip + secondGzip, maxOutput: 20) } != nil)
    }

    @Test func gzipRoundTripThroughDeflateAndCRC() throws {
        let data = mixedText(bytes: 300_000, seed: 10)
        #expect(try Gzip.decompress(gzipMember(data), maxOutput: data.count) == data)
        #expect(try Gzip.decompress(gzipMember([]), maxOutput: 0) == [])
    }

    @Test func gzipRejectsBadInput() {
        #expect(deflateError { _ = try Gzip.decompress([], maxOutput: 10) } != nil)
        #expect(deflateError { _ = try Gzip.decompress(Array(helloGzip.dropLast(4)), maxOutput: 100) } != nil)
        #expect(deflateError { _ = try Gzip.decompress(helloGzip + [0x00], maxOutput: 100) } != nil)
        #expect(deflateError { _ = try Gzip.decompress(helloGzip + [0x1F, 0x8B], maxOutput: 100) } != nil)
        var badCRC = helloGzip
        badCRC[badCRC.count - 8] ^= 0x01
        #expect(deflateError { _ = try Gzip.decompress(badCRC, maxOutput: 100) } != nil)
        var badMagic = helloGzip
        badMagic[0] = 0x1E
        #expect(deflateError { _ = try Gzip.decompress(badMagic, maxOutput: 100) } != nil)
        // Raw DEFLATE is not gzip.
        #expect(deflateError { _ = try Gzip.decompress(Deflate.compress([1, 2, 3]), maxOutput: 100) } != nil)
        // Gzip bomb is bounded too.
        let bomb = gzipMember([UInt8](repeating: 0, count: 10 << 20))
        #expect(deflateError { _ = try Gzip.decompress(bomb, maxOutput: 1 << 20) }?.message.contains("exceeds") == true)
    }

    @Test func crc32() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(CRC32.checksum([UInt8]()) == 0)
        #expect(CRC32.checksum(Array("The quick brown fox jumps over the lazy dog".utf8)) == 0x414F_A339)
        let a = Array("hello, ".utf8)
        let b = Array("peernote".utf8)
        #expect(CRC32.checksum(b, initial: CRC32.checksum(a)) == CRC32.checksum(a + b))
        let file = [0, 0] + Array("123456789".utf8)
        #expect(CRC32.checksum(file[2...]) == 0xCBF4_3926)
        #expect(CRC32.checksum("123456789".utf8) == 0xCBF4_3926)  // non-Array collection
    }
}
