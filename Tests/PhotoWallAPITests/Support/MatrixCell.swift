import Foundation
import PhotoWallCore
import PhotoWallTesting
import Testing

/// What a matrix cell must answer, exactly.
///
/// Objects are compared by their *shape*: the set of their top-level keys, where a field holding
/// an included object (`__type: Object`) contributes `field.key` for each of its keys instead
/// (so a bare pointer shows as `field`, an included user as `field.objectId`, `field.name`, …).
enum Outcome: Sendable, Equatable, CustomStringConvertible {
    /// A Parse error: HTTP status and `code`.
    case error(status: Int, code: Int)
    /// 200 with this one object (GET).
    case object(Ref, Set<String>)
    /// 200 with exactly these fixture objects (in any order), each of this shape (find).
    case results([Ref: Set<String>])
    /// 200 with `{"results":[],"count":N}`.
    case count(Int)
    /// This HTTP status, body not compared (created/updated/deleted, or a refused file download).
    case status(Int)
    /// 200 with the owner's photo bytes.
    case photoBytes
    /// 200 with the loose file's bytes.
    case looseBytes
    /// The feed shows exactly these fixture photos (others it shows are the cells' own).
    case feed(Set<Ref>)

    var description: String {
        switch self {
        case .error(let s, let c): "\(s) code \(c)"
        case .object(let r, let keys): "\(r) {\(keys.sorted().joined(separator: ","))}"
        case .results(let m):
            m.isEmpty ? "[]" : "[" + m.keys.map(\.rawValue).sorted().map { r in "\(r){\(m[Ref(rawValue: r)!]!.sorted().joined(separator: ","))}" }.joined(separator: " ") + "]"
        case .count(let n): "count \(n)"
        case .status(let s): "\(s)"
        case .photoBytes: "200 photo"
        case .looseBytes: "200 file"
        case .feed(let refs): "feed \(refs.map(\.rawValue).sorted())"
        }
    }
}

/// A reply as a cell sees it (a `/batch` entry is unwrapped into one).
struct Observed: Sendable {
    var status: Int
    var body: Data
    var json: JSON { (try? JSON.parse([UInt8](body))) ?? .null }
    var text: String { String(decoding: body, as: UTF8.self) }
    init(status: Int, body: Data) { self.status = status; self.body = body }
    init(_ r: ParseTestServer.Reply) { self.init(status: r.status, body: r.body) }
}

/// One cell of the matrix: a principal does an operation on a resource.
struct Cell: Sendable, CustomTestStringConvertible {
    let principal: Principal
    let resource: String
    let operation: String
    let expected: Outcome
    /// Sends the request (after making the cell's own objects, for a cell that changes something).
    let run: @Sendable (MatrixWorld, Principal) async throws -> Observed

    var testDescription: String { "\(principal) · \(resource) · \(operation) → \(expected)" }
}

/// The shape of a wire object (see `Outcome`).
func shape(_ object: JSON) -> Set<String> {
    var out = Set<String>()
    for (k, v) in object.objectValue ?? [:] {
        if v.parseType == "Object", let inner = v.objectValue {
            for ik in inner.keys where ik != "__type" && ik != "className" { out.insert("\(k).\(ik)") }
        } else {
            out.insert(k)
        }
    }
    return out
}

/// The shape `prefix.key` for each of `keys` (an included object).
func included(_ field: String, _ keys: Set<String>) -> Set<String> { Set(keys.map { "\(field).\($0)" }) }

extension MatrixWorld {
    /// Compares a reply with the cell's outcome. - Returns: what differs (empty when it matches).
    func mismatch(_ r: Observed, _ expected: Outcome) -> String? {
        let j = r.json
        let printable = r.body.count < 4096 && (r.body.first == UInt8(ascii: "{") || r.body.first == UInt8(ascii: "["))
        let got = "\(r.status) " + (printable ? String(r.text.prefix(600)) : "(\(r.body.count) bytes)")
        switch expected {
        case .error(let status, let code):
            return r.status == status && j["code"]?.intValue == code && j["error"]?.stringValue != nil ? nil : got
        case .object(let ref, let keys):
            guard r.status == 200, j["objectId"]?.stringValue == self[ref] else { return got }
            let s = shape(j)
            return s == keys ? nil : "keys differ: extra \(s.subtracting(keys).sorted()), missing \(keys.subtracting(s).sorted()) in \(got)"
        case .results(let want):
            guard r.status == 200, let results = j["results"]?.arrayValue else { return got }
            var seen: [Ref: Set<String>] = [:]
            for o in results {
                guard let id = o["objectId"]?.stringValue, let ref = ref(of: id) else { return "unexpected object in \(got)" }
                if seen[ref] != nil { return "duplicate \(ref) in \(got)" }
                seen[ref] = shape(o)
            }
            if seen == want { return nil }
            var d: [String] = []
            for ref in Set(seen.keys).union(want.keys).sorted(by: { $0.rawValue < $1.rawValue }) {
                switch (seen[ref], want[ref]) {
                case (nil, _?): d.append("missing \(ref)")
                case (_?, nil): d.append("unexpected \(ref)")
                case (let s?, let w?) where s != w: d.append("\(ref): extra \(s.subtracting(w).sorted()), missing \(w.subtracting(s).sorted())")
                default: break
                }
            }
            return d.joined(separator: "; ") + " in \(got)"
        case .count(let n):
            return r.status == 200 && j["count"]?.intValue == n && j["results"] == [] ? nil : got
        case .status(let s):
            return r.status == s ? nil : got
        case .photoBytes:
            return r.status == 200 && r.body == photo ? nil : "\(r.status), \(r.body.count) bytes"
        case .looseBytes:
            return r.status == 200 && r.body == Data("loose file".utf8) ? nil : "\(r.status), \(r.body.count) bytes"
        case .feed(let want):
            guard r.status == 200, let images = j["result"]?["images"]?.arrayValue else { return got }
            let fixture = Set(images.compactMap { $0["objectId"]?.stringValue.flatMap { ref(of: $0) } })
            guard fixture == want else { return "feed shows \(fixture.map(\.rawValue).sorted()) in \(got)" }
            // The people of the quiet photo (the owner; the commenter, who is not the friend's friend)
            // are shown by objectId, name and fbId only, and with their name.
            for img in images where img["objectId"]?.stringValue == self[.quietImage] {
                let comments = img["comments"]?.arrayValue ?? []
                guard comments.count == 1 else { return "quiet photo's comments in \(got)" }
                for person in [img["user"]] + comments.map({ $0["user"] }) {
                    guard let p = person, Set(p.objectValue?.keys ?? [:].keys) == ["objectId", "name", "fbId"], p["name"]?.stringValue != nil else {
                        return "person \(person?.text ?? "nil") in \(got)"
                    }
                }
            }
            return nil
        }
    }

    // MARK: requests

    /// `GET /classes/<className>` (or `/users`, `/sessions`) with query parameters.
    func query(_ p: Principal, _ className: String, where w: JSON? = nil, order: String? = nil, keys: String? = nil,
               excludeKeys: String? = nil, include: String? = nil, count: Bool = false) async throws -> Observed {
        var params: [String] = []
        if let w { params.append("where=\(enc(w))") }
        if let order { params.append("order=\(order)") }
        if let keys { params.append("keys=\(keys)") }
        if let excludeKeys { params.append("excludeKeys=\(excludeKeys)") }
        if let include { params.append("include=\(include)") }
        if count { params += ["count=1", "limit=0"] }
        return Observed(try await server.request("GET", Self.path(className) + (params.isEmpty ? "" : "?" + params.joined(separator: "&")), key: key(p)))
    }

    /// The same query sent as `POST` with `_method: GET` (parameters in the body).
    func queryByMethodOverride(_ p: Principal, _ className: String, _ params: JSON) async throws -> Observed {
        var body = params.objectValue ?? [:]
        body["_method"] = "GET"
        return Observed(try await server.request("POST", Self.path(className), json: .object(body), key: key(p)))
    }

    /// The same query as the only request of a `/batch` (see `inBatch`).
    func queryInBatch(_ p: Principal, _ className: String, _ params: JSON) async throws -> Observed {
        try await inBatch(p, "GET", Self.path(className), params)
    }

    /// One request as the only one of a `/batch`; its `{"error":…}` entry comes back as an
    /// ordinary error reply (status from the code) and a `{"success":…}` one as a 200.
    func inBatch(_ p: Principal, _ method: String, _ path: String, _ body: JSON) async throws -> Observed {
        let r = try await server.request("POST", "/batch", json: ["requests": [["method": .string(method), "path": .string("/parse" + path), "body": body]]],
                                         key: key(p))
        guard r.status == 200, let first = r.json.arrayValue?.first else { return Observed(r) }
        if let e = first["error"] {
            let code = e["code"]?.intValue ?? 0
            return Observed(status: code == 101 ? 404 : (code == 1 ? 500 : 400), body: Data(e.serialized))
        }
        return Observed(status: 200, body: Data((first["success"] ?? .null).serialized))
    }

    /// Stops a cell whose request was answered as expected but whose effects are wrong.
    func require(_ condition: Bool, _ what: String) throws {
        if !condition { throw TestServerError(description: what) }
    }

    func get(_ p: Principal, _ className: String, _ ref: Ref, _ suffix: String = "") async throws -> Observed {
        Observed(try await server.request("GET", Self.path(className) + "/\(self[ref])" + suffix, key: key(p)))
    }

    static func path(_ className: String) -> String {
        switch className {
        case "_User": "/users"
        case "_Session": "/sessions"
        default: "/classes/\(className)"
        }
    }

    /// A download with the principal's credentials (anonymous: none at all; a browser `<img>`).
    func download(_ p: Principal, _ url: String) async throws -> Observed {
        Observed(try await server.request("GET", url, key: p == .anonymous ? .none : key(p)))
    }
}
