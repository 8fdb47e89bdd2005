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
    private(set) var entries: [Entry] = []

    mutating func write(id: LocalID, lamport: UInt64, replica: ReplicaID, value: Value, preds: [LocalID]) {
        if !preds.isEmpty { entries.removeAll { e in preds.contains(e.id) } }
        entries.append(Entry(id: id, lamport: lamport, replica: replica, value: value))
        entries.sort { ($0.lamport, $0.replica) > ($1.lamport, $1.replica) }
    }

    /// The winning entry (highest lamport, then replica id).
    var winner: Entry? { entries.first }
    var value: Value? { entries.first?.value }
    var ids: [LocalID] { entries.map(\.id) }
    /// Concurrent values other than the winner's exist.
    var isConflicted: Bool { entries.count > 1 }
}
