import PhotoWallCore

/// Method + path pattern → `Target`, first match wins: the matcher behind the engine's `Router`, also
/// used by layers that route again inside a request (REST's `/batch` sub-requests and `_method`
/// overrides resolve on the same table as the request itself).
///
/// Patterns are `/`-separated literals, `:name` (one segment, captured) and a final `*name` (the rest of
/// the path, possibly empty). Method is upper-case, or `*` for any. `HEAD` tries its own routes, then
/// the `GET` route, and only then any-method ones (a catch-all must not shadow the GET route HEAD falls
/// back to).
public struct RouteTable<Target: Sendable>: Sendable {
    /// One pattern segment, classified once when the route is added (not on every request).
    enum Segment: Sendable {
        case literal(String)
        case parameter(String)
        case rest(String)
    }

    struct Entry: Sendable {
        var method: String
        var pattern: String
        var segments: [Segment]
        /// The pattern ends in `*name` (so it matches paths of `segments.count - 1` or more segments).
        var endsInRest: Bool
        var target: Target
    }

    /// A matched route: its target, its pattern as registered and the captured parameters.
    public struct Match: Sendable {
        public var target: Target
        public var pattern: String
        public var parameters: [String: String]

        public init(target: Target, pattern: String, parameters: [String: String]) {
            self.target = target; self.pattern = pattern; self.parameters = parameters
        }
    }

    var entries: [Entry] = []

    public init() {}

    public var isEmpty: Bool { entries.isEmpty }

    /// Adds a route. `method` is upper-case, or `*` for any method.
    public mutating func add(_ method: String, _ pattern: String, _ target: Target) {
        let segments: [Segment] = pathSegments(pattern).map { seg in
            if seg.hasPrefix("*") { return .rest(String(seg.dropFirst())) }
            if seg.hasPrefix(":") { return .parameter(String(seg.dropFirst())) }
            return .literal(String(seg))
        }
        var endsInRest = false
        if case .rest = segments.last { endsInRest = true }
        entries.append(Entry(method: method, pattern: pattern, segments: segments, endsInRest: endsInRest, target: target))
    }

    /// The first route for `method` whose pattern matches `path` (raw, as sent: captured segments are
    /// percent-decoded; empty segments are ignored).
    public func match(method: String, path: String) -> Match? {
        match(method: method, parts: pathSegments(path)) { percentDecode($0) }
    }

    /// The first route for `method` whose pattern matches `segments`, already percent-decoded (captured
    /// as they are, compared with the pattern's literals as they are).
    public func match(method: String, segments: [String]) -> Match? {
        match(method: method, parts: segments) { String($0) }
    }

    private func match<S: StringProtocol>(method: String, parts: [S], decode: (S) -> String) -> Match? {
        if method == "HEAD" {
            return first(parts, decode) { $0 == "HEAD" } ?? first(parts, decode) { $0 == "GET" } ?? first(parts, decode) { $0 == "*" }
        }
        return first(parts, decode) { $0 == method || $0 == "*" }
    }

    /// The first entry whose method `accepts` and whose pattern matches `parts` (in the order added).
    private func first<S: StringProtocol>(_ parts: [S], _ decode: (S) -> String, accepts: (String) -> Bool) -> Match? {
        for entry in entries where accepts(entry.method) {
            // Cheap rejection by segment count before comparing segments.
            guard entry.endsInRest ? parts.count >= entry.segments.count - 1 : parts.count == entry.segments.count else { continue }
            if let parameters = Self.match(entry.segments, parts, decode) {
                return Match(target: entry.target, pattern: entry.pattern, parameters: parameters)
            }
        }
        return nil
    }

    static func match<S: StringProtocol>(_ pattern: [Segment], _ parts: [S], _ decode: (S) -> String) -> [String: String]? {
        // Literals first: most candidates fail on one, before any parameter is decoded.
        for (i, seg) in pattern.enumerated() {
            guard case .literal(let literal) = seg else { continue }
            guard i < parts.count, parts[i] == literal else { return nil }
        }
        var params: [String: String] = [:]
        var i = 0
        for (pi, seg) in pattern.enumerated() {
            switch seg {
            case .rest(let name):
                params[name] = parts[min(i, parts.count)...].map(decode).joined(separator: "/")
                return pi == pattern.count - 1 ? params : nil
            case .parameter(let name):
                guard i < parts.count else { return nil }
                params[name] = decode(parts[i])
            case .literal:
                guard i < parts.count else { return nil }
            }
            i += 1
        }
        return i == parts.count ? params : nil
    }
}

/// The engine's routes: a `RouteTable` of plan makers. Built once, then handed to `HTTPServer`
/// (immutable after). See `RouteTable` for patterns and the order routes are tried in.
public struct Router: Sendable {
    public typealias PlanMaker = @Sendable (RequestHead) -> RoutePlan

    var table = RouteTable<PlanMaker>()
    var fallback: PlanMaker

    /// - Parameter fallback: the plan for paths no route matches (default: `HTTPError.notFound`, rendered
    ///   by the configuration's `errorRenderer`).
    public init(fallback: PlanMaker? = nil) {
        self.fallback = fallback ?? { _ in .refuse(HTTPError.notFound) }
    }

    /// Adds a route. `method` is upper-case, or `*` for any method.
    public mutating func add(_ method: String, _ pattern: String, _ make: @escaping PlanMaker) {
        table.add(method, pattern, make)
    }

    /// Finds the plan for `head`, filling `head.pathParameters` and `head.routePattern`.
    public func resolve(_ head: inout RequestHead) -> RoutePlan {
        guard !table.isEmpty, let match = table.match(method: head.method, path: head.path) else { return fallback(head) }
        head.pathParameters = match.parameters
        head.routePattern = match.pattern
        return match.target(head)
    }
}
