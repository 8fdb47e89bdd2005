// The budget check that stops a read before it inflates sections: it lives with the format,
// whose error it throws, so that Support names nothing of a higher folder.

extension MemoryBudget {
    /// Throws when `inflated` bytes of sections need more memory than this process may use.
    /// `offset`: where the section that crosses the line starts.
    static func check(inflating inflated: UInt64, offset: Int?) throws(FormatError) {
        let need = needed(inflating: inflated)
        // Most documents are far below any machine's memory: no system call for them.
        guard need > 32 << 20 else { return }
        let can = available()
        guard need > can else { return }
        throw FormatError(offset: offset, message: "reading it needs about \(megabytes(need)) of memory (its sections inflate to \(megabytes(inflated))), more than the \(megabytes(can)) this process can use",
                          memory: MemoryShortfall(needed: need, available: can))
    }
}
