import Testing
@testable import PeerNote

@Suite("OpStore: adopted ops, then appended ones")
struct OpStoreTests {
    static func op(_ lv: Int, _ length: Int = 1) -> Op {
        Op(lv: lv, length: length, body: .deleteText(note: LocalID(agent: 0, counter: 0), target: LocalID(agent: 0, counter: UInt32(lv)), reversed: false))
    }

    /// The address of the store's adopted ops, how many, and how many it appended.
    static func parts(_ store: OpStore) -> (adopted: UInt, count: Int, appended: Int) {
        store.withParts { a, b in (UInt(bitPattern: a.baseAddress), a.count, b.count) }
    }

    static func address(_ ops: [Op]) -> UInt { ops.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) } }

    @Test("An op takes 48 bytes, its length in 32 bits after the body, and keeps the longest length there can be")
    func opLayout() {
        #expect(MemoryLayout<Op>.stride == 48)
        var op = Self.op(3, Op.maxLength)
        #expect(op.length == Int(UInt32.max))
        op.length -= 1
        #expect(op.length == Int(UInt32.max) - 1 && op.lv == 3)
    }

    @Test("Random appends, changes, roll-backs and copies read as an array would, and never write to a shared adopted array")
    func randomAgainstArray() {
        var rng = SeededRandom(state: 7)
        for round in 0 ..< 200 {
            let source = (0 ..< Int(rng.next() % 12)).map { Self.op($0 * 3, 3) }
            var store = OpStore(adopting: source)
            var expected = source
            var sharedAdopted = true
            for _ in 0 ..< 30 {
                switch rng.next() % 7 {
                case 0, 1:
                    let op = Self.op(expected.count * 3 + 1000)
                    store.append(op)
                    expected.append(op)
                case 2 where !expected.isEmpty:
                    // The last op grows in place, as typing extends it.
                    store[store.count - 1].length += 1
                    expected[expected.count - 1].length += 1
                case 3 where !expected.isEmpty:
                    let k = Int(rng.next() % UInt64(expected.count + 1))
                    store.removeLast(k)
                    expected.removeLast(k)
                case 4 where expected.count > 1:
                    // An earlier op: written where it lies (a shared adopted array is copied then).
                    let i = Int(rng.next() % UInt64(expected.count - 1))
                    if i < Self.parts(store).count { sharedAdopted = false }
                    store[i] = Self.op(100_000 + i)
                    expected[i] = Self.op(100_000 + i)
                case 5:
                    store.reserveCapacity(expected.count + 4)
                case 6 where rng.next() % 4 == 0:
                    store.copyStorage()
                    sharedAdopted = false
                    #expect(Self.parts(store).count == 0, "round \(round): a copy holds its ops itself")
                default:
                    break
                }
                #expect(Array(store) == expected, "round \(round)")
                #expect(store.count == expected.count && store.isEmpty == expected.isEmpty)
                #expect(store.array == expected)
                #expect(store.withContiguousOps { Array($0) } == expected)
                let (adopted, count, appended) = Self.parts(store)
                #expect(count + appended == expected.count)
                if sharedAdopted && count > 0 {
                    #expect(adopted == Self.address(source), "round \(round): the adopted array was copied")
                }
            }
            // The array the store adopted is as it was: the store never wrote to it.
            #expect(source == (0 ..< source.count).map { Self.op($0 * 3, 3) })
        }
    }

    @Test("Removing every adopted op lets go of their array; removeAll empties both parts")
    func dropsAdoptedArray() {
        var store = OpStore(adopting: [Self.op(0), Self.op(1)])
        store.append(Self.op(2))
        store.removeLast(3)
        #expect(store.isEmpty && Self.parts(store).count == 0)
        store = OpStore(adopting: [Self.op(0)])
        store.append(Self.op(1))
        store.removeAll(keepingCapacity: true)
        #expect(store.isEmpty && Self.parts(store).count == 0 && Self.parts(store).appended == 0)
        #expect(OpStore([Self.op(0)]) == OpStore(adopting: [Self.op(0)]))
    }
}
