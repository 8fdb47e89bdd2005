import Dispatch
#if canImport(Darwin)
import Darwin
#endif

/// Two pieces of work run at once: one on the calling thread, the other on a thread of
/// Dispatch's global queue. Saving and merging have independent halves (a block's state
/// section and its columns each deflated; two copies of a document each read), and a machine
/// with a second core does them in about the time of the longer one.
///
/// The call returns only when both are done, so nothing the second closure touches outlives
/// the call, and its result is handed over after Dispatch's group wait (which orders the
/// worker's writes before the caller's reads). The second closure must not touch anything the
/// first one uses; it is `@Sendable`, so the compiler checks what it captures.
package enum Concurrently {
    /// Runs `first` here and `second` on another thread, and returns both results.
    package static func run<A, B>(_ first: () -> A, alongside second: @escaping @Sendable () -> B) -> (A, B) {
        let handoff = Handoff<B>()
        let group = DispatchGroup()
        queue.async(group: group) { handoff.value = second() }
        let a = first()
        group.wait()
        guard let b = handoff.value else { preconditionFailure("the concurrent half finished without a result") }
        return (a, b)
    }

    /// Runs `work` for every element at once and returns the results in the elements' order.
    /// Element `here` is done on the calling thread, the others on Dispatch's threads.
    static func map<T: Sendable, R>(_ elements: [T], here: Int = 0, _ work: @escaping @Sendable (T) -> R) -> [R] {
        guard elements.count > 1 else { return elements.map(work) }
        precondition(elements.indices.contains(here), "the element to do here is one of them")
        let handoffs = elements.indices.map { _ in Handoff<R>() }
        let group = DispatchGroup()
        for (i, element) in elements.enumerated() where i != here {
            let handoff = handoffs[i]
            queue.async(group: group) { handoff.value = work(element) }
        }
        handoffs[here].value = work(elements[here])
        group.wait()
        return handoffs.map { h in
            guard let r = h.value else { preconditionFailure("a concurrent task finished without a result") }
            return r
        }
    }
}

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

/// A result passed from a worker thread to the thread that waits for it. `@unchecked`: it is
/// written once, by the worker, before the worker leaves its Dispatch group, and read only after
/// the group's wait; the group's wait is the synchronisation. The value need not be `Sendable`
/// because the worker keeps no reference to it (a document loaded on the worker is from then on
/// the caller's alone).
private final class Handoff<T>: @unchecked Sendable {
    var value: T?
}
