#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A string compared, hashed and ordered by its exact Unicode scalars, never by canonical
/// equivalence as `String` is: "é" as U+00E9 and "e" followed by U+0301 are two values here,
/// one value to `String`'s `==`, `hashValue` and `<`. Every string of a document (titles, tags,
/// authors, messages, bodies) is compared, deduplicated and sorted this way (peernote(5),
/// STRINGS): what a user wrote is kept as written. The order is that of the scalar values,
/// which is the order of the UTF-8 bytes.
///
/// A key for dictionaries and sets of strings; `String.hasSameScalars(as:)` and
/// `String.scalarsPrecede(_:)` compare two strings without wrapping them.
public struct ExactString: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var string: String

    public init(_ string: String) { self.string = string }

    public static func == (a: ExactString, b: ExactString) -> Bool { a.string.hasSameScalars(as: b.string) }

    public static func < (a: ExactString, b: ExactString) -> Bool { a.string.scalarsPrecede(b.string) }

    public func hash(into hasher: inout Hasher) {
        // The UTF-8 bytes, then a byte no UTF-8 holds (so that no string's bytes are a prefix
        // of another's hashed input). `String` hashes its normalized form instead.
        let done: Void? = string.utf8.withContiguousStorageIfAvailable { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        if done == nil { for b in string.utf8 { hasher.combine(b) } }
        hasher.combine(0xFF as UInt8)
    }

    public var description: String { string }
}

extension String {
    /// Whether the two strings hold the same Unicode scalars (the same UTF-8 bytes). `==` says
    /// whether they are canonically equivalent, which is more often true.
    public func hasSameScalars(as other: String) -> Bool {
        let a = utf8, b = other.utf8
        guard a.count == b.count else { return false }
        let fast: Bool?? = a.withContiguousStorageIfAvailable { x in
            b.withContiguousStorageIfAvailable { y in
                guard let p = x.baseAddress, let q = y.baseAddress else { return true }
                return memcmp(p, q, x.count) == 0
            }
        }
        if let fast, let same = fast { return same }
        return a.elementsEqual(b)
    }

    /// Whether the string comes before `other` in the order of their Unicode scalar values
    /// (the order of their UTF-8 bytes). `<` orders canonically equivalent forms as one.
    public func scalarsPrecede(_ other: String) -> Bool {
        utf8.lexicographicallyPrecedes(other.utf8)
    }
}

extension Sequence<String> {
    /// The strings in the order of their Unicode scalar values (`ExactString`'s order).
    public func sortedByScalars() -> [String] { sorted { $0.scalarsPrecede($1) } }

    /// The distinct strings (distinct by their Unicode scalars), each where it first appears.
    public func uniquedByScalars() -> [String] {
        var seen = Set<ExactString>()
        return filter { seen.insert(ExactString($0)).inserted }
    }

    /// Whether one of the strings has the same Unicode scalars as `string`.
    public func containsScalars(of string: String) -> Bool { contains { $0.hasSameScalars(as: string) } }
}

extension String {
    /// The first `limit` characters with `…` after, when the string is longer: for a title or a
    /// query in a one-line message, where a megabyte-long one would make a megabyte-long line.
    func clippedForMessage(to limit: Int = 60) -> String {
        count > limit ? String(prefix(limit)) + "…" : self
    }
}
