import PhotoWallCore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// What `photowall upload` shows while it works, shared by the upload threads.
///
/// - `.bar` (stdout is a terminal): one live line per file being uploaded — name, bar, bytes,
///   percent, rate, ETA, and a note such as a retry notice — repainted in place at most 10 times a
///   second, never wider than the terminal (the name column shrinks first, then the rate and the
///   bar go). A file that ends is printed once as a permanent line above the live ones, with its
///   WallImage id (or why it failed).
/// - `.plain` (stdout is a pipe or file): a progress line per file at most once a second, a line
///   per retry, and a result line per file.
/// - `.json` (`--json`): one JSON object per line (NDJSON) per event: `start`, `created`,
///   `resumed`, `retry`, `progress`, `uploaded`, `done`, `error`, `skipped`, and `summary` last.
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
        var note = ""
        var active = false
    }

    struct State: Sendable {
        var lines: [Line]
        /// Live lines on screen below the permanent ones (`.bar`).
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
            s.lines[i].note = ""
            emit(&s, i, ["event": "resumed", "file": .string(path), "offset": .number(Double(offset))], force: true)
            if mode == .plain { write("\(s.lines[i].name): resuming at \(Self.bytes(offset)) of \(Self.bytes(s.lines[i].total))\n") }
        }
    }

    func event(_ i: Int, _ fields: [String: JSON]) {
        state.withLock { s in emit(&s, i, .object(fields), force: false) }
    }

    /// A failed request about to be tried again: `notice` (e.g. "server unreachable, retrying in
    /// 8 s (attempt 3)") shows on the file's line until its bytes move again.
    func retrying(_ i: Int, notice: String, json: [String: JSON]) {
        state.withLock { s in
            s.lines[i].note = notice
            switch mode {
            case .json: write(JSON.object(json).text + "\n")
            case .plain: write("\(s.lines[i].name): \(notice)\n")
            case .bar: redraw(&s, force: true)
            }
        }
    }

    func progress(_ i: Int, path: String, sent: Int64, total: Int64) {
        state.withLock { s in
            if sent > s.lines[i].sent { s.lines[i].note = "" }  // moving again: the retry notice is over
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

    /// The file is done: `result` (e.g. "done: WallImage 8fK2a9QxZp") goes on its permanent line.
    func finished(_ i: Int, json: [String: JSON], result: String) {
        state.withLock { s in
            s.lines[i].active = false
            switch mode {
            case .json: write(JSON.object(json).text + "\n")
            case .plain: write("\(s.lines[i].name): \(result)\n")
            case .bar: printAbove(&s, Self.fit(name: s.lines[i].name, tails: [result], width: columns))
            }
        }
    }

    /// The file failed: `failure`'s message goes on its permanent line, or `short` (e.g. "server
    /// unreachable") when the whole message doesn't fit beside the name (stderr gets it in full).
    func failed(_ i: Int, path: String, failure: ClientFailure, short: String) {
        state.withLock { s in
            s.lines[i].active = false
            switch mode {
            case .json:
                write(JSON.object(["event": "error", "file": .string(path), "code": .string(failure.kind),
                                   "exitCode": .number(Double(failure.exitCode)), "message": .string(failure.message)]).text + "\n")
            case .plain: write("\(s.lines[i].name): failed: \(failure.message)\n")
            case .bar: printAbove(&s, Self.fit(name: s.lines[i].name, tails: ["failed: \(failure.message)", "failed: \(short)"], width: columns))
            }
        }
    }

    /// A file not uploaded (`name`, not one of the live lines): the first of `results` (most
    /// detailed first) that fits beside the name goes on its permanent line (`.plain`: the first;
    /// `.json`: the `json` event).
    func skipped(name: String, results: [String], json: [String: JSON]) {
        state.withLock { s in
            switch mode {
            case .json: write(JSON.object(json).text + "\n")
            case .plain: write("\(name): \(results.first ?? "")\n")
            case .bar: printAbove(&s, Self.fit(name: name, tails: results, width: columns))
            }
        }
    }

    /// The batch's last line (`.json`: the `summary` event).
    func summary(_ text: String, json: [String: JSON]) {
        state.withLock { s in
            switch mode {
            case .json: write(JSON.object(json).text + "\n")
            case .plain: write(text + "\n")
            case .bar: printAbove(&s, Self.truncate(text, to: columns))
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

    /// Usable columns: one less than the terminal's, so a full line never wraps.
    private var columns: Int { max(20, Self.terminalColumns() - 1) }

    /// The live lines (files being uploaded), one per line.
    private func live(_ s: State) -> String {
        let width = columns
        return s.lines.filter(\.active).map { Self.render($0, width: width) + "\n" }.joined()
    }

    /// Moves to the first live line and clears from there to the end of the screen.
    private func eraseLive(_ s: State) -> String {
        (s.drawn > 0 ? "\r\u{1B}[\(s.drawn)A" : "\r") + "\u{1B}[J"
    }

    /// `text` as a permanent line, then the live lines again below it.
    private func printAbove(_ s: inout State, _ text: String) {
        let out = eraseLive(s) + text + "\n" + live(s)
        s.drawn = s.lines.filter(\.active).count
        s.lastDraw = .now
        write(out)
    }

    /// Repaints the live lines in place, at most every 100 ms unless forced.
    private func redraw(_ s: inout State, force: Bool) {
        let now = ContinuousClock.now
        if !force, let last = s.lastDraw, now - last < .milliseconds(100) { return }
        s.lastDraw = now
        let out = eraseLive(s) + live(s)
        s.drawn = s.lines.filter(\.active).count
        write(out)
    }

    // MARK: layout

    /// One live line in at most `width` columns: `name  [####----]  12.0 MiB / 20.0 MiB  60%  8.1 MiB/s  ETA 0:01  note`.
    /// The name shrinks first (to 12 columns), then the rate, the bar and the byte counts go; the note stays.
    static func render(_ l: Line, width: Int) -> String {
        let percent = l.total > 0 ? Int(Double(l.sent) * 100 / Double(l.total)) : 100
        let counts = "\(bytes(l.sent)) / \(bytes(l.total))  \(percent)%"
        let rate = rateAndETA(l)
        let fraction = l.total > 0 ? Double(l.sent) / Double(l.total) : 0
        func bar(_ n: Int) -> String {
            let filled = min(n, Int(fraction * Double(n)))
            return "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: n - filled) + "]"
        }
        let note = l.note.isEmpty ? "" : "  " + l.note
        var tails = [bar(20) + "  " + counts + (rate.map { "  " + $0 } ?? "") + note]
        if rate != nil { tails.append(bar(20) + "  " + counts + note) }
        tails += [bar(10) + "  " + counts + note, counts + note, "\(percent)%" + note]
        return fit(name: l.name, tails: tails, width: width)
    }

    /// `name  tail` in at most `width` columns: the first of `tails` (most detailed first) that fits
    /// beside the name shortened to no less than 12 columns; else the last tail with the name cut
    /// further, and the line cut at `width` as the last resort.
    static func fit(name: String, tails: [String], width: Int, minimumName: Int = 12) -> String {
        let nameWidth = displayWidth(name)
        for tail in tails {
            let room = width - displayWidth(tail) - 2
            if room >= min(nameWidth, minimumName) {
                return shorten(name, to: min(nameWidth, room)) + "  " + tail
            }
        }
        let tail = tails.last ?? ""
        let room = max(1, width - displayWidth(tail) - 2)
        return truncate(shorten(name, to: room) + "  " + tail, to: width)
    }

    /// `name` in at most `columns` columns, cut in the middle so that the extension stays (`IMG_2024…0042.jpg`).
    static func shorten(_ name: String, to columns: Int) -> String {
        guard displayWidth(name) > columns else { return name }
        guard columns > 1 else { return columns == 1 ? "…" : "" }
        let keepEnd = min(8, (columns - 1) / 2)
        let end = truncateFromStart(name, to: keepEnd)
        return truncate(name, to: columns - 1 - displayWidth(end), ellipsis: false) + "…" + end
    }

    /// `text` cut to `columns` columns (ending in `…` when cut).
    static func truncate(_ text: String, to columns: Int, ellipsis: Bool = true) -> String {
        guard displayWidth(text) > columns else { return text }
        let limit = ellipsis ? columns - 1 : columns
        var out = "", used = 0
        for ch in text {
            let w = displayWidth(ch)
            if used + w > limit { break }
            out.append(ch); used += w
        }
        return ellipsis ? out + "…" : out
    }

    static func truncateFromStart(_ text: String, to columns: Int) -> String {
        var out: [Character] = [], used = 0
        for ch in text.reversed() {
            let w = displayWidth(ch)
            if used + w > columns { break }
            out.append(ch); used += w
        }
        return String(out.reversed())
    }

    /// Terminal columns `text` takes: 2 for East Asian wide and emoji characters, 0 for combining marks, else 1.
    static func displayWidth(_ text: String) -> Int { text.reduce(0) { $0 + displayWidth($1) } }

    static func displayWidth(_ ch: Character) -> Int {
        guard let v = ch.unicodeScalars.first?.value else { return 0 }
        if v < 0x20 || (0x300...0x36F).contains(v) { return 0 }
        let wide: [ClosedRange<UInt32>] = [0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
                                           0xA000...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60,
                                           0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x3FFFD]
        return wide.contains { $0.contains(v) } ? 2 : 1
    }

    /// `12.0 MiB / 20.0 MiB  60%  8.1 MiB/s  ETA 0:01` (the plain lines).
    static func describe(_ l: Line) -> String {
        let percent = l.total > 0 ? Int(Double(l.sent) * 100 / Double(l.total)) : 100
        return "\(bytes(l.sent)) / \(bytes(l.total))  \(percent)%" + (rateAndETA(l).map { "  " + $0 } ?? "")
    }

    /// `8.1 MiB/s  ETA 0:01`, once the rate is known and while bytes remain.
    static func rateAndETA(_ l: Line) -> String? {
        guard let started = l.started, l.sent < l.total else { return nil }
        let elapsed = (ContinuousClock.now - started).inSeconds
        let rate = elapsed > 0.2 ? Double(l.sent - l.startSent) / elapsed : 0
        guard rate > 0 else { return nil }
        return "\(bytes(Int64(rate)))/s  ETA \(duration(Double(l.total - l.sent) / rate))"
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
