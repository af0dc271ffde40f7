/// SplitMix64 (Steele, Lea, Flood 2014): a tiny PRNG whose output depends only on the seed, on
/// every platform and Swift version (unlike `SystemRandomNumberGenerator` or `Set` order).
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1) with 53 bits.
    public mutating func unit() -> Double { Double(next() >> 11) * 0x1.0p-53 }

    /// Uniform in 0..<bound (bound > 0), by rejection so there is no modulo bias.
    public mutating func below(_ bound: Int) -> Int {
        precondition(bound > 0)
        let b = UInt64(bound)
        let limit = UInt64.max - UInt64.max % b
        while true {
            let x = next()
            if x < limit { return Int(x % b) }
        }
    }
}
