// libFuzzer target: the input steers the making of an arbitrary legal history
// (`ArbitraryHistory.simulate`: several replicas making changes whose inserts and moves have any
// two elements they hold as origins, and merging each other's copies now and then). Two of the
// copies, saved and loaded again, are merged both ways: both merges must give the same notebook
// and the same compact file, and that file must load to the same notebook and compact bytes, as
// format version 3 too.
@_spi(Diagnostics) import PeerNote
import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = fuzzBytes(data, size)
    guard !bytes.isEmpty else { return 0 }
    var rng = ByteStreamGenerator(Array(bytes.dropFirst()))
    let copies: [Document]
    do { copies = try ArbitraryHistory.simulate(replicas: 3, steps: 8 + Int(bytes[0] % 48), using: &rng) } catch {
        FuzzCheck.fail("a legal history could not be made: \(error)")
    }
    let files = copies.prefix(2).map { $0.save(.compact) }
    let a: Document, b: Document
    do { (a, b) = (try Document.load(files[0]), try Document.load(files[1])) } catch {
        FuzzCheck.fail("a copy of a legal history does not load: \(error)")
    }
    let ab: Document, ba: Document
    do { (ab, ba) = (try a.merged(with: b).document, try b.merged(with: a).document) } catch {
        FuzzCheck.fail("copies of one history do not merge: \(error)")
    }
    FuzzCheck.require(ab.notebook == ba.notebook, "merging in the two orders gives different notebooks")
    let compact = ab.save(.compact)
    FuzzCheck.require(compact == ba.save(.compact), "merging in the two orders gives different compact files")
    FuzzCheck.roundTrip(ab, loadedFrom: nil, "merged document")
    let v3 = ab.save(.compact, writeStructures: true)
    do {
        let again = try Document.load(v3)
        FuzzCheck.require(again.notebook == ab.notebook, "the version 3 save reads differently")
        FuzzCheck.require(again.save(.compact) == compact, "the version 3 save does not convert back to the same bytes")
    } catch {
        FuzzCheck.fail("the version 3 save of the merge does not load: \(error)")
    }
    return 0
}
