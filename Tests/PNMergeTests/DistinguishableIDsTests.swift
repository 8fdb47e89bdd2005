import Testing
import PeerNote
@testable import PNMergeCommands

@Suite("Change ids side by side")
struct DistinguishableIDsTests {
    @Test("Two first changes whose replica ids share their first 8 hex digits are printed with enough digits to differ")
    func sharedPrefix() {
        let a = ChangeID(replica: ReplicaID(high: 0xabcd_ef01_2345_0001, low: 7), seq: 1)
        let b = ChangeID(replica: ReplicaID(high: 0xabcd_ef01_2345_0002, low: 7), seq: 1)
        #expect(a.description == b.description, "the short form alone cannot tell them apart")
        let (x, y) = Inputs.distinguishable(a, b)
        #expect(x == "1@abcdef01234500" + "01" && y == "1@abcdef01234500" + "02")
        // Ids that differ in their first 8 digits, or in their seq, keep the short form.
        let c = ChangeID(replica: ReplicaID(high: 0x1234_5678_0000_0000, low: 0), seq: 1)
        #expect(Inputs.distinguishable(a, c) == (a.description, c.description))
        let d = ChangeID(replica: b.replica, seq: 2)
        #expect(Inputs.distinguishable(a, d) == (a.description, d.description))
    }
}
