#if canImport(Glibc)
import Glibc
#endif

/// A synthetic photo for the demo wall: one of six subjects, at one of four times of day, in one of
/// four seasons, as a landscape (3:2), portrait (2:3) or square frame. `photowall samples --scenes N`
/// renders N of them so that a demo wall looks like photos of different things, not one test pattern.
///
/// Deterministic: the same `seed` gives the same pixels on every platform (a 64-bit LCG, no `random()`).
struct SampleScene {
    enum Subject: String, CaseIterable { case mountains, sea, city, forest, meadow, lake }
    enum TimeOfDay: String, CaseIterable { case dawn, noon, sunset, night }
    enum Season: String, CaseIterable { case spring, summer, autumn, winter }
    enum Frame: String, CaseIterable { case landscape, portrait, square }

    var subject: Subject
    var time: TimeOfDay
    var season: Season
    var frame: Frame
    var seed: UInt64

    /// The `index`-th scene of a set: subjects, times, seasons and frames rotate at different
    /// rates, so any 12 consecutive scenes differ in subject, light and shape.
    init(index: Int, seed: UInt64) {
        subject = Subject.allCases[index % Subject.allCases.count]
        time = TimeOfDay.allCases[(index / 2 + index) % TimeOfDay.allCases.count]
        season = Season.allCases[(index / 3 + 2 * index) % Season.allCases.count]
        frame = Frame.allCases[(index / 6 + index) % Frame.allCases.count]
        self.seed = seed &+ UInt64(index) &* 0x9E37_79B9_7F4A_7C15
    }

    var name: String { "\(subject.rawValue)_\(time.rawValue)_\(season.rawValue)_\(frame.rawValue)" }

    /// Width and height for a frame whose longest edge is `longestEdge` pixels.
    func size(longestEdge: Int) -> (width: Int, height: Int) {
        switch frame {
        case .landscape: return (longestEdge, longestEdge * 2 / 3)
        case .portrait: return (longestEdge * 2 / 3, longestEdge)
        case .square: return (longestEdge, longestEdge)
        }
    }

    // MARK: rendering

    /// The upright picture as RGB bytes, `width * height * 3`.
    func render(width w: Int, height h: Int) -> [UInt8] {
        var canvas = Canvas(width: w, height: h, seed: seed)
        let horizon = subject == .sea || subject == .lake ? 0.55 : (frame == .portrait ? 0.62 : 0.58)
        canvas.sky(top: skyTop, bottom: skyHorizon, until: horizon)
        drawLight(&canvas, horizon: horizon)
        switch subject {
        case .mountains: drawMountains(&canvas, horizon: horizon)
        case .sea: drawWater(&canvas, horizon: horizon, beach: true)
        case .city: drawCity(&canvas, horizon: horizon)
        case .forest: drawForest(&canvas, horizon: horizon)
        case .meadow: drawMeadow(&canvas, horizon: horizon)
        case .lake: drawLake(&canvas, horizon: horizon)
        }
        if season == .winter && time != .night { canvas.snowfall(count: w * h / 900) }
        canvas.grain(amount: 8)
        return canvas.pixels
    }

    typealias RGB = (Double, Double, Double)

    var skyTop: RGB {
        switch time {
        case .dawn: return (90, 110, 175)
        case .noon: return season == .winter ? (120, 150, 200) : (50, 120, 225)
        case .sunset: return (70, 45, 115)
        case .night: return (4, 8, 28)
        }
    }

    var skyHorizon: RGB {
        switch time {
        case .dawn: return (250, 190, 160)
        case .noon: return season == .winter ? (215, 225, 235) : (175, 215, 250)
        case .sunset: return (255, 135, 60)
        case .night: return (28, 38, 78)
        }
    }

    /// How much daylight falls on the ground: 1 at noon.
    var light: Double {
        switch time {
        case .dawn: return 0.8
        case .noon: return 1
        case .sunset: return 0.7
        case .night: return 0.3
        }
    }

    var ground: RGB {
        switch season {
        case .spring: return (110, 175, 85)
        case .summer: return (70, 135, 50)
        case .autumn: return (175, 120, 45)
        case .winter: return (232, 238, 245)
        }
    }

    var foliage: [RGB] {
        switch season {
        case .spring: return [(120, 190, 90), (150, 205, 110), (235, 180, 200)]
        case .summer: return [(40, 110, 40), (60, 130, 50), (30, 95, 45)]
        case .autumn: return [(205, 95, 30), (225, 160, 40), (170, 60, 30)]
        case .winter: return [(40, 70, 55), (235, 240, 245), (55, 85, 70)]
        }
    }

    func lit(_ c: RGB, _ extra: Double = 1) -> RGB {
        let l = light * extra
        // Warm light at dawn and sunset, blue at night.
        switch time {
        case .dawn, .sunset: return (c.0 * l * 1.1, c.1 * l * 0.95, c.2 * l * 0.85)
        case .night: return (c.0 * l * 0.8, c.1 * l * 0.9, c.2 * l * 1.3)
        case .noon: return (c.0 * l, c.1 * l, c.2 * l)
        }
    }

    func drawLight(_ c: inout Canvas, horizon: Double) {
        let w = Double(c.width), h = Double(c.height)
        let r = min(w, h) * (time == .night ? 0.05 : 0.07)
        switch time {
        case .dawn: c.disc(x: w * c.uniform(0.15, 0.35), y: h * horizon * 0.8, radius: r, color: (255, 220, 170), glow: 3)
        case .noon: c.disc(x: w * c.uniform(0.3, 0.8), y: h * 0.15, radius: r, color: (255, 250, 225), glow: 2.5)
        case .sunset: c.disc(x: w * c.uniform(0.6, 0.85), y: h * horizon * 0.85, radius: r * 1.3, color: (255, 170, 80), glow: 4)
        case .night:
            c.stars(count: c.width * c.height / 700, until: horizon)
            c.disc(x: w * c.uniform(0.6, 0.85), y: h * 0.18, radius: r, color: (235, 235, 215), glow: 2)
        }
    }

    func drawMountains(_ c: inout Canvas, horizon: Double) {
        c.ground(from: horizon, color: lit(ground), darkening: 0.25)
        let layers: [(Double, RGB)] = [(0.30, (120, 130, 160)), (0.40, (85, 95, 120)), (0.5, (60, 70, 85))]
        for (n, (peak, color)) in layers.enumerated() {
            let phase = c.uniform(0, 6), freq = c.uniform(2.5, 5)
            let snow = season == .winter || n == 0
            c.ridge(base: horizon + 0.02 * Double(n), height: horizon - peak, phase: phase, frequency: freq,
                    color: lit(color), snowCap: snow ? lit((245, 245, 250)) : nil)
        }
    }

    func drawWater(_ c: inout Canvas, horizon: Double, beach: Bool) {
        let sea: RGB = time == .night ? (10, 20, 50) : (skyHorizon.0 * 0.4, skyHorizon.1 * 0.6, skyHorizon.2 * 0.8)
        c.ground(from: horizon, color: sea, darkening: 0.45)
        c.waves(from: horizon, color: lit((255, 255, 255), 0.6))
        if beach { c.ground(from: 0.86, color: lit(season == .winter ? (225, 225, 230) : (225, 200, 150)), darkening: 0.1) }
    }

    func drawCity(_ c: inout Canvas, horizon: Double) {
        c.ground(from: horizon + 0.25, color: lit((90, 90, 95)), darkening: 0.2)
        let windows = time == .night || time == .sunset || time == .dawn
        var x = 0.0
        while x < 1 {
            let bw = c.uniform(0.05, 0.12), top = c.uniform(0.2, horizon)
            let shade = c.uniform(0.5, 0.9)
            c.building(x0: x, x1: x + bw, top: top, bottom: horizon + 0.25, color: lit((120 * shade, 125 * shade, 140 * shade)),
                       windows: windows ? (255, 215, 120) : lit((180, 200, 220), 0.8))
            x += bw + c.uniform(0, 0.02)
        }
    }

    func drawForest(_ c: inout Canvas, horizon: Double) {
        c.ground(from: horizon, color: lit(ground), darkening: 0.3)
        let count = 24 + c.width / 40
        for i in 0..<count {
            let depth = Double(i) / Double(count)             // far trees first
            let base = horizon + 0.02 + depth * (0.98 - horizon)
            let height = 0.12 + depth * 0.3
            let color = foliage[Int(c.uniform(0, Double(foliage.count))) % foliage.count]
            c.tree(x: c.uniform(0, 1), base: base, height: height, color: lit(color, 0.6 + 0.4 * depth), trunk: lit((90, 60, 35)))
        }
    }

    func drawMeadow(_ c: inout Canvas, horizon: Double) {
        c.ground(from: horizon, color: lit(ground), darkening: 0.2)
        c.ridge(base: horizon + 0.05, height: 0.08, phase: c.uniform(0, 6), frequency: 1.5, color: lit(ground, 0.85), snowCap: nil)
        let blooms: [RGB] = season == .winter ? [(250, 250, 255)] : season == .autumn ? foliage : [(240, 70, 80), (250, 220, 60), (245, 245, 250), (170, 90, 220)]
        c.dots(count: c.width * c.height / 260, from: horizon + 0.08, colors: blooms.map { lit($0) })
    }

    func drawLake(_ c: inout Canvas, horizon: Double) {
        drawWater(&c, horizon: horizon, beach: false)
        c.ridge(base: horizon, height: 0.12, phase: c.uniform(0, 6), frequency: 3, color: lit((50, 80, 60)), snowCap: nil)
        c.ground(from: 0.8, color: lit(ground, 0.8), darkening: 0.2)
        for _ in 0..<5 {
            c.tree(x: c.uniform(0, 1), base: c.uniform(0.85, 0.98), height: c.uniform(0.2, 0.35),
                   color: lit(foliage[0], 0.8), trunk: lit((90, 60, 35)))
        }
    }
}

/// An RGB canvas with the few shapes the scenes need. Coordinates in fractions of the width and height.
struct Canvas {
    let width: Int
    let height: Int
    var pixels: [UInt8]
    var state: UInt64

    init(width: Int, height: Int, seed: UInt64) {
        self.width = width; self.height = height
        pixels = [UInt8](repeating: 0, count: width * height * 3)
        state = seed | 1
    }

    /// A uniform number in `lo..<hi` from the canvas's LCG.
    mutating func uniform(_ lo: Double, _ hi: Double) -> Double {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return lo + (hi - lo) * Double(state >> 11) / Double(1 << 53)
    }

    mutating func set(_ x: Int, _ y: Int, _ c: SampleScene.RGB, alpha: Double = 1) {
        guard x >= 0, y >= 0, x < width, y < height else { return }
        let i = (y * width + x) * 3
        func mix(_ old: UInt8, _ new: Double) -> UInt8 { UInt8(max(0, min(255, Double(old) * (1 - alpha) + new * alpha))) }
        pixels[i] = mix(pixels[i], c.0); pixels[i + 1] = mix(pixels[i + 1], c.1); pixels[i + 2] = mix(pixels[i + 2], c.2)
    }

    mutating func sky(top: SampleScene.RGB, bottom: SampleScene.RGB, until horizon: Double) {
        for y in 0..<height {
            let t = min(1, Double(y) / (Double(height) * horizon))
            let c = (top.0 + (bottom.0 - top.0) * t, top.1 + (bottom.1 - top.1) * t, top.2 + (bottom.2 - top.2) * t)
            for x in 0..<width { set(x, y, c) }
        }
    }

    /// Fills from `from` (fraction of the height) down, darker towards the bottom by `darkening`.
    mutating func ground(from: Double, color: SampleScene.RGB, darkening: Double) {
        let y0 = Int(from * Double(height))
        for y in max(0, y0)..<height {
            let t = 1 - darkening * Double(y - y0) / Double(max(1, height - y0))
            for x in 0..<width { set(x, y, (color.0 * t, color.1 * t, color.2 * t)) }
        }
    }

    /// A sun or moon with a soft glow `glow` radii wide.
    mutating func disc(x cx: Double, y cy: Double, radius r: Double, color: SampleScene.RGB, glow: Double) {
        let reach = Int(r * glow)
        for y in Int(cy) - reach...Int(cy) + reach {
            for x in Int(cx) - reach...Int(cx) + reach {
                let d = ((Double(x) - cx) * (Double(x) - cx) + (Double(y) - cy) * (Double(y) - cy)).squareRoot()
                if d <= r { set(x, y, color) } else if d < r * glow { set(x, y, color, alpha: 0.35 * (1 - (d - r) / (r * glow - r))) }
            }
        }
    }

    /// A mountain or hill line: `height` above `base` at its peaks, filled down to `base`.
    mutating func ridge(base: Double, height ridge: Double, phase: Double, frequency: Double, color: SampleScene.RGB,
                        snowCap: SampleScene.RGB?) {
        let yBase = Double(height) * base
        for x in 0..<width {
            let fx = Double(x) / Double(width)
            let shape = 0.55 + 0.3 * sin(fx * frequency * 6.283 + phase) + 0.15 * sin(fx * frequency * 17 + phase * 2)
            let top = yBase - Double(height) * ridge * max(0.05, shape)
            for y in max(0, Int(top))..<min(height, Int(yBase) + 1) {
                let capped = snowCap != nil && Double(y) < top + Double(height) * ridge * 0.18 && shape > 0.6
                set(x, y, capped ? snowCap! : color)
            }
        }
    }

    mutating func waves(from horizon: Double, color: SampleScene.RGB) {
        let y0 = Int(horizon * Double(height))
        for _ in 0..<(width * height / 600) {
            let y = y0 + Int(uniform(0, Double(height - y0)))
            let x = Int(uniform(0, Double(width)))
            let len = 3 + Int(uniform(0, 12) * Double(y - y0) / Double(max(1, height - y0)))
            for dx in 0..<len { set(x + dx, y, color, alpha: 0.35) }
        }
    }

    mutating func building(x0: Double, x1: Double, top: Double, bottom: Double, color: SampleScene.RGB, windows: SampleScene.RGB) {
        let px0 = Int(x0 * Double(width)), px1 = Int(x1 * Double(width))
        let py0 = Int(top * Double(height)), py1 = Int(bottom * Double(height))
        let cell = max(4, width / 120)
        for y in max(0, py0)..<min(height, py1) {
            for x in max(0, px0)..<min(width, px1) {
                let wx = (x - px0) % (cell * 2), wy = (y - py0) % (cell * 2)
                let window = wx >= cell / 2 && wx < cell * 3 / 2 && wy >= cell / 2 && wy < cell * 3 / 2 && (x - px0) > cell && (px1 - x) > cell
                set(x, y, window && ((x / (cell * 2) + y / (cell * 2)) % 3 != 0) ? windows : color)
            }
        }
    }

    /// A conifer: a triangle of `height` (fraction of the canvas height) on a short trunk.
    mutating func tree(x: Double, base: Double, height treeHeight: Double, color: SampleScene.RGB, trunk: SampleScene.RGB) {
        let cx = x * Double(width), by = base * Double(height), th = treeHeight * Double(height)
        let halfWidth = th * 0.28
        for y in Int(by - th)..<Int(by) {
            let t = max(0, (Double(y) - (by - th)) / (th * 0.85))
            if t <= 1 {
                let half = halfWidth * t
                for px in Int(cx - half)...Int(cx + half) { set(px, y, color) }
            } else {
                for px in Int(cx - th * 0.03)...Int(cx + th * 0.03) { set(px, y, trunk) }
            }
        }
    }

    mutating func dots(count: Int, from: Double, colors: [SampleScene.RGB]) {
        let y0 = from * Double(height)
        for _ in 0..<count {
            let y = y0 + uniform(0, Double(height) - y0)
            let x = uniform(0, Double(width))
            let r = 1 + 3 * (y - y0) / max(1, Double(height) - y0)
            let c = colors[Int(uniform(0, Double(colors.count))) % colors.count]
            for dy in -Int(r)...Int(r) { for dx in -Int(r)...Int(r) where dx * dx + dy * dy <= Int(r * r) { set(Int(x) + dx, Int(y) + dy, c) } }
        }
    }

    mutating func stars(count: Int, until horizon: Double) {
        for _ in 0..<count {
            let b = uniform(150, 255)
            set(Int(uniform(0, Double(width))), Int(uniform(0, Double(height) * horizon * 0.9)), (b, b, b * 0.95))
        }
    }

    mutating func snowfall(count: Int) {
        for _ in 0..<count { set(Int(uniform(0, Double(width))), Int(uniform(0, Double(height))), (250, 250, 255), alpha: 0.7) }
    }

    /// Film-like grain, ±`amount`/2 per channel.
    mutating func grain(amount: Double) {
        for i in 0..<pixels.count {
            pixels[i] = UInt8(max(0, min(255, Double(pixels[i]) + uniform(-amount / 2, amount / 2))))
        }
    }
}
