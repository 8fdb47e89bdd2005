#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import PeerNote

/// One patch of an editing trace: delete `deleteCount` code points at `position`, then insert `text` there.
/// Positions and counts are held in 32 bits (24 bytes a patch, not 32: a trace holds hundreds
/// of thousands); `Trace.load` refuses larger ones.
struct TracePatch: Sendable {
    private var position32: Int32
    private var deleteCount32: Int32
    var text: String

    init(position: Int, deleteCount: Int, text: String) {
        position32 = Int32(truncatingIfNeeded: position)
        deleteCount32 = Int32(truncatingIfNeeded: deleteCount)
        self.text = text
    }

    var position: Int { Int(position32) }
    var deleteCount: Int { Int(deleteCount32) }
}

/// An editing trace (the `editing-traces` data set format), held compactly: all patches in one
/// array, each transaction a range of it. A concurrent trace also has each transaction's parents
/// and agent.
struct Trace: Sendable {
    /// Sequential traces apply every transaction to the previous state; concurrent ones name parents.
    enum Kind: String, Sendable { case sequential, concurrent }

    var name: String
    var path: String
    var kind: Kind
    var startContent: String
    var endContent: String
    var patches: [TracePatch]
    /// Transaction `i` holds `patches[patchStart[i] ..< patchStart[i + 1]]`.
    var patchStart: [Int]
    /// Concurrent traces: the indexes of each transaction's parents (all earlier). Empty for sequential traces.
    var parents: [[Int]]
    /// Concurrent traces: each transaction's agent. Empty for sequential traces.
    var agents: [Int]
    /// Transactions in the published trace (this one may be a prefix of it).
    var fullTxnCount: Int

    var txnCount: Int { patchStart.count - 1 }
    var isComplete: Bool { txnCount == fullTxnCount }
    var editCount: Int { patchStart[txnCount] }

    func patches(ofTxn i: Int) -> ArraySlice<TracePatch> { patches[patchStart[i] ..< patchStart[i + 1]] }

    /// The first `n` transactions (a concurrent trace's parents always come earlier, so a prefix is closed).
    func prefix(_ n: Int) -> Trace {
        let n = min(max(n, 0), txnCount)
        var t = self
        t.patchStart = Array(patchStart[...n])
        t.patches = Array(patches[..<patchStart[n]])
        if kind == .concurrent {
            t.parents = Array(parents[..<n])
            t.agents = Array(agents[..<n])
        }
        return t
    }

    // MARK: Reading

    private struct RawTrace: Decodable {
        var kind: String?
        var startContent: String?
        var endContent: String
        var txns: [RawTxn]
    }

    private struct RawTxn: Decodable {
        var parents: [Int]?
        var agent: Int?
        var patches: [RawPatch]
    }

    private struct RawPatch: Decodable {
        var position: Int
        var deleteCount: Int
        var text: String

        init(from decoder: any Decoder) throws {
            var c = try decoder.unkeyedContainer()
            position = try c.decode(Int.self)
            deleteCount = try c.decode(Int.self)
            text = try c.decode(String.self)
        }
    }

    /// Reads a gzipped JSON trace and checks its structure (not yet that its patches fit: replay does that).
    static func load(path: String) throws(BenchError) -> Trace {
        let compressed: [UInt8]
        do {
            compressed = try FileStore.read(path)
        } catch {
            throw .missingTrace(path: path, message: "cannot read the trace (\(error.message))")
        }
        let json: [UInt8]
        do {
            json = try Gunzip.decompress(compressed)
        } catch {
            throw .invalidTrace(path: path, message: error.description)
        }
        let raw: RawTrace
        do {
            raw = try JSONDecoder().decode(RawTrace.self, from: Data(json))
        } catch {
            throw .invalidTrace(path: path, message: "not an editing trace: \(Self.describe(error))")
        }
        let kind: Kind
        switch raw.kind {
        case nil, "sequential": kind = .sequential
        case "concurrent": kind = .concurrent
        case let other?: throw .invalidTrace(path: path, message: "unknown trace kind \"\(other)\"")
        }
        var trace = Trace(
            name: Self.traceName(path), path: path, kind: kind, startContent: raw.startContent ?? "",
            endContent: raw.endContent, patches: [], patchStart: [0], parents: [], agents: [],
            fullTxnCount: raw.txns.count)
        trace.patches.reserveCapacity(raw.txns.reduce(0) { $0 + $1.patches.count })
        trace.patchStart.reserveCapacity(raw.txns.count + 1)
        for (i, txn) in raw.txns.enumerated() {
            for p in txn.patches {
                guard p.position >= 0, p.deleteCount >= 0 else {
                    throw .invalidTrace(path: path, message: "transaction \(i): negative position or delete count")
                }
                guard p.position <= Int(Int32.max), p.deleteCount <= Int(Int32.max) else {
                    throw .invalidTrace(path: path, message: "transaction \(i): position or delete count above 2^31 - 1")
                }
                trace.patches.append(TracePatch(position: p.position, deleteCount: p.deleteCount, text: p.text))
            }
            trace.patchStart.append(trace.patches.count)
            if kind == .concurrent {
                let parents = txn.parents ?? []
                guard parents.allSatisfy({ $0 >= 0 && $0 < i }), Set(parents).count == parents.count else {
                    throw .invalidTrace(path: path, message: "transaction \(i): parents must be distinct earlier transactions")
                }
                guard let agent = txn.agent, agent >= 0 else {
                    throw .invalidTrace(path: path, message: "transaction \(i): missing agent")
                }
                trace.parents.append(parents)
                trace.agents.append(agent)
            }
        }
        return trace
    }

    /// "automerge-paper" for ".../automerge-paper.json.gz".
    static func traceName(_ path: String) -> String {
        var name = URL(fileURLWithPath: path).lastPathComponent
        for suffix in [".gz", ".json"] where name.hasSuffix(suffix) { name.removeLast(suffix.count) }
        return name
    }

    private static func describe(_ error: any Error) -> String {
        guard let e = error as? DecodingError else { return "\(error)" }
        let at: (DecodingError.Context) -> String = { ctx in
            let path = ctx.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
            return path.isEmpty ? ctx.debugDescription : "\(path): \(ctx.debugDescription)"
        }
        switch e {
        case .typeMismatch(_, let c), .valueNotFound(_, let c), .keyNotFound(_, let c), .dataCorrupted(let c): return at(c)
        @unknown default: return "\(e)"
        }
    }
}
