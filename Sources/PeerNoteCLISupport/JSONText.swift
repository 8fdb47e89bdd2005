/// JSON text helpers shared by the tools' JSON output.
public enum JSONText {
    /// `\u001f`: a control character as JSON writes it.
    public static func unicodeEscape(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return "\\u" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
