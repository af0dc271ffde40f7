import PhotoWallCore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// What `photowall upload` shows while it works, shared by the upload threads.
///
/// - `.bar` (stdout is a terminal): one redrawn line per file — name, bar, bytes, percent,
///   rate, ETA — repainted at most 10 times a second.
/// - `.plain` (stdout is a pipe or file): a progress line per file at most once a second, and
///   a result line per file.
/// - `.json` (`--json`): one JSON object per line (NDJSON) per event: `start`, `created`,
///   `resumed`, `retry`, `progress`, `uploaded`, `done`, `error`.
final class UploadDisplay: Sendable {
    enum Mode: Sendable { case bar, plain, json }

    struct Line: Sendable {
        var name: String
        var total: Int64 = 0
        var sent: Int64 = 0
        /// Bytes already on the server when this run began (not counted in the rate).
        var startSent: Int64 = 0
        var started: ContinuousClock.Instant?
        var lastPlain: ContinuousClock.Instant?
        var note = "waiting"
        var active = false
    }

    struct State: Sendable {
        var lines: [Line]
        var drawn = 0
        var lastDraw: ContinuousClock.Instant?
    }

    let mode: Mode
    private let state: Mutex<State>

    init(mode: Mode, names: [String]) {
        self.mode = mode
        state = Mutex(State(lines: names.map { Line(name: $0) }))
    }

    // MARK: events

    func start(_ i: Int, path: String, total: Int64) {
        state.withLock { s in
            s.lines[i].total = total
            s.lines[i].started = .now
            s.lines[i].active = true
            s.lines[i].note = ""
            emit(&s, i, ["event": "start", "file": .string(path), "totalBytes": .number(Double(total))], force: true)
        }
    }

    func resumed(_ i: Int, path: String, offset: Int64) {
        state.withLock { s in
            s.lines[i].startSent = offset
            s.lines[i].sent = offset
            s.lines[i].started = .now
            emit(&s, i, ["event": "resumed", "file": .string(path), "offset": .number(Double(offset))], force: true)
            if mode == .plain { write("\(s.lines[i].name): resuming at \(Self.bytes(offset)) of \(Self.bytes(s.lines[i].total))\n") }
        }
    }

    func event(_ i: Int, _ fields: [String: JSON]) {
        state.withLock { s in emit(&s, i, .object(fields), force: false) }
    }

    func progress(_ i: Int, path: String, sent: Int64, total: Int64) {
        state.withLock { s in
            s.lines[i].sent = sent
            s.lines[i].total = total
            switch mode {
            case .json:
                write(JSON.object(["event": "progress", "file": .string(path), "sentBytes": .number(Double(sent)),
                                   "totalBytes": .number(Double(total))]).text + "\n")
            case .plain:
                let now = ContinuousClock.now
                if sent < total, let last = s.lines[i].lastPlain, now - last < .seconds(1) { return }
                s.lines[i].lastPlain = now
                write("\(s.lines[i].name): \(Self.describe(s.lines[i]))\n")
            case .bar:
                redraw(&s, force: sent == total)
            }
        }
    }

    /// A step after the bytes: `note` shows on the bar (e.g. "saving WallImage").
    func note(_ i: Int, _ note: String) {
        state.withLock { s in
            s.lines[i].note = note
            if mode == .bar { redraw(&s, force: true) }
        }
    }

    func finished(_ i: Int, json: [String: JSON], summary: String) {
        state.withLock { s in
            s.lines[i].note = summary
            s.lines[i].active = false
            switch mode {
            case .json: write(JSON.object(json).text + "\n")
            case .plain: write("\(s.lines[i].name): \(summary)\n")
            case .bar: redraw(&s, force: true)
            }
        }
    }

    func failed(_ i: Int, path: String, code: String, exitCode: Int32, message: String) {
        state.withLock { s in
            s.lines[i].note = "failed: \(message)"
            s.lines[i].active = false
            switch mode {
            case .json:
                write(JSON.object(["event": "error", "file": .string(path), "code": .string(code),
                                   "exitCode": .number(Double(exitCode)), "message": .string(message)]).text + "\n")
            case .plain: break
            case .bar: redraw(&s, force: true)
            }
        }
    }

    // MARK: output

    private func emit(_ s: inout State, _ i: Int, _ json: JSON, force: Bool) {
        switch mode {
        case .json: write(json.text + "\n")
        case .bar: redraw(&s, force: force)
        case .plain: break
        }
    }

    private func write(_ text: String) { Terminal.write(text, to: 1) }

    /// Repaints every line in place (cursor up, clear line), at most every 100 ms unless forced.
    private func redraw(_ s: inout State, force: Bool) {
        let now = ContinuousClock.now
        if !force, let last = s.lastDraw, now - last < .milliseconds(100) { return }
        s.lastDraw = now
        let width = max(40, Self.terminalColumns() - 1)
        var out = s.drawn > 0 ? "\u{1B}[\(s.drawn)A" : ""
        for line in s.lines {
            out += "\r\u{1B}[2K" + Self.render(line, width: width) + "\n"
        }
        s.drawn = s.lines.count
        write(out)
    }

    static func render(_ l: Line, width: Int) -> String {
        let nameWidth = min(24, max(8, width / 4))
        var name = l.name
        if name.count > nameWidth { name = String(name.prefix(nameWidth - 1)) + "…" }
        name += String(repeating: " ", count: max(0, nameWidth - name.count))
        if !l.active && l.started == nil { return name + "  " + l.note }
        let fraction = l.total > 0 ? Double(l.sent) / Double(l.total) : (l.active ? 0 : 1)
        let barWidth = 20
        let filled = min(barWidth, Int(fraction * Double(barWidth)))
        let bar = "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: barWidth - filled) + "]"
        var text = "\(name)  \(bar)  \(describe(l))"
        if !l.note.isEmpty { text += "  " + l.note }
        return text.count > width ? String(text.prefix(width)) : text
    }

    /// `12.0 MiB / 20.0 MiB  60%  8.1 MiB/s  ETA 0:01`
    static func describe(_ l: Line) -> String {
        let percent = l.total > 0 ? Int(Double(l.sent) * 100 / Double(l.total)) : 100
        var text = "\(bytes(l.sent)) / \(bytes(l.total))  \(percent)%"
        if let started = l.started, l.sent < l.total {
            let c = (ContinuousClock.now - started).components
            let elapsed = Double(c.seconds) + Double(c.attoseconds) / 1e18
            let rate = elapsed > 0.2 ? Double(l.sent - l.startSent) / elapsed : 0
            if rate > 0 {
                text += "  \(bytes(Int64(rate)))/s  ETA \(duration(Double(l.total - l.sent) / rate))"
            }
        }
        return text
    }

    static func bytes(_ n: Int64) -> String {
        let v = Double(n), k = 1024.0
        if v >= k * k * k { return format(v / (k * k * k)) + " GiB" }
        if v >= k * k { return format(v / (k * k)) + " MiB" }
        if v >= k { return format(v / k) + " KiB" }
        return "\(n) B"
    }

    static func format(_ v: Double) -> String {
        let tenths = Int((v * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }

    static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds < 360_000 else { return "--:--" }
        let s = Int(seconds.rounded(.up))
        return s >= 3600 ? "\(s / 3600):\(pad(s / 60 % 60)):\(pad(s % 60))" : "\(s / 60):\(pad(s % 60))"
    }

    static func pad(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }

    static func terminalColumns() -> Int {
        var size = winsize()
        if ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        if let c = getenv("COLUMNS").flatMap({ Int(String(cString: $0)) }), c > 0 { return c }
        return 80
    }
}
