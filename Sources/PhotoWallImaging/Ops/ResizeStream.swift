/// Streaming resize: rows go in top to bottom, a small image comes out.
///
/// Stages, all fed one row at a time so the source never sits in memory:
/// 1. premultiply alpha (when the image has alpha and is resized);
/// 2. integer box pre-shrink by `boxX` x `boxY` (partial edge boxes average
///    the pixels they have);
/// 3. separable Lanczos3: vertical taps over a ring of box rows (vectorisable
///    over the whole row), then horizontal taps, writing one output row. Ring rows
///    are widened to Float once, when they arrive, not once per tap.
///
/// Memory: the ring (at most `maxTaps + 1` Float box rows), one byte row for the
/// box averages, one accumulator row and the output image. Not thread-safe; one stream per decode.
final class ResizeStream {
    let channels: Int
    let hasAlpha: Bool
    let inWidth: Int
    let inHeight: Int
    let boxX: Int
    let boxY: Int
    let boxWidth: Int
    let boxHeight: Int
    let outWidth: Int
    let outHeight: Int
    private let copyOnly: Bool
    private let vertical: FilterPlan
    private let horizontal: FilterPlan

    private let premultiplyRow: UnsafeMutablePointer<UInt8>
    private let boxSums: UnsafeMutablePointer<UInt32>
    private var boxRowsPending = 0
    private let ringRows: Int
    /// Float elements per ring row: a box row plus the horizontal pass's SIMD padding.
    private let ringStride: Int
    private let ring: UnsafeMutablePointer<Float>
    private let boxRowBytes: UnsafeMutablePointer<UInt8>
    private var ringFilled = 0              // box rows received so far
    private let floatRow: UnsafeMutablePointer<Float>
    private var output: [UInt8]
    private var rowsIn = 0
    private var rowsOut = 0

    /// - Parameters:
    ///   - inWidth, inHeight: Rows that will be pushed, and their width, in pixels.
    ///   - extentX, extentY: Geometric size of the input in input pixels
    ///     (smaller than inWidth/inHeight when a DCT-scaled edge pixel is partial).
    ///   - outWidth, outHeight: Result size (1...input size).
    ///   - gap: Pre-shrink stops while at least this factor remains for Lanczos3.
    init(channels: Int, hasAlpha: Bool, inWidth: Int, inHeight: Int, extentX: Double, extentY: Double,
         outWidth: Int, outHeight: Int, gap: Double) {
        precondition((1...4).contains(channels) && inWidth > 0 && inHeight > 0 && outWidth > 0 && outHeight > 0)
        self.channels = channels
        self.hasAlpha = hasAlpha
        self.inWidth = inWidth
        self.inHeight = inHeight
        self.outWidth = outWidth
        self.outHeight = outHeight
        copyOnly = inWidth == outWidth && inHeight == outHeight
            && extentX == Double(inWidth) && extentY == Double(inHeight)
        boxX = copyOnly ? 1 : max(1, Int((extentX / (gap * Double(outWidth))).rounded(.down)))
        boxY = copyOnly ? 1 : max(1, Int((extentY / (gap * Double(outHeight))).rounded(.down)))
        boxWidth = (inWidth + boxX - 1) / boxX
        boxHeight = (inHeight + boxY - 1) / boxY
        vertical = FilterPlan.cached(inPixels: boxHeight, inExtent: extentY / Double(boxY), outPixels: outHeight)
        horizontal = FilterPlan.cached(inPixels: boxWidth, inExtent: extentX / Double(boxX), outPixels: outWidth)
        let boxRow = boxWidth * channels
        premultiplyRow = .allocate(capacity: hasAlpha && !copyOnly ? inWidth * channels : 1)
        boxSums = .allocate(capacity: boxX > 1 || boxY > 1 ? boxRow : 1)
        boxSums.initialize(repeating: 0, count: boxX > 1 || boxY > 1 ? boxRow : 1)
        ringRows = copyOnly ? 1 : vertical.maxTaps + 1
        ringStride = Lanczos3.floatRowCapacity(boxRow)
        ring = .allocate(capacity: ringRows * ringStride)
        boxRowBytes = .allocate(capacity: boxX > 1 || boxY > 1 ? boxRow : 1)
        floatRow = .allocate(capacity: Lanczos3.floatRowCapacity(copyOnly ? 1 : boxRow))
        output = [UInt8](repeating: 0, count: outWidth * outHeight * channels)
    }

    deinit {
        premultiplyRow.deallocate()
        boxSums.deallocate()
        ring.deallocate()
        boxRowBytes.deallocate()
        floatRow.deallocate()
    }

    /// Pushes the next input row (`inWidth * channels` bytes).
    func push(_ row: UnsafePointer<UInt8>) {
        precondition(rowsIn < inHeight, "more rows than announced")
        rowsIn += 1
        if copyOnly {
            let rowBytes = inWidth * channels
            output.withUnsafeMutableBufferPointer { out in
                (out.baseAddress! + (rowsIn - 1) * rowBytes).update(from: row, count: rowBytes)
            }
            rowsOut += 1
            return
        }
        var source = row
        if hasAlpha {
            Premultiply.row(row, into: premultiplyRow, pixels: inWidth, channels: channels)
            source = UnsafePointer(premultiplyRow)
        }
        if boxX == 1 && boxY == 1 {
            Lanczos3.widen(source, count: boxWidth * channels, into: ring + (ringFilled % ringRows) * ringStride)
            ringFilled += 1
            drainOutputRows()
            return
        }
        BoxShrink.accumulate(source, into: boxSums, inWidth: inWidth, boxX: boxX, boxWidth: boxWidth,
                             channels: channels)
        boxRowsPending += 1
        if boxRowsPending == boxY || rowsIn == inHeight {
            emitBoxRow()
        }
    }

    /// Returns the resized image; every announced row must have been pushed.
    func finish() -> PixelImage {
        precondition(rowsIn == inHeight && rowsOut == outHeight, "stream finished early")
        return PixelImage(width: outWidth, height: outHeight, channels: channels, hasAlpha: hasAlpha,
                          premultiplied: hasAlpha && !copyOnly, pixels: output)
    }

    private func emitBoxRow() {
        BoxShrink.average(boxSums, into: boxRowBytes, inWidth: inWidth, boxX: boxX, boxWidth: boxWidth,
                          rows: boxRowsPending, channels: channels)
        Lanczos3.widen(boxRowBytes, count: boxWidth * channels, into: ring + (ringFilled % ringRows) * ringStride)
        boxSums.update(repeating: 0, count: boxWidth * channels)
        boxRowsPending = 0
        ringFilled += 1
        drainOutputRows()
    }

    /// Produces every output row whose vertical window is now complete.
    private func drainOutputRows() {
        while rowsOut < outHeight,
              vertical.starts[rowsOut] + vertical.counts[rowsOut] <= ringFilled {
            let y = rowsOut
            let rowBytes = boxWidth * channels
            let first = vertical.starts[y], count = vertical.counts[y]
            var rows = [UnsafePointer<Float>]()
            rows.reserveCapacity(count)
            for i in 0..<count {
                rows.append(UnsafePointer(ring + ((first + i) % ringRows) * ringStride))
            }
            let outRow = y * outWidth * channels
            // One vertical tap: the ring row itself (its padding is the horizontal pass's to write).
            let filtered = vertical.isIdentity ? UnsafeMutablePointer(mutating: rows[0]) : floatRow
            if !vertical.isIdentity {
                vertical.weights.withUnsafeBufferPointer { w in
                    Lanczos3.vertical(rows: rows, weights: w.baseAddress! + y * vertical.maxTaps, count: rowBytes,
                                      into: floatRow)
                }
            }
            output.withUnsafeMutableBufferPointer { out in
                let dst = out.baseAddress! + outRow
                if horizontal.isIdentity {
                    Lanczos3.narrow(filtered, count: rowBytes, into: dst)
                } else {
                    Lanczos3.horizontal(filtered, into: dst, plan: horizontal, channels: channels)
                }
            }
            rowsOut += 1
        }
    }
}
