internal import CSQLite

/// Compiled-pattern cache for one connection's `regexp()` function. Used only on the thread that
/// owns the connection (SQLite calls functions on the calling thread).
final class RegexpCache {
    var patterns: [String: Regex<AnyRegexOutput>] = [:]

    func regex(_ pattern: String) -> Regex<AnyRegexOutput>? {
        if let r = patterns[pattern] { return r }
        guard let r = try? Regex(pattern) else { return nil }
        if patterns.count > 256 { patterns.removeAll() }
        patterns[pattern] = r
        return r
    }
}

/// `regexp(pattern, value)`: 1 when `value` (text) contains a match of `pattern`, else 0.
/// Called by SQLite on the connection's thread; `sqlite3_user_data` is the connection's
/// `RegexpCache`, unretained (the connection owns it and outlives every statement).
func photowallRegexpFunction(_ ctx: OpaquePointer?, _ argc: Int32, _ argv: UnsafeMutablePointer<OpaquePointer?>?) {
    guard let ctx, let argv, argc == 2,
          let p = sqlite3_value_text(argv[0]), let v = sqlite3_value_text(argv[1]),
          let box = sqlite3_user_data(ctx) else {
        sqlite3_result_int(ctx, 0)
        return
    }
    let cache = Unmanaged<RegexpCache>.fromOpaque(box).takeUnretainedValue()
    let pattern = String(cString: p)
    let value = String(cString: v)
    guard let re = cache.regex(pattern) else { sqlite3_result_int(ctx, 0); return }
    sqlite3_result_int(ctx, (try? re.firstMatch(in: value)) != nil ? 1 : 0)
}

extension SQLiteConnection {
    /// Registers `regexp(pattern, value)` (Swift `Regex` syntax; inline flags such as `(?i)`).
    func registerRegexp(cache: RegexpCache) {
        sqlite3_create_function_v2(rawHandle, "regexp", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC,
                                   Unmanaged.passUnretained(cache).toOpaque(),
                                   photowallRegexpFunction, nil, nil, nil)
    }
}
