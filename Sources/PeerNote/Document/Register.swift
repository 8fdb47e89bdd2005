/// A multi-value register: the values written that no later write overwrote.
///
/// Each write names the values it overwrites (`preds`); values written
/// concurrently survive together, which is a conflict. Readers see one
/// deterministic winner, the value with the highest (lamport, replica id),
/// identical on every copy that has the same writes.
struct MVRegister<Value: Sendable & Equatable>: Sendable {
    struct Entry: Sendable {
        var id: LocalID
        var lamport: UInt64
        var replica: ReplicaID
        var value: Value
    }
    /// The live values, winner first (kept so by `write`).
    private(set) var entries: [Entry] = []

    mutating func write(id: LocalID, lamport: UInt64, replica: ReplicaID, value: Value, preds: [LocalID]) {
        if !preds.isEmpty && !entries.isEmpty {
            let before = entries.count
            if preds.count == 1 { entries.removeAll { $0.id == preds[0] } } else {
                let overwritten = Set(preds)
                entries.removeAll { overwritten.contains($0.id) }
            }
            // The winner may have gone: bring the best remaining entry to the front.
            if entries.count != before, entries.count > 1,
               let best = entries.indices.max(by: { (entries[$0].lamport, entries[$0].replica) < (entries[$1].lamport, entries[$1].replica) }) {
                entries.swapAt(0, best)
            }
        }
        // Keep the winner first: O(1) per write; the others need no order (readers sort).
        let e = Entry(id: id, lamport: lamport, replica: replica, value: value)
        if let w = entries.first, (w.lamport, w.replica) > (lamport, replica) {
            entries.append(e)
        } else {
            entries.append(e)
            entries.swapAt(0, entries.count - 1)
        }
    }

    /// The winning entry (highest lamport, then replica id).
    var winner: Entry? { entries.first }
    var value: Value? { entries.first?.value }
    var ids: [LocalID] { entries.map(\.id) }
    /// Concurrent values other than the winner's exist.
    var isConflicted: Bool { entries.count > 1 }
    /// All live entries, winner first, then by descending (lamport, replica): a deterministic order.
    var sortedEntries: [Entry] { entries.sorted { ($0.lamport, $0.replica) > ($1.lamport, $1.replica) } }
}
