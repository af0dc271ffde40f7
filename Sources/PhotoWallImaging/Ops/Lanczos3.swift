/// The two separable Lanczos3 passes (weights from `FilterPlan`), in Float so
/// that the loops vectorise with plain SSE2.
///
/// The vertical pass turns `rows.count` Float rows (box rows widened once) into one Float row; the
/// horizontal pass reads that row, four channels per SIMD load, and writes
/// bytes. The Float row needs 4 spare elements at the end (see `floatRowCapacity`).
enum Lanczos3 {
    /// Float elements to allocate for a row of `count` values.
    static func floatRowCapacity(_ count: Int) -> Int { count + 4 }

    static func vertical(rows: [UnsafePointer<Float>], weights: UnsafePointer<Float>, count: Int,
                         into acc: UnsafeMutablePointer<Float>) {
        let r0 = rows[0], w0 = weights[0]
        for x in 0..<count { acc[x] = w0 * r0[x] }
        var i = 1
        while i + 1 < rows.count {                    // two taps per sweep halves the accumulator traffic
            let wa = weights[i], wb = weights[i + 1]
            let ra = rows[i], rb = rows[i + 1]
            for x in 0..<count { acc[x] += wa * ra[x] + wb * rb[x] }
            i += 2
        }
        if i < rows.count {
            let wa = weights[i], ra = rows[i]
            for x in 0..<count { acc[x] += wa * ra[x] }
        }
    }

    /// Copies a byte row into a Float row (when no vertical filtering is needed).
    static func widen(_ row: UnsafePointer<UInt8>, count: Int, into out: UnsafeMutablePointer<Float>) {
        for x in 0..<count { out[x] = Float(row[x]) }
    }

    /// Rounds and clamps a Float row to bytes.
    static func narrow(_ row: UnsafePointer<Float>, count: Int, into dst: UnsafeMutablePointer<UInt8>) {
        for x in 0..<count { dst[x] = byte(row[x]) }
    }

    static func horizontal(_ src: UnsafeMutablePointer<Float>, into dst: UnsafeMutablePointer<UInt8>, plan: FilterPlan,
                           channels: Int) {
        let padding = src + plan.inPixels * channels            // keep the SIMD over-read defined
        padding.update(repeating: 0, count: 4)
        plan.weights.withUnsafeBufferPointer { w in
            plan.starts.withUnsafeBufferPointer { starts in
                plan.counts.withUnsafeBufferPointer { counts in
                    let w = w.baseAddress!, s = starts.baseAddress!, n = counts.baseAddress!
                    switch channels {
                    case 1: scalar(src, dst, w, s, n, plan.outPixels, plan.maxTaps, 1)
                    case 2: scalar(src, dst, w, s, n, plan.outPixels, plan.maxTaps, 2)
                    case 3: vector(src, dst, w, s, n, plan.outPixels, plan.maxTaps, 3)
                    default: vector(src, dst, w, s, n, plan.outPixels, plan.maxTaps, 4)
                    }
                }
            }
        }
    }

    /// 3 or 4 channels: one SIMD4 multiply-add per tap, two taps per step into two
    /// accumulators (independent adds), with wrapping pointer arithmetic: no overflow checks.
    @inline(__always)
    private static func vector(_ src: UnsafePointer<Float>, _ dst: UnsafeMutablePointer<UInt8>,
                               _ weights: UnsafePointer<Float>, _ starts: UnsafePointer<Int>,
                               _ counts: UnsafePointer<Int>, _ out: Int, _ maxTaps: Int, _ c: Int) {
        let raw = UnsafeRawPointer(src)
        let step = c &* MemoryLayout<Float>.stride
        var w = weights
        var d = dst
        for o in 0..<out {
            var p = raw + starts[o] &* step
            let n = counts[o]
            var acc0 = SIMD4<Float>(), acc1 = SIMD4<Float>()
            var t = 0
            while t &+ 1 < n {
                acc0 += SIMD4(repeating: w[t]) * p.loadUnaligned(as: SIMD4<Float>.self)
                acc1 += SIMD4(repeating: w[t &+ 1]) * (p + step).loadUnaligned(as: SIMD4<Float>.self)
                p += step &* 2
                t &+= 2
            }
            if t < n { acc0 += SIMD4(repeating: w[t]) * p.loadUnaligned(as: SIMD4<Float>.self) }
            let acc = acc0 + acc1
            d[0] = byte(acc[0])
            d[1] = byte(acc[1])
            d[2] = byte(acc[2])
            if c > 3 { d[3] = byte(acc[3]) }
            w += maxTaps
            d += c
        }
    }

    @inline(__always)
    private static func scalar(_ src: UnsafePointer<Float>, _ dst: UnsafeMutablePointer<UInt8>,
                               _ weights: UnsafePointer<Float>, _ starts: UnsafePointer<Int>,
                               _ counts: UnsafePointer<Int>, _ out: Int, _ maxTaps: Int, _ c: Int) {
        for o in 0..<out {
            var p = src + starts[o] * c
            let w = weights + o * maxTaps
            var a0: Float = 0, a1: Float = 0
            for t in 0..<counts[o] {
                a0 += w[t] * p[0]
                if c > 1 { a1 += w[t] * p[1] }
                p += c
            }
            dst[o * c] = byte(a0)
            if c > 1 { dst[o * c + 1] = byte(a1) }
        }
    }

    /// Round-to-nearest and clamp to 0...255 without a trapping conversion:
    /// adding 2^23 puts the integer part in the low mantissa bits.
    @inline(__always)
    static func byte(_ v: Float) -> UInt8 {
        let clamped = min(max(v, 0), 255)
        return UInt8(truncatingIfNeeded: (clamped + 8_388_608).bitPattern)
    }
}
