/// A multi-value register: the values written that no later write overwrote.
///
/// Each write names the values it overwrites (`preds`); values written
/// concurrently survive together, which is a conflict. Readers see one
/// deterministic winner, the value with the highest (lamport, replica id),
/// identical on every copy that has the same writes.
///
/// Invariant: `entries[0]` is the winner; the other entries are in no particular order
/// (readers sort). A register holding many live values (`indexThreshold` or more) also keeps
/// each entry's place by id, so that a write naming predecessors finds each in constant time.
///
/// - Complexity: a write is O(p) for p predecessors, plus O(k) for k live values only when it
///   removes the winner without beating it (which a write that has seen the winner never does:
///   its Lamport timestamp is higher).
struct MVRegister<Value: Sendable & Equatable>: Sendable {
    struct Entry: Sendable {
        var id: LocalID
        var lamport: UInt64
        var replica: ReplicaID
        var value: Value
    }
    /// The live values, winner first (kept so by `write`).
    private(set) var entries: [Entry] = []
    /// Each entry's place in `entries` by id, kept while the register holds `indexThreshold`
    /// values or more (nil below: a scan of a few entries is cheaper than a dictionary).
    private var places: [LocalID: Int]?
    private static var indexThreshold: Int { 16 }

    /// Writes `value` as op `id`, overwriting the live values whose ids `preds` names.
    /// `removed` is called with each value overwritten.
    mutating func write(id: LocalID, lamport: UInt64, replica: ReplicaID, value: Value, preds: [LocalID],
                        removed: (Value) -> Void = { _ in }) {
        var beaten: (lamport: UInt64, replica: ReplicaID)?
        if !preds.isEmpty && !entries.isEmpty {
            for p in preds {
                guard let k = place(of: p) else { continue }
                // The first entry removed from the front is the winner, which every remaining
                // entry is below; later ones at the front are whatever took its place.
                if k == 0 && beaten == nil { beaten = (entries[0].lamport, entries[0].replica) }
                removed(entries[k].value)
                remove(at: k)
            }
        }
        let e = Entry(id: id, lamport: lamport, replica: replica, value: value)
        if let old = beaten, !entries.isEmpty {
            if (lamport, replica) > old {
                // Above the old winner, so above every remaining entry: it goes first.
                append(e)
                swapEntries(0, entries.count - 1)
                return
            }
            if let best = entries.indices.max(by: { (entries[$0].lamport, entries[$0].replica) < (entries[$1].lamport, entries[$1].replica) }) {
                swapEntries(0, best)
            }
        }
        // Keep the winner first: O(1) per write; the others need no order (readers sort).
        append(e)
        if let w = entries.first, entries.count > 1, !((w.lamport, w.replica) > (lamport, replica)) {
            swapEntries(0, entries.count - 1)
        }
    }

    private func place(of id: LocalID) -> Int? {
        if let places { return places[id] }
        return entries.firstIndex { $0.id == id }
    }

    private mutating func append(_ e: Entry) {
        entries.append(e)
        if places != nil {
            places?[e.id] = entries.count - 1
        } else if entries.count >= Self.indexThreshold {
            var index: [LocalID: Int] = [:]
            index.reserveCapacity(entries.count * 2)
            for (k, x) in entries.enumerated() { index[x.id] = k }
            places = index
        }
    }

    /// Removes entry `k`, putting the last entry in its place.
    private mutating func remove(at k: Int) {
        let last = entries.count - 1
        if k != last { swapEntries(k, last) }
        let gone = entries.removeLast()
        places?[gone.id] = nil
    }

    private mutating func swapEntries(_ a: Int, _ b: Int) {
        guard a != b else { return }
        entries.swapAt(a, b)
        places?[entries[a].id] = a
        places?[entries[b].id] = b
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
