extension Duration {
    /// The duration in seconds, with its fraction (attoseconds kept to a `Double`'s precision).
    public var inSeconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
