import PhotoWallCore

/// Maps a method and path to a `RoutePlan`. Built once, then handed to `HTTPServer` (immutable after).
///
/// Patterns are `/`-separated literals, `:name` (one segment, percent-decoded into
/// `RequestHead.pathParameters`) and a final `*name` (the rest of the path, possibly empty).
/// Routes are tried in the order added; the first match wins. `HEAD` tries its own routes, then
/// falls back to the `GET` route (the engine drops the body), then to any-method (`*`) routes.
public struct Router: Sendable {
    public typealias PlanMaker = @Sendable (RequestHead) -> RoutePlan

    struct Route: Sendable {
        var method: String
        var segments: [Substring]
        var make: PlanMaker
    }

    var routes: [Route] = []
    var fallback: PlanMaker

    /// - Parameter fallback: the plan for paths no route matches (default: `HTTPError.notFound`, rendered
    ///   by the configuration's `errorRenderer`).
    public init(fallback: PlanMaker? = nil) {
        self.fallback = fallback ?? { _ in .refuse(HTTPError.notFound) }
    }

    /// Adds a route. `method` is upper-case, or `*` for any method.
    public mutating func add(_ method: String, _ pattern: String, _ make: @escaping PlanMaker) {
        routes.append(Route(method: method, segments: pattern.split(separator: "/", omittingEmptySubsequences: true), make: make))
    }

    /// Finds the plan for `head`, filling `head.pathParameters`.
    public func resolve(_ head: inout RequestHead) -> RoutePlan {
        if routes.isEmpty { return fallback(head) }
        let parts = head.path.split(separator: "/", omittingEmptySubsequences: true)
        // HEAD: its own routes, then GET's, and only then the any-method ones (a catch-all must not
        // shadow the GET route HEAD falls back to).
        let tiers: [[String]] = head.method == "HEAD" ? [["HEAD"], ["GET"], ["*"]] : [[head.method, "*"]]
        for methods in tiers {
            for route in routes where methods.contains(route.method) {
                if let params = Router.match(route.segments, parts) {
                    head.pathParameters = params
                    return route.make(head)
                }
            }
        }
        return fallback(head)
    }

    static func match(_ pattern: [Substring], _ parts: [Substring]) -> [String: String]? {
        var params: [String: String] = [:]
        var i = 0
        for (pi, seg) in pattern.enumerated() {
            if seg.hasPrefix("*") {
                params[String(seg.dropFirst())] = parts[min(i, parts.count)...].map { percentDecode($0) }.joined(separator: "/")
                return pi == pattern.count - 1 ? params : nil
            }
            guard i < parts.count else { return nil }
            if seg.hasPrefix(":") {
                params[String(seg.dropFirst())] = percentDecode(parts[i])
            } else if seg != parts[i] {
                return nil
            }
            i += 1
        }
        return i == parts.count ? params : nil
    }
}
