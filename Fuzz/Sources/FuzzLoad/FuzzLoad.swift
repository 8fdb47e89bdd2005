// libFuzzer target: arbitrary bytes → Document.load (and Document.readNotebook, which must
// agree with it). A file that loads must survive a
// save/load round trip unchanged (see FuzzCheck.roundTrip); a file that does not load must
// fail with PeerNoteError (a thrown error, never a crash, hang or huge allocation).
import FuzzSupport
import PeerNote

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = fuzzBytes(data, size)
    let read = try? Document.readNotebook(bytes)
    guard let document = try? Document.load(bytes) else { return 0 }
    // What a file's state section shows is what loading it in full shows.
    FuzzCheck.require(read == document.notebook, "readNotebook differs from load(bytes).notebook")
    _ = document.notebook
    _ = document.history
    FuzzCheck.roundTrip(document, loadedFrom: bytes, "loaded document")
    return 0
}
