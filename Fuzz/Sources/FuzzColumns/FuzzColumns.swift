// libFuzzer target for the column decoders and the replay (verification) behind them. The input
// describes a base block whose columns are stored uncompressed, so mutations hit the columns
// directly; the target builds the payload map around them, "compresses" them with stored DEFLATE
// blocks and adds a correct CRC. Input layout (every read is total; see FuzzInput):
//
//   u8 replica count n (mod 9), n × 16-byte replica ids, u8 genesis replica index,
//   uleb changeCount, uleb opUnitCount, u8 string count k, k × (u8 length, UTF-8 bytes),
//   then the inflated column set to the end.
//
// Seeds are the fixtures' first blocks in this layout (`fuzz-seeds.py`).
import FuzzSupport
import PeerNote

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(fuzzBytes(data, size))
    let n = Int(input.byte() % 9)
    var replicas: [[UInt8]] = []
    for _ in 0 ..< n {
        let id = input.take(16)
        replicas.append(id + [UInt8](repeating: 0, count: 16 - id.count))
    }
    let genesisIndex = Int(input.byte())
    let changeCount = input.uleb(), unitCount = input.uleb()
    let k = Int(input.byte())
    var strings: [String] = []
    for _ in 0 ..< k { strings.append(String(decoding: input.take(Int(input.byte())), as: UTF8.self)) }
    let columns = input.remaining

    var w = EnvelopeWriter()
    w.map(9)
    w.unsigned(0); w.unsigned(0)                                     // kind: base
    w.unsigned(1); w.tag(37); w.byteString([UInt8](repeating: 0x5A, count: 16))
    w.unsigned(2); w.array(2)                                        // genesis
    w.byteString(replicas.isEmpty ? [UInt8](repeating: 0, count: 16) : replicas[genesisIndex % replicas.count]); w.unsigned(1)
    w.unsigned(3); w.array(replicas.count); for r in replicas { w.byteString(r) }
    w.unsigned(4); w.array(strings.count); for s in strings { w.text(s) }
    w.unsigned(5); w.unsigned(changeCount)
    w.unsigned(6); w.unsigned(unitCount)
    w.unsigned(7); w.byteString(StoredDeflate.compress(columns))
    w.unsigned(8); w.unsigned(UInt64(columns.count))
    let file = EnvelopeWriter.block(payload: w.bytes)
    guard let document = try? Document.load(file) else { return 0 }
    _ = document.notebook
    _ = document.history
    FuzzCheck.roundTrip(document, loadedFrom: file, "document from fuzzed columns")
    return 0
}
