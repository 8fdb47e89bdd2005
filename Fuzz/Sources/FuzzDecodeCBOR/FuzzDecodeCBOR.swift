// libFuzzer target for the CBOR decoder. The decoder is internal to PeerNote, so it is reached
// through the public API: the input is used as a block *payload* and wrapped in a correct
// envelope (magic, version 1, CRC-32), so every input gets past the checksum and is parsed by
// the CBOR decoder, then the payload map, the columns and the replay. (FuzzLoad alone rarely
// gets a mutated payload past the CRC.) Seeds: the payloads of the fixtures (`fuzz-seeds.py`).
import FuzzSupport
import PeerNote

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let file = EnvelopeWriter.block(payload: fuzzBytes(data, size))
    guard let document = try? Document.load(file) else { return 0 }
    _ = document.notebook
    FuzzCheck.roundTrip(document, loadedFrom: file, "document from a fuzzed payload")
    return 0
}
