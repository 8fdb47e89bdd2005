import Testing
@testable import PeerNote

/// Parses a hex string ("8301 82", spaces allowed) into bytes.
private func hex(_ s: String) -> [UInt8] {
    let digits = Array(s.filter { !$0.isWhitespace })
    return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16) ?? 0 }
}

private func hexString(_ bytes: [UInt8]) -> String {
    bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
}

private func encode(_ build: (inout CBOREncoder) -> Void) -> [UInt8] {
    var encoder = CBOREncoder()
    build(&encoder)
    return encoder.bytes
}

/// Where decoding failed and the words that say why.
private struct Failure: Equatable {
    var offset: Int
    var message: String
}

private func decodeError(_ bytes: [UInt8], limits: CBORLimits = .init()) -> Failure? {
    do {
        _ = try CBORDecoder.decodeItem(bytes, limits: limits)
        return nil
    } catch {
        return Failure(offset: error.offset, message: error.message)
    }
}

private func decodeProblem(_ bytes: [UInt8], limits: CBORLimits = .init()) -> CBORDecodeError.Problem? {
    do {
        _ = try CBORDecoder.decodeItem(bytes, limits: limits)
        return nil
    } catch {
        return error.problem
    }
}

/// Every item in the tree, depth first.
private func allItems(_ item: CBORItem) -> [CBORItem] {
    switch item.value {
    case .array(let items): [item] + items.flatMap(allItems)
    case .map(let pairs): [item] + pairs.flatMap { allItems($0.key) + allItems($0.value) }
    case .tagged(_, let inner): [item] + allItems(inner)
    default: [item]
    }
}

// RFC 8949 Appendix A vectors that are in preferred (shortest) serialization.
private let rfcVectors: [(String, String)] = [
    ("0", "00"), ("1", "01"), ("10", "0a"), ("23", "17"), ("24", "1818"), ("25", "1819"),
    ("100", "1864"), ("1000", "1903e8"), ("1000000", "1a000f4240"),
    ("1000000000000", "1b000000e8d4a51000"), ("18446744073709551615", "1bffffffffffffffff"),
    ("-18446744073709551616", "3bffffffffffffffff"), ("-1", "20"), ("-10", "29"),
    ("-100", "3863"), ("-1000", "3903e7"),
    ("0.0", "f90000"), ("-0.0", "f98000"), ("1.0", "f93c00"), ("1.1", "fb3ff199999999999a"),
    ("1.5", "f93e00"), ("65504.0", "f97bff"), ("100000.0", "fa47c35000"),
    ("3.4028234663852886e+38", "fa7f7fffff"), ("1.0e+300", "fb7e37e43c8800759c"),
    ("5.960464477539063e-8", "f90001"), ("0.00006103515625", "f90400"), ("-4.0", "f9c400"),
    ("-4.1", "fbc010666666666666"), ("Infinity", "f97c00"), ("NaN", "f97e00"), ("-Infinity", "f9fc00"),
    ("false", "f4"), ("true", "f5"), ("null", "f6"), ("undefined", "f7"),
    ("simple(16)", "f0"), ("simple(255)", "f8ff"),
    ("0(\"2013-03-21T20:04:00Z\")", "c074323031332d30332d32315432303a30343a30305a"),
    ("1(1363896240)", "c11a514b67b0"), ("23(h'01020304')", "d74401020304"),
    ("24(h'6449455446')", "d818456449455446"),
    ("32(\"http://www.example.com\")", "d82076687474703a2f2f7777772e6578616d706c652e636f6d"),
    ("h''", "40"), ("h'01020304'", "4401020304"), ("\"\"", "60"), ("\"a\"", "6161"),
    ("\"IETF\"", "6449455446"), ("\"\\\"\\\\\"", "62225c"), ("\"\\u00fc\"", "62c3bc"),
    ("\"\\u6c34\"", "63e6b0b4"), ("\"\\ud800\\udd51\"", "64f0908591"),
    ("[]", "80"), ("[1, 2, 3]", "83010203"), ("[1, [2, 3], [4, 5]]", "8301820203820405"),
    ("[1, 2, ..., 25]", "98190102030405060708090a0b0c0d0e0f101112131415161718181819"),
    ("{}", "a0"), ("{1: 2, 3: 4}", "a201020304"), ("{\"a\": 1, \"b\": [2, 3]}", "a26161016162820203"),
    ("[\"a\", {\"b\": \"c\"}]", "826161a161626163"),
    ("{\"a\": \"A\", ..., \"e\": \"E\"}", "a56161614161626142616361436164614461656145"),
    ("55799([1, 2, 3])", "d9d9f783010203"),
]

@Suite("CBOR")
struct CBORTests {
    @Test("RFC 8949 Appendix A vectors decode, and re-encode to the same bytes")
    func rfcVectorsRoundTrip() throws {
        for (diagnostic, vector) in rfcVectors {
            let input = hex(vector)
            let item = try CBORDecoder.decodeItem(input)
            #expect(item.offset == 0 && item.end == input.count, "\(diagnostic)")
            #expect(encode { $0.item(item) } == input, "\(diagnostic)")
        }
    }

    @Test("RFC vectors decode to the expected values")
    func rfcVectorValues() throws {
        #expect(try CBORDecoder.decodeItem(hex("1903e8")).uint == 1000)
        #expect(try CBORDecoder.decodeItem(hex("3903e7")).int == -1000)
        #expect(try CBORDecoder.decodeItem(hex("3bffffffffffffffff")).value == .negative(.max))
        #expect(try CBORDecoder.decodeItem(hex("6449455446")).textValue == "IETF")
        #expect(try CBORDecoder.decodeItem(hex("64f0908591")).textValue == "\u{10151}")
        #expect(try CBORDecoder.decodeItem(hex("4401020304")).bytesValue == [1, 2, 3, 4])
        #expect(try CBORDecoder.decodeItem(hex("f90001")).value == .float(5.960464477539063e-8))
        #expect(try CBORDecoder.decodeItem(hex("f97bff")).value == .float(65504))
        #expect(try CBORDecoder.decodeItem(hex("fa47c35000")).value == .float(100000))
        #expect(try CBORDecoder.decodeItem(hex("f9fc00")).value == .float(-.infinity))
        let nan = try CBORDecoder.decodeItem(hex("f97e00"))
        if case .float(let d) = nan.value { #expect(d.isNaN) } else { Issue.record("NaN decoded as \(nan.value)") }
        #expect(try CBORDecoder.decodeItem(hex("f0")).value == .simple(16))
        #expect(try CBORDecoder.decodeItem(hex("f7")).value == .undefined)
        let tagged = try #require(try CBORDecoder.decodeItem(hex("c11a514b67b0")).tagged)
        #expect(tagged.tag == 1 && tagged.item.uint == 1363896240)
        let nested = try CBORDecoder.decodeItem(hex("8301820203820405"))
        #expect(nested.array?.map { $0.array?.compactMap(\.uint) ?? [$0.uint ?? 0] } == [[1], [2, 3], [4, 5]])
    }

    @Test("Encoder methods produce the RFC bytes")
    func encoderVectors() {
        #expect(encode { $0.unsigned(0) } == hex("00"))
        #expect(encode { $0.unsigned(23) } == hex("17"))
        #expect(encode { $0.unsigned(24) } == hex("1818"))
        #expect(encode { $0.unsigned(1000) } == hex("1903e8"))
        #expect(encode { $0.unsigned(.max) } == hex("1bffffffffffffffff"))
        #expect(encode { $0.int(-1) } == hex("20"))
        #expect(encode { $0.int(-1000) } == hex("3903e7"))
        #expect(encode { $0.int(1000) } == hex("1903e8"))
        #expect(encode { $0.int(.min) } == hex("3b7fffffffffffffff"))
        #expect(encode { $0.negative(.max) } == hex("3bffffffffffffffff"))
        #expect(encode { $0.text("IETF") } == hex("6449455446"))
        #expect(encode { $0.text(String(repeating: "a", count: 24)) } == hex("7818") + Array(repeating: 0x61, count: 24))
        #expect(encode { $0.bytes([1, 2, 3, 4]) } == hex("4401020304"))
        #expect(encode { $0.bytes(Array(repeating: 7, count: 256)) } == hex("590100") + Array(repeating: 7, count: 256))
        #expect(encode { $0.arrayHeader(3); $0.int(1); $0.arrayHeader(2); $0.int(2); $0.int(3); $0.arrayHeader(2); $0.int(4); $0.int(5) }
            == hex("8301820203820405"))
        #expect(encode { $0.mapHeader(2); $0.int(1); $0.int(2); $0.int(3); $0.int(4) } == hex("a201020304"))
        #expect(encode { $0.tag(55799); $0.arrayHeader(0) } == hex("d9d9f780"))
        #expect(encode { $0.bool(false); $0.bool(true); $0.null(); $0.undefined(); $0.simple(16); $0.simple(255) } == hex("f4f5f6f7f0f8ff"))
        #expect(encode { $0.raw(hex("a10102")); $0.null() } == hex("a10102f6"))
        #expect(encode { $0.arrayHeader(25) }.count == 2)
        #expect(encode { $0.mapHeader(65536) } == hex("ba00010000"))
    }

    @Test("Floats use the shortest exact width")
    func floatWidths() throws {
        let cases: [(Double, String)] = [
            (0, "f90000"), (-0.0, "f98000"), (1, "f93c00"), (1.5, "f93e00"), (65504, "f97bff"),
            (65520, "fa477ff000"), (3 * 0x1p-24, "f90003"), (1023 * 0x1p-24, "f903ff"), (0x1p-25, "fa33000000"),
            (100000, "fa47c35000"), (1.1, "fb3ff199999999999a"), (.infinity, "f97c00"), (.nan, "f97e00"),
            (Double(Float.leastNonzeroMagnitude), "fa00000001"), (.leastNonzeroMagnitude, "fb0000000000000001"),
        ]
        for (value, vector) in cases {
            let bytes = encode { $0.double(value) }
            #expect(hexString(bytes) == vector, "\(value)")
            let decoded = try CBORDecoder.decodeItem(bytes)
            if case .float(let d) = decoded.value {
                #expect(d.bitPattern == value.bitPattern || (d.isNaN && value.isNaN), "\(value)")
            } else {
                Issue.record("\(value) decoded as \(decoded.value)")
            }
        }
    }

    @Test("Every value kind round-trips through encoder and decoder with exact offsets")
    func nestedRoundTripAndOffsets() throws {
        let bytes = encode { e in
            e.mapHeader(3)
            e.unsigned(1)                   // key at 1
            e.arrayHeader(3)                // 2
            e.bytes([0xaa])                 // 3..<5
            e.text("x")                     // 5..<7
            e.int(-5)                       // 7
            e.text("k")                     // 8..<10
            e.tag(7); e.mapHeader(0)        // 10, 11
            e.unsigned(1000)                // 12..<15
            e.arrayHeader(6)                // 15
            e.bool(true); e.null(); e.undefined(); e.simple(99); e.double(1.5); e.double(1.1)
        }
        #expect(hexString(bytes) == "a30183 41aa 6178 24 616b c7a0 1903e8 86 f5 f6 f7 f863 f93e00 fb3ff199999999999a".filter { $0 != " " })
        let root = try CBORDecoder.decodeItem(bytes)
        #expect(root.offset == 0 && root.end == bytes.count)
        let pairs = try #require(root.map)
        #expect(pairs.count == 3)
        let first = try #require(root.mapValue(forKey: 1)?.array)
        #expect(first.map(\.offset) == [3, 5, 7])
        #expect(first.map(\.end) == [5, 7, 8])
        #expect(first.map(\.value) == [.bytes([0xaa]), .text("x"), .negative(4)])
        let tagged = try #require(root.mapValue(forKey: "k"))
        #expect(tagged.offset == 10 && tagged.end == 12)
        #expect(tagged.value == .tagged(7, CBORItem(offset: 11, end: 12, value: .map([]))))
        #expect(pairs[2].key == CBORItem(offset: 12, end: 15, value: .unsigned(1000)))
        let last = try #require(pairs[2].value.array)
        #expect(last.map(\.value) == [.bool(true), .null, .undefined, .simple(99), .float(1.5), .float(1.1)])
        #expect(last.map(\.offset) == [16, 17, 18, 19, 21, 24])
        #expect(pairs[2].value.end == bytes.count)
        // Each item's raw bytes decode, on their own and in place, to the same item.
        for item in allItems(root) {
            #expect(try CBORDecoder.decodeItem(bytes, at: item.offset) == item)
            let alone = try CBORDecoder.decodeItem(Array(bytes[item.offset..<item.end]))
            #expect(alone.end == item.end - item.offset)
            #expect(encode { $0.item(alone) } == Array(bytes[item.offset..<item.end]))
        }
        #expect(encode { $0.item(root) } == bytes)
    }

    @Test("decodeItem stops after one item; decodeSequence reads them all")
    func sequences() throws {
        let input = hex("01 6161 820203 f6 a0")
        let first = try CBORDecoder.decodeItem(input)
        #expect(first == CBORItem(offset: 0, end: 1, value: .unsigned(1)))
        #expect(try CBORDecoder.decodeItem(input, at: 3).array?.count == 2)
        let items = try CBORDecoder.decodeSequence(input)
        #expect(items.map(\.offset) == [0, 1, 3, 6, 7])
        #expect(items.map(\.end) == [1, 3, 6, 7, 8])
        #expect(items[1].textValue == "a")
        #expect(items[3].isNull)
        #expect(try CBORDecoder.decodeSequence([]).isEmpty)
        #expect(throws: CBORDecodeError(offset: 3, problem: .endOfInput)) {
            try CBORDecoder.decodeSequence(hex("01 6161 82 8100"))
        }
        #expect(throws: CBORDecodeError(offset: 8, problem: .endOfInput)) {
            try CBORDecoder.decodeItem(input, at: 8)
        }
        #expect(throws: CBORDecodeError.self) { try CBORDecoder.decodeItem(input, at: 9) }
        #expect(throws: CBORDecodeError.self) { try CBORDecoder.decodeItem(input, at: -1) }
    }

    @Test("Every truncation of a nested sample throws with an offset inside the prefix")
    func truncation() throws {
        let sample = hex("a2 01 83 4401020304 6449455446 1903e8 63616263 c1 82 fb3ff199999999999a 9819") + Array(repeating: 0x00, count: 25)
        #expect(try CBORDecoder.decodeItem(sample).end == sample.count)
        for length in 0..<sample.count {
            let prefix = Array(sample[..<length])
            let error = try #require(decodeError(prefix), "prefix \(length) decoded")
            #expect(error.offset >= 0 && error.offset <= length)
            #expect(error.message == "unexpected end of input" || error.message.hasPrefix("declared "), "\(error)")
            #expect(decodeProblem(prefix)?.inputEndsInsideItem == true, "prefix \(length): \(error)")
            if length > 0 {
                #expect(throws: CBORDecodeError.self) { try CBORDecoder.decodeSequence(prefix) }
            }
        }
        #expect(decodeError(hex("a2 01 83 44010203")) == Failure(offset: 3, message: "declared length 4 exceeds the 3 bytes that remain"))
        #expect(decodeError(hex("a2 01 83 4401")) == Failure(offset: 2, message: "declared count 3 exceeds the 2 bytes that remain"))
        #expect(decodeError(hex("a2 01 83 44010203 04")) == Failure(offset: 2, message: "unexpected end of input"))
        #expect(decodeError(hex("a2 01 83 4401020304 6449455446 19 03")) == Failure(offset: 13, message: "unexpected end of input"))
    }

    @Test("Huge declared lengths fail fast without allocating")
    func hugeDeclaredLengths() {
        #expect(decodeError(hex("5b 1000000000000000")) == Failure(offset: 0, message: "declared length 1152921504606846976 exceeds the 0 bytes that remain"))
        #expect(decodeError(hex("7b 1000000000000000 616263")) == Failure(offset: 0, message: "declared length 1152921504606846976 exceeds the 3 bytes that remain"))
        #expect(decodeError(hex("81 5b ffffffffffffffff 00")) == Failure(offset: 1, message: "declared length 18446744073709551615 exceeds the 1 bytes that remain"))
        #expect(decodeError(hex("9b 0000000100000000 0102")) == Failure(offset: 0, message: "declared count 4294967296 exceeds the 2 bytes that remain"))
        #expect(decodeError(hex("9b ffffffffffffffff")) == Failure(offset: 0, message: "declared count 18446744073709551615 exceeds the 0 bytes that remain"))
        #expect(decodeError(hex("9b 8000000000000000 00")) == Failure(offset: 0, message: "declared count 9223372036854775808 exceeds the 1 bytes that remain"))
        #expect(decodeError(hex("bb ffffffffffffffff 0102")) == Failure(offset: 0, message: "declared map size 18446744073709551615 needs more than the 2 bytes that remain"))
        #expect(decodeError(hex("a2 0102 03")) == Failure(offset: 0, message: "declared map size 2 needs more than the 3 bytes that remain"))
        #expect(decodeError(hex("82 9a 00010000 00")) == Failure(offset: 1, message: "declared count 65536 exceeds the 1 bytes that remain"))
    }

    @Test("Nesting is limited by maxDepth, for arrays, maps and tags")
    func nestingDepth() throws {
        let deep = Array(repeating: UInt8(0x81), count: 100) + [0x00]
        #expect(decodeError(deep) == Failure(offset: 64, message: "nesting deeper than 64 levels"))
        let ok = Array(repeating: UInt8(0x81), count: 64) + [0x00]
        #expect(try CBORDecoder.decodeItem(ok).end == 65)
        let okEmpty = Array(repeating: UInt8(0x81), count: 63) + [0x80]
        #expect(try CBORDecoder.decodeItem(okEmpty).end == 64)
        let tags = Array(repeating: UInt8(0xc1), count: 65) + [0x00]
        #expect(decodeError(tags)?.message == "nesting deeper than 64 levels")
        let maps: [UInt8] = Array(repeating: [0xa1, 0x00], count: 65).flatMap { $0 } + [0x00]
        #expect(decodeError(maps) == Failure(offset: 128, message: "nesting deeper than 64 levels"))
        #expect(decodeError(hex("818100"), limits: CBORLimits(maxDepth: 1)) == Failure(offset: 1, message: "nesting deeper than 1 levels"))
        // 100,000 levels: fails fast at the limit; with no limit, reading still does not recurse.
        let huge = Array(repeating: UInt8(0x81), count: 100_000)
        #expect(decodeError(huge)?.offset == 64)
        #expect(decodeError(huge, limits: CBORLimits(maxDepth: .max)) == Failure(offset: 99_999, message: "declared count 1 exceeds the 0 bytes that remain"))
    }

    @Test("maxItems bounds the number of items")
    func itemLimit() throws {
        #expect(decodeError(hex("83010203"), limits: CBORLimits(maxItems: 3)) == Failure(offset: 3, message: "more than 3 items"))
        #expect(try CBORDecoder.decodeItem(hex("83010203"), limits: CBORLimits(maxItems: 4)).array?.count == 3)
        #expect(throws: CBORDecodeError(offset: 2, problem: .tooManyItems(limit: 2))) {
            try CBORDecoder.decodeSequence(hex("010203"), limits: CBORLimits(maxItems: 2))
        }
    }

    @Test("Invalid UTF-8 in text strings is rejected at the string's offset")
    func invalidUTF8() {
        for bad in ["62c328", "62c080", "63eda080", "61ff", "64f4908080", "61 80"] {
            #expect(decodeError(hex(bad)) == Failure(offset: 0, message: "text string is not valid UTF-8"), "\(bad)")
        }
        #expect(decodeError(hex("82 01 62c328")) == Failure(offset: 2, message: "text string is not valid UTF-8"))
        #expect(decodeError(hex("63efbfbd")) == nil)   // a real U+FFFD is fine
    }

    @Test("Only an input that ends inside an item, or declares more than remains, is said to end inside one")
    func inputEndsInsideItem() {
        let cut: [String] = ["82 01", "a2 01 83 44010203", "a2 01 83 4401", "bb ffffffffffffffff 0102", "5b 1000000000000000", "f8", "19 03"]
        for input in cut {
            #expect(decodeProblem(hex(input))?.inputEndsInsideItem == true, "\(input)")
        }
        let whole: [String] = ["9f01ff", "ff", "1c", "f818", "62c328"]
        for input in whole {
            let problem = decodeProblem(hex(input))
            #expect(problem != nil && problem?.inputEndsInsideItem == false, "\(input): \(String(describing: problem))")
        }
        #expect(decodeProblem(Array(repeating: 0x81, count: 100) + [0x00])?.inputEndsInsideItem == false)
        #expect(decodeProblem(hex("83 01 02 03"), limits: CBORLimits(maxDepth: 8, maxItems: 2))?.inputEndsInsideItem == false)
    }

    @Test("Indefinite lengths and break codes are rejected")
    func indefiniteAndBreak() {
        for (input, offset) in [("9f01ff", 0), ("5f4101ff", 0), ("7f6161ff", 0), ("bf0102ff", 0), ("82 01 9f ff", 2), ("ff", 0), ("82 01 ff", 2), ("a1 ff 00", 1)] {
            let error = decodeError(hex(input))
            #expect(error?.offset == offset, "\(input)")
            #expect(error?.message.hasPrefix("indefinite-length items are not allowed") == true, "\(input)")
        }
    }

    @Test("Reserved additional information and bad simple values are malformed")
    func reservedHeads() {
        for byte: UInt8 in [0x1c, 0x1d, 0x1e, 0x1f, 0x3c, 0x3f, 0x5c, 0x7d, 0x9e, 0xbc, 0xdc, 0xdf, 0xfc, 0xfd, 0xfe] {
            let error = decodeError([byte, 0, 0, 0, 0, 0, 0, 0, 0])
            #expect(error?.offset == 0, "\(byte)")
            #expect(error?.message.hasPrefix("malformed item") == true, "\(byte)")
        }
        #expect(decodeError(hex("82 00 1c"))?.offset == 2)
        #expect(decodeError(hex("f818")) == Failure(offset: 0, message: "simple value 24 must use the one-byte form"))
        #expect(decodeError(hex("f8")) == Failure(offset: 0, message: "unexpected end of input"))
        #expect(decodeError(hex("f820")) == nil)
        #expect(decodeError(hex("d4 00")) == nil)   // tag 20: well-formed, though libcbor 0.8 rejects it
    }

    @Test("Flipping any single bit never crashes the decoder")
    func bitFlips() throws {
        let sample = hex("a3 01 83 4401020304 6449455446 24 02 c7 a0 1903e8 82 f93e00 fb3ff199999999999a")
        #expect(try CBORDecoder.decodeItem(sample).end == sample.count)
        var outcomes = (decoded: 0, failed: 0)
        for index in sample.indices {
            for bit in 0..<8 {
                var mutated = sample
                mutated[index] ^= 1 << bit
                do {
                    let item = try CBORDecoder.decodeItem(mutated)
                    #expect(item.offset == 0 && item.end <= mutated.count)
                    outcomes.decoded += 1
                } catch {
                    #expect(error.offset >= 0 && error.offset <= mutated.count)
                    outcomes.failed += 1
                }
                _ = try? CBORDecoder.decodeSequence(mutated)
            }
        }
        #expect(outcomes.decoded + outcomes.failed == sample.count * 8)
        #expect(outcomes.decoded > 0 && outcomes.failed > 0)
    }

    @Test("Random inputs never crash and decoded items re-encode and re-decode")
    func randomInputs() {
        var state: UInt64 = 0x9e3779b97f4a7c15
        func next() -> UInt64 {   // splitmix64, deterministic
            state &+= 0x9e3779b97f4a7c15
            var z = state
            z = (z ^ (z >> 30)) &* 0xbf58476d1ce4e5b9
            z = (z ^ (z >> 27)) &* 0x94d049bb133111eb
            return z ^ (z >> 31)
        }
        for _ in 0..<20_000 {
            let input = (0..<Int(next() % 24)).map { _ in UInt8(truncatingIfNeeded: next()) }
            guard let item = try? CBORDecoder.decodeItem(input) else { continue }
            #expect(item.end <= input.count)
            let reencoded = encode { $0.item(item) }
            #expect((try? CBORDecoder.decodeItem(reencoded).end) == reencoded.count, "\(hexString(input))")
        }
    }

    @Test("An encoder writing into given memory writes what one appending writes, and nothing past its end")
    func encoderIntoMemory() {
        func encode(_ e: inout CBOREncoder) {
            e.arrayHeader(4)
            e.text("héllo 日本 😀")
            e.unsigned(70_000)
            e.bytes([1, 2, 3])
            e.double(1.5)
            e.raw([0xf6])
        }
        var appending = CBOREncoder()
        encode(&appending)
        let expected = appending.bytes
        for room in [expected.count, expected.count + 5, expected.count - 1, 3, 0] {
            var memory = [UInt8](repeating: 0xAA, count: room + 4)
            memory.withUnsafeMutableBufferPointer { all in
                var e = CBOREncoder(writingInto: UnsafeMutableBufferPointer(rebasing: all[2 ..< 2 + room]))
                encode(&e)
                #expect(e.bytes.isEmpty)
                #expect(e.overflowed == (room < expected.count), "room \(room)")
                if room >= expected.count { #expect(e.written == expected.count) } else { #expect(e.written <= room) }
            }
            // Nothing before or after the memory given was written; what fit is the encoding's start.
            #expect(memory.prefix(2).allSatisfy { $0 == 0xAA } && memory.suffix(2).allSatisfy { $0 == 0xAA })
            if room >= expected.count {
                #expect(Array(memory[2 ..< 2 + expected.count]) == expected)
                #expect(memory[(2 + expected.count) ..< (2 + room)].allSatisfy { $0 == 0xAA })
            }
        }
    }

    @Test("Errors describe themselves with their offset")
    func errorDescription() {
        #expect(CBORDecodeError(offset: 7, problem: .endOfInput).description == "CBOR error at byte 7: unexpected end of input")
    }
}
