#if canImport(Glibc)
import Glibc
#endif

/// Parse's date format: ISO 8601 UTC with exactly three fractional digits, `yyyy-MM-ddTHH:mm:ss.SSSZ`.
///
/// Stored internally as whole milliseconds since the Unix epoch, so ordering and keyset
/// cursors compare integers. - Source: parse-rest-api.md §1 ("Dates").
public struct ParseDate: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var millisecondsSince1970: Int64

    public init(millisecondsSince1970: Int64) { self.millisecondsSince1970 = millisecondsSince1970 }

    /// The current wall-clock time, truncated to milliseconds.
    public static func now() -> ParseDate {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return ParseDate(millisecondsSince1970: Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000)
    }

    public static func < (a: ParseDate, b: ParseDate) -> Bool { a.millisecondsSince1970 < b.millisecondsSince1970 }

    /// `2016-03-11T23:51:48.050Z`.
    public var iso: String {
        String(unsafeUninitializedCapacity: 24) { buf in
            writeISO(to: buf.baseAddress!)
            return 24
        }
    }

    /// Appends the date as a JSON string, `"2016-03-11T23:51:48.050Z"` (26 bytes; nothing in it needs
    /// escaping), straight into `out`: no `String` on the way.
    public func writeJSONString(into out: inout [UInt8]) {
        let start = out.count
        out.append(contentsOf: repeatElement(UInt8(ascii: "\""), count: 26))
        out.withUnsafeMutableBufferPointer { writeISO(to: $0.baseAddress! + start + 1) }
    }

    /// `writeJSONString(into:)` for a `ByteWriter`.
    public func writeJSONString(into out: inout ByteWriter) {
        out.write(upTo: 26) { p in
            p[0] = UInt8(ascii: "\"")
            writeISO(to: p + 1)
            p[25] = UInt8(ascii: "\"")
            return 26
        }
    }

    /// Writes the 24 bytes of `iso` at `p`. Civil date from days since the epoch (Howard Hinnant's
    /// `civil_from_days`, the inverse of the one `init?(iso:)` uses): no `gmtime_r`, whose time-zone
    /// lock the request threads would contend for.
    private func writeISO(to p: UnsafeMutablePointer<UInt8>) {
        let ms = millisecondsSince1970
        let totalSeconds = ms >= 0 ? ms / 1000 : (ms - 999) / 1000
        let milli = Int(ms - totalSeconds * 1000)
        let days = totalSeconds >= 0 ? totalSeconds / 86400 : (totalSeconds - 86399) / 86400
        let secondOfDay = Int(totalSeconds - days * 86400)
        let (year, month, day) = Self.civil(fromDays: Int(days))
        // Two digits per table load (`digitPairs`), not a division per digit.
        func pair(_ v: Int, at k: Int) {
            let d = Self.digitPairs.utf8Start + 2 * v
            p[k] = d[0]; p[k + 1] = d[1]
        }
        // The year's last four digits: the form has four, and the table needs indices in 0...99 (a year
        // below 0, which no ISO text here parses to, trapped in the old digit loop).
        let y = (year % 10000 + 10000) % 10000
        pair(y / 100, at: 0); pair(y % 100, at: 2); p[4] = 45
        pair(month, at: 5); p[7] = 45
        pair(day, at: 8); p[10] = 84
        pair(secondOfDay / 3600, at: 11); p[13] = 58
        pair(secondOfDay / 60 % 60, at: 14); p[16] = 58
        pair(secondOfDay % 60, at: 17); p[19] = 46
        p[20] = UInt8(48 + milli / 100); pair(milli % 100, at: 21); p[23] = 90
    }

    /// `00` to `99`, two bytes each (a literal: no lazy global's check per use).
    private static var digitPairs: StaticString {
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"
    }

    /// Proleptic Gregorian date of a day count since 1970-01-01 (H. Hinnant's `civil_from_days`).
    public static func civil(fromDays z0: Int) -> (year: Int, month: Int, day: Int) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    public var description: String { iso }

    /// `{"__type":"Date","iso":"…"}`.
    public var json: JSON { ["__type": "Date", "iso": .string(iso)] }

    /// Parses `yyyy-MM-ddTHH:mm:ss[.fraction](Z|±hh:mm)`; returns nil when the text is not such a date.
    public init?(iso text: String) {
        let b = Array(text.utf8)
        guard b.count >= 20 else { return nil }
        func num(_ r: Range<Int>) -> Int? {
            var v = 0
            for i in r {
                guard i < b.count, b[i] >= 48, b[i] <= 57 else { return nil }
                v = v * 10 + Int(b[i] - 48)
            }
            return v
        }
        guard let year = num(0..<4), b[4] == 45, let mon = num(5..<7), b[7] == 45, let day = num(8..<10),
              b[10] == 84 || b[10] == 116 || b[10] == 32, let hour = num(11..<13), b[13] == 58,
              let minute = num(14..<16), b[16] == 58, let sec = num(17..<19),
              (1...12).contains(mon), (1...31).contains(day), hour < 24, minute < 60, sec < 61
        else { return nil }
        var i = 19
        var ms = 0
        if i < b.count, b[i] == 46 {
            i += 1
            var digits = 0
            while i < b.count, b[i] >= 48, b[i] <= 57 {
                if digits < 3 { ms = ms * 10 + Int(b[i] - 48) }
                digits += 1; i += 1
            }
            guard digits > 0 else { return nil }
            if digits < 3 { for _ in digits..<3 { ms *= 10 } }
        }
        var offset = 0
        guard i < b.count else { return nil }
        if b[i] == 90 || b[i] == 122 {
            i += 1
        } else if b[i] == 43 || b[i] == 45, b.count >= i + 6, let oh = num(i + 1..<i + 3),
                  b[i + 3] == 58, let om = num(i + 4..<i + 6) {
            offset = (oh * 60 + om) * 60 * (b[i] == 43 ? 1 : -1)
            i += 6
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        // Days from civil (Howard Hinnant's algorithm).
        let y = mon <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (mon + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146097 + doe - 719468
        let seconds = Int64(days) * 86400 + Int64(hour * 3600 + minute * 60 + sec) - Int64(offset)
        self.millisecondsSince1970 = seconds * 1000 + Int64(ms)
    }

    /// Accepts an ISO string or a `{"__type":"Date","iso":…}` object.
    public init?(json: JSON) {
        if let s = json.stringValue { self.init(iso: s); return }
        if json.parseType == "Date", let s = json["iso"]?.stringValue { self.init(iso: s); return }
        return nil
    }
}
