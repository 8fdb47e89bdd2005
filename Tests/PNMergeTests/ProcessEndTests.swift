import Foundation
@testable import PNMergeCommands
import PeerNote
import PeerNoteCLISupport
import Testing

/// `ProcessEnd`: a run that ends the process keeps the documents handed over alive (they are
/// never freed); any other run, such as these tests' in-process runs of the tools, frees them
/// as usual.
@Suite("Process end")
struct ProcessEndTests {
    final class Marker {}

    @Test("A run that does not end the process keeps nothing: what it hands over is freed")
    func keepsNothingInProcess() {
        weak var gone: Marker?
        ProcessEnd.run(endingProcess: false) {
            let marker = Marker()
            gone = marker
            ProcessEnd.keep(marker)
            #expect(!ProcessEnd.isEndingProcess)
        }
        #expect(gone == nil)
        // Outside any run, as in the tools' in-process tests.
        weak var alsoGone: Marker?
        do {
            let marker = Marker()
            alsoGone = marker
            ProcessEnd.keep(marker)
        }
        #expect(alsoGone == nil)
    }

    @Test("A run that ends the process keeps what it hands over alive after the run")
    func keepsUntilExit() {
        weak var kept: Marker?
        ProcessEnd.run(endingProcess: true) {
            let marker = Marker()
            kept = marker
            ProcessEnd.keep(marker)
            #expect(ProcessEnd.isEndingProcess)
        }
        #expect(kept != nil)
    }
}
