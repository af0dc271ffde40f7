extension StringProtocol {
    /// The text without leading and trailing spaces and tabs (HTTP's optional whitespace, RFC 9110 §5.6.3).
    public func trimmingWhitespace() -> String {
        // Most texts have nothing to trim: then it is returned as it is, without walking its Characters
        // twice (2% of a 100-object query's `order`). A first byte that is no space or tab means a first
        // Character that is neither (each is that single ASCII scalar).
        if let first = utf8.first, first != 0x20, first != 0x09, let last = self.last, last != " ", last != "\t" {
            return String(self)
        }
        return String(self.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
