extension StringProtocol {
    /// The text without leading and trailing spaces and tabs (HTTP's optional whitespace, RFC 9110 §5.6.3).
    public func trimmingWhitespace() -> String {
        String(self.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
