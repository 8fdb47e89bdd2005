// libFuzzer target: the input is two files. Its first two bytes (big-endian) say where the
// first ends (clamped to the input; a seed is two fixtures joined with `fuzz-seeds.py`); both
// halves are loaded and, when they share history, merged both ways. Both merges must give the
// same notebook, merging again must bring nothing, and the result must survive a save/load
// round trip.
import FuzzSupport
import PeerNote

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = fuzzBytes(data, size)
    guard bytes.count >= 2 else { return 0 }
    let split = min(bytes.count - 2, Int(bytes[0]) << 8 | Int(bytes[1]))
    let first = Array(bytes[2 ..< 2 + split]), second = Array(bytes[(2 + split)...])
    guard let a = try? Document.load(first), let b = try? Document.load(second) else { return 0 }
    let relation = a.relation(to: b)
    let ab = a.fork(), ba = b.fork()
    do {
        try ab.merge(b)
    } catch {
        if case .unrelated = error {
            FuzzCheck.require(relation != .shared, "merge refused copies that relation(to:) calls shared")
            let before = a.notebook
            FuzzCheck.require(ab.notebook == before, "a refused merge changed the document")
        }
        return 0
    }
    FuzzCheck.require(relation == .shared, "merge accepted copies that relation(to:) calls \(relation)")
    do { try ba.merge(a) } catch { FuzzCheck.fail("merge succeeds one way but not the other: \(error)") }
    FuzzCheck.require(ab.notebook == ba.notebook, "merging in the two orders gives different notebooks")
    FuzzCheck.require(ab.changeCount == ba.changeCount && ab.heads == ba.heads, "merging in the two orders gives different histories")
    do {
        let again = try ab.merge(b)
        FuzzCheck.require(again.isUpToDate, "merging the same copy twice brought changes the second time")
    } catch { FuzzCheck.fail("merging the same copy twice failed: \(error)") }
    FuzzCheck.roundTrip(ab, loadedFrom: nil, "merged document")
    return 0
}
