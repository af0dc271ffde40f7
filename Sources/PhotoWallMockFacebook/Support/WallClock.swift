#if canImport(Glibc)
import Glibc
#endif
import PhotoWallCore

/// Wall-clock time in whole Unix seconds, and the date format Graph uses in token-expiry messages.
enum WallClock {
    /// Seconds since 1970-01-01T00:00:00Z (`CLOCK_REALTIME`).
    static func now() -> Int {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int(ts.tv_sec)
    }

    private static let weekdays = ["Thursday", "Friday", "Saturday", "Sunday", "Monday", "Tuesday", "Wednesday"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// `Sunday, 25-Dec-16 04:45:57 UTC`: the shape of Graph's "Session has expired on …" message
    /// (Graph prints Pacific time; the mock prints UTC).
    static func graphDate(_ unixSeconds: Int) -> String {
        let days = unixSeconds >= 0 ? unixSeconds / 86_400 : (unixSeconds - 86_399) / 86_400
        let secondsOfDay = unixSeconds - days * 86_400
        let (year, month, day) = ParseDate.civil(fromDays: days)
        let weekday = weekdays[((days % 7) + 7) % 7]
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(weekday), \(two(day))-\(months[month - 1])-\(two(((year % 100) + 100) % 100)) "
            + "\(two(secondsOfDay / 3600)):\(two(secondsOfDay / 60 % 60)):\(two(secondsOfDay % 60)) UTC"
    }
}
