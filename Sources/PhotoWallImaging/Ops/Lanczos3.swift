/// The two separable Lanczos3 passes, in 14-bit fixed point (see `FilterPlan`).
enum Lanczos3 {
    /// One output row from `rows.count` input rows: a plain multiply-add over
    /// the whole row per tap, which the compiler vectorises.
    static func vertical(rows: [UnsafePointer<UInt8>], weights: UnsafePointer<Int32>, count: Int,
                         accumulator acc: UnsafeMutablePointer<Int32>, into dst: UnsafeMutablePointer<UInt8>) {
        acc.update(repeating: 1 << (FilterPlan.shift - 1), count: count)
        var i = 0
        while i + 1 < rows.count {                    // two taps per sweep halves the accumulator traffic
            let w0 = weights[i], w1 = weights[i + 1]
            let r0 = rows[i], r1 = rows[i + 1]
            for x in 0..<count {
                acc[x] &+= w0 &* Int32(r0[x]) &+ w1 &* Int32(r1[x])
            }
            i += 2
        }
        if i < rows.count {
            let w0 = weights[i], r0 = rows[i]
            for x in 0..<count { acc[x] &+= w0 &* Int32(r0[x]) }
        }
        for x in 0..<count {
            dst[x] = UInt8(clamping: acc[x] >> FilterPlan.shift)
        }
    }

    /// One output row from one input row.
    static func horizontal(_ src: UnsafePointer<UInt8>, into dst: UnsafeMutablePointer<UInt8>, plan: FilterPlan,
                           channels: Int) {
        plan.weights.withUnsafeBufferPointer { w in
            plan.starts.withUnsafeBufferPointer { starts in
                plan.counts.withUnsafeBufferPointer { counts in
                    let w = w.baseAddress!, s = starts.baseAddress!, n = counts.baseAddress!
                    switch channels {
                    case 1: run(src, dst, w, s, n, plan.outPixels, plan.maxTaps, 1)
                    case 2: run(src, dst, w, s, n, plan.outPixels, plan.maxTaps, 2)
                    case 3: run(src, dst, w, s, n, plan.outPixels, plan.maxTaps, 3)
                    default: run(src, dst, w, s, n, plan.outPixels, plan.maxTaps, 4)
                    }
                }
            }
        }
    }

    @inline(__always)
    private static func run(_ src: UnsafePointer<UInt8>, _ dst: UnsafeMutablePointer<UInt8>,
                            _ weights: UnsafePointer<Int32>, _ starts: UnsafePointer<Int>,
                            _ counts: UnsafePointer<Int>, _ out: Int, _ maxTaps: Int, _ c: Int) {
        let half: Int32 = 1 << (FilterPlan.shift - 1)
        for o in 0..<out {
            var p = src + starts[o] * c
            let w = weights + o * maxTaps
            var a0 = half, a1 = half, a2 = half, a3 = half
            for t in 0..<counts[o] {
                let wt = w[t]
                a0 &+= wt &* Int32(p[0])
                if c > 1 { a1 &+= wt &* Int32(p[1]) }
                if c > 2 { a2 &+= wt &* Int32(p[2]) }
                if c > 3 { a3 &+= wt &* Int32(p[3]) }
                p += c
            }
            let d = dst + o * c
            d[0] = UInt8(clamping: a0 >> FilterPlan.shift)
            if c > 1 { d[1] = UInt8(clamping: a1 >> FilterPlan.shift) }
            if c > 2 { d[2] = UInt8(clamping: a2 >> FilterPlan.shift) }
            if c > 3 { d[3] = UInt8(clamping: a3 >> FilterPlan.shift) }
        }
    }
}
