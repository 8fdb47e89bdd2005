// libFuzzer target: arbitrary bytes → Document.salvage, which the tools also run on the error
// path of every damaged notebook (to say what `pnmerge salvage` would recover). It must throw
// PeerNoteError or return a result whose bytes load to the recovered notebook; a file that loads
// must come back intact, byte for byte. Never a crash, a hang or a huge allocation.
import FuzzSupport
import PeerNote

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = fuzzBytes(data, size)
    let loaded = try? Document.load(bytes)
    guard let result = try? Document.salvage(bytes) else {
        FuzzCheck.require(loaded == nil, "a file that loads could not be salvaged")
        return 0
    }
    if let loaded {
        FuzzCheck.require(result.isIntact, "a file that loads was not found intact")
        FuzzCheck.require(result.bytes == bytes, "an intact file did not come back unchanged")
        FuzzCheck.require(result.document.notebook == loaded.notebook, "salvage of an intact file shows another notebook")
    } else {
        FuzzCheck.require(!result.isIntact, "a file that does not load was found intact")
    }
    guard let reloaded = try? Document.load(result.bytes) else {
        FuzzCheck.require(false, "the salvaged bytes do not load")
        return 0
    }
    FuzzCheck.require(reloaded.notebook == result.document.notebook, "the salvaged bytes show another notebook than the result")
    return 0
}
