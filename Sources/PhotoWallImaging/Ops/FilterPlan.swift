#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// Lanczos3 weights for one axis.
///
/// For output pixel `o`, input pixels `starts[o] ..< starts[o] + counts[o]`
/// are weighted by `weights[o * maxTaps ..< o * maxTaps + counts[o]]`, which
/// sum to 1 (to float precision), so flat areas keep their value.
/// The window is clipped to the image and renormalised at the edges
/// (Pillow's `precompute_coeffs`).
struct FilterPlan {
    let inPixels: Int
    let outPixels: Int
    let maxTaps: Int
    let starts: [Int]
    let counts: [Int]
    let weights: [Float]
    /// Output equals input: no filtering needed on this axis.
    let isIdentity: Bool

    /// - Parameters:
    ///   - inPixels: Pixels on this axis in the input (>= 1).
    ///   - inExtent: Geometric size of the input in its pixel units (<= inPixels;
    ///     smaller when the last box/DCT pixel covers only part of a block).
    ///   - outPixels: Pixels wanted (>= 1).
    init(inPixels: Int, inExtent: Double, outPixels: Int) {
        precondition(inPixels >= 1 && outPixels >= 1 && inExtent > 0)
        self.inPixels = inPixels
        self.outPixels = outPixels
        isIdentity = inPixels == outPixels && inExtent == Double(inPixels)
        let scale = inExtent / Double(outPixels)
        let filterScale = max(scale, 1.0)
        let support = 3.0 * filterScale
        let maxTaps = min(Int((support * 2).rounded(.up)) + 2, inPixels)
        self.maxTaps = maxTaps
        var starts = [Int](repeating: 0, count: outPixels)
        var counts = [Int](repeating: 0, count: outPixels)
        var weights = [Float](repeating: 0, count: outPixels * maxTaps)
        var real = [Double](repeating: 0, count: maxTaps)
        for o in 0..<outPixels {
            let center = (Double(o) + 0.5) * scale
            var first = max(Int((center - support + 0.5).rounded(.down)), 0)
            var last = min(Int((center + support + 0.5).rounded(.down)), inPixels)
            if last - first > maxTaps { last = first + maxTaps }
            if last <= first {                       // degenerate: nearest pixel
                first = min(max(Int(center), 0), inPixels - 1)
                last = first + 1
            }
            var sum = 0.0
            for i in first..<last {
                let w = Self.lanczos3((Double(i) - center + 0.5) / filterScale)
                real[i - first] = w
                sum += w
            }
            if sum == 0 {                             // cannot happen for lanczos3 windows; stay safe
                for i in first..<last { real[i - first] = 1 }
                sum = Double(last - first)
            }
            for i in 0..<(last - first) {
                weights[o * maxTaps + i] = Float(real[i] / sum)
            }
            starts[o] = first
            counts[o] = last - first
        }
        self.starts = starts
        self.counts = counts
        self.weights = weights
    }

    /// The plan for these sizes, made once and then shared: photos from one camera or phone come in a
    /// few sizes, and a plan's weights cost two `sin` calls per tap (about 5,000 for a 1200-pixel axis).
    /// The cache holds at most `cacheLimit` plans and `cacheByteLimit` bytes of them (a phone photo's
    /// four plans, display and thumbnail, are about 200 KiB); it is emptied when the next would not fit.
    static func cached(inPixels: Int, inExtent: Double, outPixels: Int) -> FilterPlan {
        let key = CacheKey(inPixels: inPixels, inExtentBits: inExtent.bitPattern, outPixels: outPixels)
        if let plan = cache.withLock({ $0.plans[key] }) { return plan }
        let plan = FilterPlan(inPixels: inPixels, inExtent: inExtent, outPixels: outPixels)
        let bytes = plan.byteCount
        guard bytes <= cacheByteLimit else { return plan }
        cache.withLock { c in
            if c.plans.count >= cacheLimit || c.bytes + bytes > cacheByteLimit { c = PlanCache() }
            if c.plans.updateValue(plan, forKey: key) == nil { c.bytes += bytes }
        }
        return plan
    }

    static let cacheLimit = 64
    static let cacheByteLimit = 2 << 20
    /// Plans in the cache now, and their bytes.
    static var cacheUse: (count: Int, bytes: Int) { cache.withLock { ($0.plans.count, $0.bytes) } }

    /// The memory the plan's arrays hold.
    var byteCount: Int {
        weights.count * MemoryLayout<Float>.stride + (starts.count + counts.count) * MemoryLayout<Int>.stride
    }

    struct CacheKey: Hashable {
        var inPixels: Int
        var inExtentBits: UInt64
        var outPixels: Int
    }

    struct PlanCache {
        var plans: [CacheKey: FilterPlan] = [:]
        var bytes = 0
    }

    private static let cache = Mutex(PlanCache())

    static func lanczos3(_ x: Double) -> Double {
        let ax = abs(x)
        if ax < 1e-9 { return 1 }
        if ax >= 3 { return 0 }
        let px = Double.pi * ax
        return 3 * sin(px) * sin(px / 3) / (px * px)
    }
}
