// MARK: - ColumnSet

/// One column's bytes as found inside a column set.
///
/// `base` is the absolute file offset of `bytes.first`; `bytes` keeps the
/// indices of the array it was sliced from.
struct ColumnSlice: Equatable {
    var bytes: ArraySlice<UInt8>
    var base: Int
}

/// Lays several columns out as one byte string:
/// `[uleb columnID, uleb byteLength, bytes...]*`.
///
/// Invariants of the encoding: ids strictly ascending (so no duplicates),
/// every listed column non-empty (empty columns are omitted), lengths within
/// the input. `decode` enforces all three.
enum ColumnSet {
    /// Encodes the non-empty columns in ascending id order.
    static func encode(_ columns: [UInt64: [UInt8]]) -> [UInt8] {
        var writer = ByteWriter()
        for id in columns.keys.sorted() {
            guard let bytes = columns[id], !bytes.isEmpty else { continue }
            writer.uleb(id)
            writer.uleb(UInt64(bytes.count))
            writer.append(bytes)
        }
        return writer.bytes
    }

    /// Splits a column set into its columns.
    /// - Parameters:
    ///   - bytes: exactly the column set.
    ///   - base: absolute file offset of `bytes.first`.
    static func decode(_ bytes: ArraySlice<UInt8>, base: Int) throws(ColumnError) -> [UInt64: ColumnSlice] {
        var reader = ByteReader(bytes, base: base)
        var result: [UInt64: ColumnSlice] = [:]
        var previousID: UInt64?
        while !reader.isAtEnd {
            let idOffset = reader.position
            let id = try reader.uleb()
            if let previousID, id <= previousID {
                throw ColumnError(
                    offset: idOffset,
                    message: id == previousID
                        ? "column set: duplicate column id \(id)"
                        : "column set: column id \(id) follows \(previousID) (ids must ascend)")
            }
            let lengthOffset = reader.position
            let length = try reader.uleb()
            guard length > 0 else {
                throw ColumnError(offset: lengthOffset, message: "column set: column \(id) is empty (empty columns must be omitted)")
            }
            guard length <= UInt64(reader.remaining) else {
                throw ColumnError(
                    offset: lengthOffset,
                    message: "column set: column \(id) claims \(length) bytes but only \(reader.remaining) remain")
            }
            let start = reader.position
            let slice = try reader.bytes(Int(length))
            result[id] = ColumnSlice(bytes: slice, base: start)
            previousID = id
        }
        return result
    }

    /// Splits a column set into its columns; `base` is the absolute offset of `bytes[0]`.
    static func decode(_ bytes: [UInt8], base: Int) throws(ColumnError) -> [UInt64: ColumnSlice] {
        try decode(bytes[...], base: base)
    }
}
