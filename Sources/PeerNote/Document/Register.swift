/// A multi-value register: the values written that no later write overwrote.
///
/// Each write names the values it overwrites (`preds`); values written
/// concurrently survive together, which is a conflict. Readers see one
/// deterministic winner, the value with the highest (lamport, replica id),
/// identical on every copy that has the same writes.
///
/// An entry holds no replica id: its id's agent names it in the document's table of replicas
/// (`OpLog.replicas`), which every write and every sort is given.
///
/// Invariant: the winner is `head`, the other live values are `others.rest`, in no particular
/// order (readers sort); `others` is nil while there are none (`head` nil or the one value).
/// The winner is held inline because nearly every register holds one value (a note's title
/// and position): a register of one value allocates nothing. A register holding many live
/// values (`indexThreshold` or more) also keeps each entry's place by id, so that a write
/// naming predecessors finds each in constant time.
///
/// - Complexity: a write is O(p) for p predecessors, plus O(k) for k live values only when it
///   removes the winner without beating it (which a write that has seen the winner never does:
///   its Lamport timestamp is higher).
struct MVRegister<Value: Sendable & Equatable>: Sendable {
    struct Entry: Sendable {
        var id: LocalID
        var lamport: UInt64
        var value: Value
    }
    /// The winner (nil: no live value).
    private var head: Entry?
    /// The live values other than the winner, and their index; nil when there are none. Boxed,
    /// so that the registers every note holds four of take one word for what is rarely there.
    private var others: Others?
    private static var indexThreshold: Int { 16 }

    /// The live values other than the winner, and, once the register holds `indexThreshold`
    /// values or more, each entry's place by id (0 the winner, k ≥ 1 `rest[k - 1]`; nil below:
    /// a scan of a few entries is cheaper than a dictionary). Shared between copies of a register
    /// until one of them writes (`mutableOthers`). Sendable because a box is written only by the
    /// register holding the only reference to it: a box that copies (and so threads) share is
    /// never written.
    private final class Others: @unchecked Sendable {
        var rest: [Entry]
        var places: [LocalID: Int]?

        init(rest: [Entry], places: [LocalID: Int]?) {
            self.rest = rest
            self.places = places
        }
    }

    /// `others`, made if absent and copied if shared, to be written.
    private mutating func mutableOthers() -> Others {
        // nil is never uniquely referenced: a register without other values gets a box too.
        if !isKnownUniquelyReferenced(&others) {
            others = Others(rest: others?.rest ?? [], places: others?.places)
        }
        guard let box = others else { preconditionFailure("a register's box was just made") }
        return box
    }

    /// An empty register.
    init() {}

    /// A register holding `entry` alone: what a write of it to an empty register leaves.
    init(only entry: Entry) { head = entry }

    private var rest: [Entry] { others?.rest ?? [] }

    /// The box of other values, to tell whether a write copied it (tests: a box this register
    /// alone holds is written in place).
    var othersBox: ObjectIdentifier? { others.map { ObjectIdentifier($0) } }

    /// The live values, winner first.
    var entries: [Entry] {
        guard let head else { return [] }
        return [head] + rest
    }

    /// How many live values the register holds.
    @inline(__always) private var count: Int { head == nil ? 0 : 1 + (others?.rest.count ?? 0) }

    /// Entry `k` (0 the winner); `k` is below `count`.
    @inline(__always) private func entry(_ k: Int) -> Entry {
        guard k > 0 else {
            guard let head else { preconditionFailure("entry 0 of an empty register") }
            return head
        }
        guard let others else { preconditionFailure("entry \(k) of a register of one value") }
        return others.rest[k - 1]
    }

    /// Writes `value` as op `id`, overwriting the live values whose ids `preds` names.
    /// `removed` is called with each value overwritten. `replicas` is the document's table of
    /// replicas, which every id's agent indexes.
    mutating func write(id: LocalID, lamport: UInt64, replicas: [ReplicaID], value: Value, preds: [LocalID],
                        removed: (Value) -> Void = { _ in }) {
        @inline(__always) func key(_ e: Entry) -> (UInt64, ReplicaID) { (e.lamport, replicas[Int(e.id.agent)]) }
        let replica = replicas[Int(id.agent)]
        var beaten: (lamport: UInt64, replica: ReplicaID)?
        if !preds.isEmpty && head != nil {
            for p in preds {
                guard let k = place(of: p) else { continue }
                let gone = entry(k)
                // The first entry removed from the front is the winner, which every remaining
                // entry is below; later ones at the front are whatever took its place.
                if k == 0 && beaten == nil { beaten = key(gone) }
                removed(gone.value)
                remove(at: k)
            }
        }
        let e = Entry(id: id, lamport: lamport, value: value)
        if let old = beaten, head != nil {
            if (lamport, replica) > old {
                // Above the old winner, so above every remaining entry: it goes first.
                append(e)
                swapEntries(0, count - 1)
                return
            }
            var best = 0
            for k in 1 ..< count where key(entry(k)) > key(entry(best)) { best = k }
            swapEntries(0, best)
        }
        // Keep the winner first: O(1) per write; the others need no order (readers sort).
        append(e)
        if let w = head, count > 1, !(key(w) > (lamport, replica)) {
            swapEntries(0, count - 1)
        }
    }

    private func place(of id: LocalID) -> Int? {
        guard let head else { return nil }
        if let others {
            if let places = others.places { return places[id] }
            if head.id == id { return 0 }
            return others.rest.firstIndex { $0.id == id }.map { $0 + 1 }
        }
        return head.id == id ? 0 : nil
    }

    private mutating func append(_ e: Entry) {
        guard head != nil else {
            head = e
            return
        }
        let box = mutableOthers()
        box.rest.append(e)
        let n = box.rest.count + 1
        if box.places != nil {
            box.places?[e.id] = n - 1
        } else if n >= Self.indexThreshold {
            var index: [LocalID: Int] = [:]
            index.reserveCapacity(n * 2)
            for k in 0 ..< n { index[entry(k).id] = k }
            box.places = index
        }
    }

    /// Removes entry `k`, putting the last entry in its place.
    private mutating func remove(at k: Int) {
        let last = count - 1
        if k != last { swapEntries(k, last) }
        if last == 0 {
            // The only value: no others, so no index either.
            head = nil
            others = nil
            return
        }
        let box = mutableOthers()
        let gone = box.rest.removeLast()
        box.places?[gone.id] = nil
        if box.rest.isEmpty { others = nil }
    }

    private mutating func swapEntries(_ a: Int, _ b: Int) {
        guard a != b else { return }
        let box = mutableOthers()
        if a == 0 || b == 0 {
            let k = max(a, b) - 1
            guard let winner = head else { preconditionFailure("a swap in an empty register") }
            head = box.rest[k]
            box.rest[k] = winner
        } else {
            box.rest.swapAt(a - 1, b - 1)
        }
        if box.places != nil {
            let (idA, idB) = (entry(a).id, entry(b).id)
            box.places?[idA] = a
            box.places?[idB] = b
        }
    }

    /// The winning entry (highest lamport, then replica id).
    var winner: Entry? { head }
    var value: Value? { head?.value }
    var ids: [LocalID] {
        guard let head else { return [] }
        return [head.id] + rest.map(\.id)
    }
    /// Concurrent values other than the winner's exist.
    var isConflicted: Bool { others != nil }
    /// All live entries, winner first, then by descending (lamport, replica id): a deterministic
    /// order. `replicas` is the document's table of replicas.
    func sortedEntries(replicas: [ReplicaID]) -> [Entry] {
        entries.sorted { ($0.lamport, replicas[Int($0.id.agent)]) > ($1.lamport, replicas[Int($1.id.agent)]) }
    }
}
