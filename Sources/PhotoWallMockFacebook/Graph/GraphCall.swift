import PhotoWallCore
import PhotoWallHTTP

/// One Graph request, decoded: the path without its version prefix, and the parameters from the
/// query string and a form or JSON body (Graph accepts either; the body wins on a clash).
struct GraphCall: Sendable {
    var method: String
    /// Path segments after the optional `v{major}.{minor}` prefix, percent-decoded.
    var segments: [String]
    /// `v19.0` when the path had a version prefix, else nil (notes §2.4: both forms are accepted).
    var version: String?
    /// Parameters in arrival order.
    var parameters: [(name: String, value: String)]
    var headers: HTTPHeaders
    /// `http://host:port` for absolute links (picture redirects, `paging.next`).
    var baseURL: String

    init(request: Request, baseURL: String) {
        method = request.head.method
        var parts = pathSegments(request.head.path).map { percentDecode($0) }
        if let first = parts.first, GraphCall.isVersion(first) {
            version = first
            parts.removeFirst()
        }
        segments = parts
        headers = request.head.headers
        self.baseURL = baseURL
        parameters = request.head.query
        let contentType = request.head.headers["Content-Type"]?.lowercased() ?? ""
        if contentType.hasPrefix("application/x-www-form-urlencoded") {
            parameters += GraphCall.parseForm(String(decoding: request.body, as: UTF8.self))
        } else if contentType.hasPrefix("application/json"), let json = try? JSON.parse(request.body), let object = json.objectValue {
            for (key, value) in object.sorted(by: { $0.key < $1.key }) {
                switch value {
                case .string(let s): parameters.append((key, s))
                case .number, .bool: parameters.append((key, value.text))
                case .array(let items): parameters.append((key, items.compactMap { $0.stringValue }.joined(separator: ",")))
                default: continue
                }
            }
        }
    }

    /// The last value of a parameter (a body value overrides a query one).
    func parameter(_ name: String) -> String? { parameters.last { $0.name == name }?.value }

    /// Every value of a repeated parameter (checkboxes).
    func parameters(_ name: String) -> [String] { parameters.filter { $0.name == name }.map(\.value) }

    /// `access_token` parameter, or `Authorization: Bearer|OAuth <token>`.
    var accessToken: String? {
        if let t = parameter("access_token"), !t.isEmpty { return t }
        guard let auth = headers["Authorization"] else { return nil }
        for scheme in ["Bearer ", "OAuth "] where auth.lowercased().hasPrefix(scheme.lowercased()) {
            let t = String(auth.dropFirst(scheme.count)).trimmedSpaces
            return t.isEmpty ? nil : t
        }
        return nil
    }

    /// `/v19.0` or empty, to build links to the same API version.
    var versionPrefix: String { version.map { "/" + $0 } ?? "" }

    /// `v` + digits + `.` + digits.
    static func isVersion(_ s: String) -> Bool {
        let b = Array(s.utf8)
        guard b.count >= 4, b[0] == UInt8(ascii: "v"), let dot = b.firstIndex(of: UInt8(ascii: ".")) else { return false }
        let major = b[1..<dot], minor = b[(dot + 1)...]
        return !major.isEmpty && !minor.isEmpty && (major + minor).allSatisfy { $0 >= 48 && $0 <= 57 }
    }

    /// `a=1&b=x+y` → `[("a","1"), ("b","x y")]`.
    static func parseForm(_ text: String) -> [(name: String, value: String)] {
        text.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (percentDecode(parts[0], plusAsSpace: true), parts.count > 1 ? percentDecode(parts[1], plusAsSpace: true) : "")
        }
    }
}

extension String {
    /// Without leading and trailing spaces and tabs.
    var trimmedSpaces: String {
        var s = Substring(self)
        while let c = s.first, c == " " || c == "\t" { s.removeFirst() }
        while let c = s.last, c == " " || c == "\t" { s.removeLast() }
        return String(s)
    }
}
