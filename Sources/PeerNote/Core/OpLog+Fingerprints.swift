#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension OpLog {
    // MARK: Fingerprints

    /// A fingerprint of change `i`'s content (id, metadata, ops, in replica-id terms) chained
    /// over its dependencies' fingerprints, like a git commit id: two logs that agree on one
    /// change's fingerprint agree on its whole causal past. Seeded per process, so only
    /// compared within one process.
    mutating func fingerprint(ofChange i: Int) -> Int {
        assert(!isAdoptingOps, "ops are read whole only once adopted")
        precondition(changesWithoutContent == 0, "a log whose first changes' content was let go has no fingerprints")
        guard fingerprints.count <= i else { return fingerprints[i] }
        // Changes are fingerprinted in order, walking the ops once (no search per change).
        // Room grows geometrically: an exact reserve on every call would copy the whole array
        // each time a few new changes are checked (a document merged after every few edits).
        if fingerprints.capacity < i + 1 { fingerprints.reserveCapacity(Swift.max(i + 1, 2 * fingerprints.capacity)) }
        contentHashes.update(replicas: replicas, strings: strings, extras: extras)
        let hashes = contentHashes
        var opCursor = opIndex(containingLV: changes[fingerprints.count].lvStart)
        let text = textView
        while fingerprints.count <= i {
            fingerprints.append(computeFingerprint(fingerprints.count, opCursor: &opCursor, hashes, text: text))
        }
        return fingerprints[i]
    }

    /// Whether change `c` continues `d`, its only dependency: the same replica's previous change,
    /// with the same author, message and time, and neither with extra fields. (Strings are
    /// interned, so equal indices are equal strings; every extra field has its own index.)
    @inline(__always)
    private func continues(_ c: ChangeRecord, _ d: ChangeRecord) -> Bool {
        c.agent == d.agent && Int(c.seq) == Int(d.seq) + 1 && c.author == d.author && c.message == d.message && c.time == d.time
            && c.extra == 0 && d.extra == 0
    }

    /// The fingerprint of change `i`. `opCursor` is the index of the op holding change `i`'s
    /// first unit (or an earlier op); it is left at the op holding the next change's first unit.
    /// `hashes` is `contentHashes` brought up to date: replica ids, strings and extra fields are
    /// hashed as this process's hashes of them (eight bytes each, not their contents). `text` is
    /// `textView`, made once for every change fingerprinted together.
    private func computeFingerprint(_ i: Int, opCursor: inout Int, _ hashes: ContentHashes, text: LogTextView) -> Int {
        var h = Hasher()
        let c = changes[i]
        let deps = self.deps(of: i)
        if deps.count == 1, let d = deps.first, continues(c, changes[d]) {
            // Typing on: the change's replica, seq, op counter, author, message, extra fields and
            // time follow from its one dependency's, which its fingerprint stands for. Whether a
            // change continues is decided on content alone, so equal changes hash alike in any log.
            var head = (UInt64(1), fingerprints[d], c.length)
            withUnsafeBytes(of: &head) { h.combine(bytes: $0) }
        } else {
            // The change's fixed fields in one call (Hasher is SipHash: every call has a cost).
            var head = (UInt64(0), hashes.replicas[Int(c.agent)], UInt64(c.seq) << 32 | UInt64(c.counterStart), c.length, c.time,
                        hashes.strings[Int(c.author)], hashes.strings[Int(c.message)], hashes.extras[Int(c.extra)])
            withUnsafeBytes(of: &head) { h.combine(bytes: $0) }
            h.combine(deps.count)
            if deps.count == 1, let d = deps.first {
                h.combine(fingerprints[d])
            } else {
                for f in deps.map({ fingerprints[$0] }).sorted() { h.combine(f) }
            }
        }
        // `h` is passed inout (not captured by a nested function, which would box it and check
        // exclusive access on every use).
        let replicaHashes = hashes.replicas
        func id(_ x: LocalID, _ h: inout Hasher) {
            if x.isNone { h.combine(0 as UInt8) } else { h.combine(replicaHashes[Int(x.agent)]); h.combine(x.counter) }
        }
        func ids(_ xs: [LocalID], _ h: inout Hasher) { for x in xs { id(x, &h) } }
        while opCursor < ops.count && ops[opCursor].lv + ops[opCursor].length <= c.lvStart { opCursor += 1 }
        var k = opCursor
        while k < ops.count && ops[k].lv < c.lvEnd {
            var op = ops[k]
            if op.lv < c.lvStart || op.lv + op.length > c.lvEnd {
                op = slice(op, from: max(c.lvStart, op.lv), to: min(c.lvEnd, op.lv + op.length), change: i)
            }
            k += 1
            h.combine(op.length)
            h.combine(op.body.kind)
            switch op.body {
            case .setNotebookTitle(let v, let p): h.combine(ExactString(v)); ids(p, &h)
            case .createNote(let l, let r, let c): id(l, &h); id(r, &h); h.combine(c)
            case .setNoteTitle(let n, let v, let p): id(n, &h); h.combine(ExactString(v)); ids(p, &h)
            case .insertText(let n, let l, let r, let start):
                id(n, &h); id(l, &h); id(r, &h)
                text.hash(start ..< start + op.length, into: &h)
            case .deleteText(let n, let t, let rev): id(n, &h); id(t, &h); h.combine(rev)
            case .addTag(let n, let t): id(n, &h); h.combine(ExactString(t))
            case .removeTag(let n, let t, let rm): id(n, &h); h.combine(ExactString(t)); ids(rm, &h)
            case .setPriority(let n, let p, let ps): id(n, &h); h.combine(p); ids(ps, &h)
            case .deleteNote(let n, let p), .restoreNote(let n, let p): id(n, &h); ids(p, &h)
            case .moveNote(let n, let l, let r, let p): id(n, &h); id(l, &h); id(r, &h); ids(p, &h)
            case .unknown(let kind, let payload): h.combine(kind); h.combine(payload)
            }
        }
        return h.finalize()
    }
}

/// This process's hashes (`Hasher`, randomly seeded per process) of an op log's replica ids,
/// interned strings and extra fields, indexed like them: equal contents hash equally in every
/// log of the process, so fingerprints may hash these instead of the contents.
struct ContentHashes: Sendable {
    var replicas: [Int] = []
    var strings: [Int] = []
    var extras: [Int] = []

    /// Forgets the hashes of entries past these counts (a log rolled back: other entries may
    /// take those indices).
    mutating func truncate(replicas r: Int, strings s: Int, extras e: Int) {
        if replicas.count > r { replicas.removeLast(replicas.count - r) }
        if strings.count > s { strings.removeLast(strings.count - s) }
        if extras.count > e { extras.removeLast(extras.count - e) }
    }

    /// Hashes the entries added since the last update (the tables only ever grow, but for a
    /// rollback, which truncates these too).
    mutating func update(replicas r: [ReplicaID], strings s: [String], extras e: [[UInt8]]) {
        if replicas.count > r.count || strings.count > s.count || extras.count > e.count { self = ContentHashes() }
        for x in r[replicas.count...] { replicas.append(x.hashValue) }
        for x in s[strings.count...] { strings.append(ExactString(x).hashValue) }
        for x in e[extras.count...] { extras.append(x.hashValue) }
    }
}
