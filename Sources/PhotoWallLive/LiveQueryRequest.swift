import PhotoWallCore

/// A client message of the Parse LiveQuery protocol, validated as parse-server's `RequestSchema.js`
/// does (each op's schema has `additionalProperties: false`); only `query.fields` is accepted beyond
/// it, as the old name of `query.keys` (parse-server ≤ 5 SDKs).
enum LiveQueryRequest {
    case connect(applicationId: String, masterKey: String?, clientKeys: [String: String], sessionToken: String?, installationId: String?)
    case subscribe(requestId: Int, query: Query, sessionToken: String?, isUpdate: Bool)
    case unsubscribe(requestId: Int)

    struct Query {
        var className: String
        var whereJSON: JSON
        var keys: [String]?
        var watch: [String]?
    }

    /// Error code 1 with the schema validator's kind of message.
    struct Invalid: Error { var message: String }

    static let connectKeys: Set<String> = ["op", "applicationId", "javascriptKey", "masterKey", "clientKey", "windowsKey",
                                           "restAPIKey", "sessionToken", "installationId"]
    static let subscribeKeys: Set<String> = ["op", "requestId", "query", "sessionToken"]
    static let queryKeys: Set<String> = ["className", "where", "keys", "watch", "fields"]

    /// Parses one text frame. - Throws: `Invalid` for anything `RequestSchema.js` rejects.
    static func parse(_ text: String) throws(Invalid) -> LiveQueryRequest {
        guard let json = try? JSON.parse(text) else { throw Invalid(message: "Invalid JSON") }
        guard let o = json.objectValue else { throw Invalid(message: "Invalid type: \(json.typeName) (expected object)") }
        guard let opValue = o["op"] else { throw Invalid(message: "Missing required property: op") }
        guard let op = opValue.stringValue, ["connect", "subscribe", "update", "unsubscribe"].contains(op) else {
            throw Invalid(message: "No enum match for: \(opValue.text)")
        }
        switch op {
        case "connect":
            try onlyKeys(o, connectKeys)
            let appId = try string(o, "applicationId", required: true)!
            var clientKeys: [String: String] = [:]
            for k in ["javascriptKey", "clientKey", "windowsKey", "restAPIKey"] { if let v = try string(o, k) { clientKeys[k] = v } }
            return .connect(applicationId: appId, masterKey: try string(o, "masterKey"), clientKeys: clientKeys,
                            sessionToken: try string(o, "sessionToken"), installationId: try string(o, "installationId"))
        case "unsubscribe":
            try onlyKeys(o, ["op", "requestId"])
            return .unsubscribe(requestId: try requestId(o))
        default:
            try onlyKeys(o, subscribeKeys)
            let id = try requestId(o)
            guard let qv = o["query"] else { throw Invalid(message: "Missing required property: query") }
            guard let q = qv.objectValue else { throw Invalid(message: "Invalid type: \(qv.typeName) (expected object)") }
            try onlyKeys(q, queryKeys)
            let className = try string(q, "className", required: true)!
            guard let w = q["where"] else { throw Invalid(message: "Missing required property: where") }
            guard w.objectValue != nil else { throw Invalid(message: "Invalid type: \(w.typeName) (expected object)") }
            var keys = try stringList(q, "keys")
            if keys == nil { keys = try stringList(q, "fields") }
            let query = Query(className: className, whereJSON: w, keys: keys, watch: try stringList(q, "watch"))
            return .subscribe(requestId: id, query: query, sessionToken: try string(o, "sessionToken"), isUpdate: op == "update")
        }
    }

    static func onlyKeys(_ o: [String: JSON], _ allowed: Set<String>) throws(Invalid) {
        if let extra = o.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw Invalid(message: "Additional properties not allowed: \(extra)")
        }
    }

    static func string(_ o: [String: JSON], _ key: String, required: Bool = false) throws(Invalid) -> String? {
        guard let v = o[key] else {
            if required { throw Invalid(message: "Missing required property: \(key)") }
            return nil
        }
        guard let s = v.stringValue else { throw Invalid(message: "Invalid type: \(v.typeName) (expected string) at \(key)") }
        return s
    }

    static func requestId(_ o: [String: JSON]) throws(Invalid) -> Int {
        guard let v = o["requestId"] else { throw Invalid(message: "Missing required property: requestId") }
        guard let n = v.intValue else { throw Invalid(message: "Invalid type: \(v.typeName) (expected number) at requestId") }
        return n
    }

    /// `keys`/`watch`: an array of at least one string, no duplicates.
    static func stringList(_ o: [String: JSON], _ key: String) throws(Invalid) -> [String]? {
        guard let v = o[key] else { return nil }
        guard let a = v.arrayValue else { throw Invalid(message: "Invalid type: \(v.typeName) (expected array) at \(key)") }
        guard !a.isEmpty else { throw Invalid(message: "Array is too short (0), minimum 1 at \(key)") }
        var out: [String] = []
        for e in a {
            guard let s = e.stringValue else { throw Invalid(message: "Invalid type: \(e.typeName) (expected string) at \(key)") }
            guard !out.contains(s) else { throw Invalid(message: "Array items are not unique at \(key)") }
            out.append(s)
        }
        return out
    }
}

extension JSON {
    var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .number: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }
}
