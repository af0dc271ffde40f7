/// Integer box pre-shrink: averages `boxX` x `boxY` blocks, a row at a time.
enum BoxShrink {
    /// Adds one input row into the per-box sums (`boxWidth * channels` values).
    static func accumulate(_ row: UnsafePointer<UInt8>, into sums: UnsafeMutablePointer<UInt32>, inWidth: Int,
                           boxX: Int, boxWidth: Int, channels: Int) {
        if boxX == 1 {
            for i in 0..<(inWidth * channels) { sums[i] &+= UInt32(row[i]) }
            return
        }
        switch channels {
        case 1: sumBoxes(row, sums, inWidth, boxX, boxWidth, 1)
        case 2: sumBoxes(row, sums, inWidth, boxX, boxWidth, 2)
        case 3: sumBoxes(row, sums, inWidth, boxX, boxWidth, 3)
        default: sumBoxes(row, sums, inWidth, boxX, boxWidth, 4)
        }
    }

    @inline(__always)
    private static func sumBoxes(_ row: UnsafePointer<UInt8>, _ sums: UnsafeMutablePointer<UInt32>, _ inWidth: Int,
                                 _ boxX: Int, _ boxWidth: Int, _ c: Int) {
        let fullBoxes = inWidth / boxX
        var p = row
        for b in 0..<fullBoxes {
            var s0: UInt32 = 0, s1: UInt32 = 0, s2: UInt32 = 0, s3: UInt32 = 0
            for _ in 0..<boxX {
                s0 &+= UInt32(p[0])
                if c > 1 { s1 &+= UInt32(p[1]) }
                if c > 2 { s2 &+= UInt32(p[2]) }
                if c > 3 { s3 &+= UInt32(p[3]) }
                p += c
            }
            let s = sums + b * c
            s[0] &+= s0
            if c > 1 { s[1] &+= s1 }
            if c > 2 { s[2] &+= s2 }
            if c > 3 { s[3] &+= s3 }
        }
        if fullBoxes < boxWidth {                    // partial box at the right edge
            let s = sums + fullBoxes * c
            for _ in 0..<(inWidth - fullBoxes * boxX) {
                for k in 0..<c { s[k] &+= UInt32(p[k]) }
                p += c
            }
        }
    }

    /// Writes the rounded averages of the sums over `rows` input rows.
    static func average(_ sums: UnsafePointer<UInt32>, into dst: UnsafeMutablePointer<UInt8>, inWidth: Int,
                        boxX: Int, boxWidth: Int, rows: Int, channels: Int) {
        let full = UInt32(boxX * rows)
        for b in 0..<boxWidth {
            let n = b == boxWidth - 1 ? UInt32((inWidth - b * boxX) * rows) : full
            for k in 0..<channels {
                let i = b * channels + k
                dst[i] = UInt8(truncatingIfNeeded: (sums[i] + n / 2) / n)
            }
        }
    }
}
