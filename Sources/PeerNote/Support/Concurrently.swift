import CThreads
import Dispatch
#if canImport(Darwin)
import Darwin
#endif

/// Two pieces of work run at once: one on the calling thread, the other on a thread of its
/// own. Saving and loading have independent halves (a block's state section and its columns
/// each deflated; a base block's log and notebook), and a machine with a second core does them
/// in about the time of the longer one.
///
/// On Linux the other half goes to a helper thread of `CThreads`, started on first use on
/// another processor than the caller's and kept for later calls (a thread of its own when the
/// helper is busy): Linux puts a new thread, like a Dispatch worker woken for the first time,
/// on its creator's processor and moves it a few milliseconds later, which is the whole of a
/// short job (two threads of 4 ms each took 7.6 ms on this project's virtual machines, and
/// 4.2 ms started apart). Its threads block the signals a program handles, as Dispatch's
/// workers do, and leave open those a fault raises. Elsewhere it is Dispatch's global queue,
/// at the caller's quality of service. Where no thread can be had, the other half runs on the
/// calling thread first.
///
/// The call returns only when both are done, so nothing the second closure touches outlives
/// the call, and its result is handed over after the wait for the thread (a join, or
/// Dispatch's group wait: either orders the worker's writes before the caller's reads). The
/// second closure must not touch anything the first one uses; it is `@Sendable`, so the
/// compiler checks what it captures.
package enum Concurrently {
    /// Runs `first` here and `second` on another thread, and returns both results.
    package static func run<A, B>(_ first: () -> A, alongside second: @escaping @Sendable () -> B) -> (A, B) {
        let handoff = Handoff<B>()
        let wait = start { handoff.value = second() }
        let a = first()
        wait()
        guard let b = handoff.value else { preconditionFailure("the concurrent half finished without a result") }
        return (a, b)
    }

    /// `run(first, alongside: second)` where `second` may wait for a value that `first` hands it
    /// on the way (`Relay.send`), so that each thread goes on to its next piece of work as soon
    /// as what that needs is ready. `Relay.receive` gives nil when `first` returned without
    /// sending: the wait ends on every path. Where no thread can be had, `second` runs after
    /// `first` (before it, it would wait for ever).
    package static func run<T: Sendable, A, B>(relaying _: T.Type, _ first: (Relay<T>) -> A,
                                              alongside second: @escaping @Sendable (Relay<T>) -> B) -> (A, B) {
        let relay = Relay<T>()
        guard relay.canWait else {
            // No latch to wait at: one half after the other.
            let a = first(relay)
            relay.close()
            return (a, second(relay))
        }
        let handoff = Handoff<B>()
        let wait = start(lateOnFailure: true) { handoff.value = second(relay) }
        let a = first(relay)
        relay.close()
        wait()
        guard let b = handoff.value else { preconditionFailure("the concurrent half finished without a result") }
        return (a, b)
    }

    /// Starts `work` on another thread and returns what waits for it to finish. Where no thread
    /// can be had, `work` runs on this thread: at once, or when waited for (`lateOnFailure`).
    private static func start(lateOnFailure: Bool = false, _ work: @escaping @Sendable () -> Void) -> () -> Void {
        #if os(Linux)
        let job = Unmanaged.passRetained(Job(work)).toOpaque()
        guard let thread = peernote_thread_start({ context in
            guard let context else { return }
            Unmanaged<Job>.fromOpaque(context).takeRetainedValue().work()
        }, job) else {
            Unmanaged<Job>.fromOpaque(job).release()
            if lateOnFailure { return work }
            work()
            return {}
        }
        return { peernote_thread_join(thread) }
        #else
        let group = DispatchGroup()
        queue.async(group: group, execute: work)
        return { group.wait() }
        #endif
    }
}

#if !os(Linux)
extension Concurrently {
    /// The queue for the other half: at the calling thread's quality of service where the platform
    /// has one (on Apple platforms a thread that waits for work of a lower class is a priority
    /// inversion), else `userInitiated`.
    fileprivate static var queue: DispatchQueue {
        #if canImport(Darwin)
        let caller = DispatchQoS.QoSClass(rawValue: qos_class_self()) ?? .unspecified
        return DispatchQueue.global(qos: caller == .unspecified ? .userInitiated : caller)
        #else
        return DispatchQueue.global(qos: .userInitiated)
        #endif
    }
}
#endif

/// The work a thread started by `Concurrently` runs (passed to C as its context).
private final class Job: Sendable {
    let work: @Sendable () -> Void
    init(_ work: @escaping @Sendable () -> Void) { self.work = work }
}

/// A result passed from a worker thread to the thread that waits for it. `@unchecked`: it is
/// written once, by the worker, before the worker finishes, and read only after the caller's
/// wait for the worker, which is the synchronisation. The value need not be `Sendable`
/// because the worker keeps no reference to it (a document loaded on the worker is from then on
/// the caller's alone).
private final class Handoff<T>: @unchecked Sendable {
    var value: T?
}

/// A value one thread hands another, once, while both run (`Concurrently.run(relaying:_:alongside:)`).
/// `@unchecked Sendable`: `value` is written once, before the latch opens, and read only after
/// waiting at it (the latch's lock orders the write before the read); without a latch (no
/// memory for one) `Concurrently` runs the receiver after the sender has returned.
package final class Relay<T: Sendable>: @unchecked Sendable {
    private var value: T?
    private var sent = false
    private let latch: peernote_latch_t?

    fileprivate init() { latch = peernote_latch_create() }

    deinit { if let latch { peernote_latch_destroy(latch) } }

    /// Whether `receive` can wait for the value (a latch could be made).
    fileprivate var canWait: Bool { latch != nil }

    /// Hands `value` to the receiver; only the first call (on the sending thread) counts.
    package func send(_ value: T) {
        guard !sent else { return }
        sent = true
        self.value = value
        if let latch { peernote_latch_open(latch) }
    }

    /// Ends the wait without a value when nothing was sent (on the sending thread).
    fileprivate func close() {
        guard !sent else { return }
        sent = true
        if let latch { peernote_latch_open(latch) }
    }

    /// The value sent, waiting for it; nil when the sender returned without sending.
    package func receive() -> T? {
        if let latch { peernote_latch_wait(latch) }
        return value
    }
}

/// Hands out 0, 1, 2, ... to whichever threads ask, each number once. `@unchecked Sendable`: its
/// one word is only touched through the atomic operation of `CThreads`.
private final class Counter: @unchecked Sendable {
    private let word: UnsafeMutablePointer<Int32>

    init() {
        word = .allocate(capacity: 1)
        word.initialize(to: 0)
    }

    deinit { word.deallocate() }

    /// The next number.
    func take() -> Int { Int(peernote_counter_next(word)) }
}

/// A piece of work that either of two threads may do, whichever comes to it first: `take()`
/// is true for exactly one caller (the one `Counter` hands 0).
package final class Claim: Sendable {
    private let counter = Counter()

    package init() {}

    /// Whether this caller is the first to ask (and so does the work).
    package func take() -> Bool { counter.take() == 0 }
}

/// A flag one thread raises (once) and another reads as often as it likes, cheaply: one atomic
/// load, no lock and no system call. `@unchecked Sendable`: its one word is only touched through
/// the atomic operations of `CThreads`.
package final class StopFlag: @unchecked Sendable {
    private let word: UnsafeMutablePointer<Int32>

    package init() {
        word = .allocate(capacity: 1)
        word.initialize(to: 0)
    }

    deinit { word.deallocate() }

    /// Raises the flag; every later `isRaised` is true.
    package func raise() { peernote_flag_raise(word) }

    /// Whether the flag was raised.
    package var isRaised: Bool { peernote_flag_is_raised(word) }
}

/// A buffer whose parts threads write at once (`Concurrently`), each its own part: a save's
/// state section, each half encoded into its place in the one buffer it is compressed from.
/// `@unchecked Sendable` as a buffer pointer: the parts given out must not overlap, and the
/// buffer must outlive the work (both are the caller's to keep).
struct BufferParts: @unchecked Sendable {
    private let buffer: UnsafeMutableBufferPointer<UInt8>

    init(_ buffer: UnsafeMutableBufferPointer<UInt8>) { self.buffer = buffer }

    /// The bytes at `range` of the buffer (inside it).
    func part(_ range: Range<Int>) -> UnsafeMutableBufferPointer<UInt8> {
        precondition(range.lowerBound >= 0 && range.upperBound <= buffer.count, "a part of the buffer")
        return UnsafeMutableBufferPointer(rebasing: buffer[range])
    }
}
