import PhotoWallCore
import PhotoWallStorage

/// Options of a find, parsed from query-string or `_method` body parameters.
///
/// `order`, `keys`, `excludeKeys` and `include` may be comma strings or JSON arrays (Parse-Swift
/// sends arrays); `count` may be `1` or `true`. - Source: parse-rest-api.md §3.
public struct FindOptions: Sendable {
    public var whereJSON: JSON = .object([:])
    public var order: [SortKey] = []
    public var limit: Int?
    public var skip: Int = 0
    public var keys: [String]?
    public var excludeKeys: [String] = []
    public var include: [String] = []
    public var count = false

    public init() {}

    static let ignored: Set<String> = ["readPreference", "includeReadPreference", "subqueryReadPreference", "hint",
                                      "explain", "comment", "redirectClassNameForKey", "includeAll", "_method"]

    /// - Parameter params: each value JSON-parsed when it parses, else a string.
    /// - Throws: 102 `Invalid parameter for query: x` for an unknown parameter or a bad value; 107 for bad `where` JSON.
    public static func parse(_ params: [String: JSON], allowed: Set<String>? = nil) throws(ParseError) -> FindOptions {
        var o = FindOptions()
        for (k, v) in params {
            if let allowed, !allowed.contains(k), !ignored.contains(k) {
                throw ParseError(.invalidQuery, "Improper encode of parameter")
            }
            switch k {
            case "where":
                switch v {
                case .object: o.whereJSON = v
                case .string(let s):
                    guard case .object = (try? JSON.parse(s)) ?? .null else { throw ParseError(.invalidJSON, "Invalid JSON in where.") }
                    o.whereJSON = try JSON.parse(s)
                case .null: break
                default: throw ParseError(.invalidJSON, "Invalid JSON in where.")
                }
            case "order":
                o.order = try list(v, k).map { key in
                    let desc = key.hasPrefix("-")
                    let path = desc ? String(key.dropFirst()) : key
                    return SortKey(path: path, descending: desc)
                }
                for s in o.order where !(ObjectNames.isValidKeyPath(s.path)) {
                    throw ParseError(.invalidKeyName, "Invalid key name: \(s.path)")
                }
            case "limit":
                guard let n = integer(v), n >= 0 else { throw ParseError(.invalidQuery, "Invalid parameter for query: limit") }
                o.limit = n
            case "skip":
                guard let n = integer(v), n >= 0 else { throw ParseError(.invalidQuery, "Invalid parameter for query: skip") }
                o.skip = n
            case "keys": o.keys = try list(v, k)
            case "excludeKeys": o.excludeKeys = try list(v, k)
            case "include": o.include = try list(v, k)
            case "count":
                switch v {
                case .bool(let b): o.count = b
                case .number(let n): o.count = n != 0
                case .string(let s): o.count = s == "1" || s == "true"
                default: throw ParseError(.invalidQuery, "Invalid parameter for query: count")
                }
            default:
                if ignored.contains(k) { continue }
                throw ParseError(.invalidQuery, "Invalid parameter for query: \(k)")
            }
        }
        return o
    }

    static func integer(_ v: JSON) -> Int? {
        if let i = v.intValue { return i }
        if let s = v.stringValue { return Int(s) }
        return nil
    }

    static func list(_ v: JSON, _ name: String) throws(ParseError) -> [String] {
        switch v {
        case .string(let s): return s.split(separator: ",").map { $0.trimmingWhitespace() }.filter { !$0.isEmpty }
        case .array(let a):
            var out: [String] = []
            for x in a {
                guard let s = x.stringValue else { throw ParseError(.invalidQuery, "Invalid parameter for query: \(name)") }
                out += s.split(separator: ",").map { $0.trimmingWhitespace() }.filter { !$0.isEmpty }
            }
            return out
        default: throw ParseError(.invalidQuery, "Invalid parameter for query: \(name)")
        }
    }
}


/// Turns a Parse `where` object into a `Predicate`.
///
/// Supports `$eq $ne $lt $lte $gt $gte $in $nin $all $exists $regex`(+`$options`), `$or`, `$and`,
/// `$nor`, plain and Pointer equality. - Throws: 102 for `$or`/`$and` that are not arrays, an
/// unknown operator, a query on `ACL` or a bad regex; 105 for an invalid key name.
/// - Source: parse-rest-api.md §3 ("`where` operators").
public struct QueryParser: Sendable {
    let coding: ValueCoding
    public init(coding: ValueCoding) { self.coding = coding }

    public func predicate(_ json: JSON, depth: Int = 0) throws(ParseError) -> Predicate {
        guard depth < 16 else { throw ParseError(.invalidQuery, "Query is nested too deeply.") }
        guard let o = json.objectValue else { throw ParseError(.invalidJSON, "where must be a JSON object.") }
        var parts: [Predicate] = []
        for key in o.keys.sorted() {
            let value = o[key]!
            switch key {
            case "$or", "$and", "$nor":
                guard let arr = value.arrayValue, !arr.isEmpty else {
                    throw ParseError(.invalidQuery, "Bad \(key) format - use an array value.")
                }
                var subs: [Predicate] = []
                for s in arr { subs.append(try predicate(s, depth: depth + 1)) }
                parts.append(key == "$or" ? .or(subs) : key == "$and" ? .and(subs) : .nor(subs))
            case "ACL", "_rperm", "_wperm":
                throw ParseError(.invalidQuery, "Cannot query on ACL.")
            default:
                if key.hasPrefix("$") { throw ParseError(.invalidQuery, "bad constraint: \(key)") }
                guard ObjectNames.isValidKeyPath(key) else { throw ParseError(.invalidKeyName, "Invalid key name: \(key)") }
                parts.append(try constraint(key, value))
            }
        }
        return parts.count == 1 ? parts[0] : .and(parts)
    }

    /// Every field path a `where` names, at any depth of `$or`/`$and`/`$nor` (operators and
    /// malformed parts, which `predicate` refuses, are skipped), for `ObjectService.checkQueryable`.
    public static func fieldPaths(in json: JSON, depth: Int = 0) -> [String] {
        guard depth < 16, let o = json.objectValue else { return [] }
        var out: [String] = []
        for (key, value) in o {
            switch key {
            case "$or", "$and", "$nor":
                for sub in value.arrayValue ?? [] { out += fieldPaths(in: sub, depth: depth + 1) }
            default:
                if !key.hasPrefix("$") { out.append(key) }
            }
        }
        return out
    }

    func constraint(_ path: String, _ value: JSON) throws(ParseError) -> Predicate {
        guard let o = value.objectValue, o["__type"] == nil, o.keys.contains(where: { $0.hasPrefix("$") }) else {
            return .compare(path, .eq, try constant(value))
        }
        var parts: [Predicate] = []
        for (op, arg) in o {
            switch op {
            case "$eq": parts.append(.compare(path, .eq, try constant(arg)))
            case "$ne": parts.append(.compare(path, .ne, try constant(arg)))
            case "$lt": parts.append(.compare(path, .lt, try constant(arg)))
            case "$lte": parts.append(.compare(path, .lte, try constant(arg)))
            case "$gt": parts.append(.compare(path, .gt, try constant(arg)))
            case "$gte": parts.append(.compare(path, .gte, try constant(arg)))
            case "$in", "$nin", "$all":
                guard let a = arg.arrayValue else { throw ParseError(.invalidJSON, "bad \(op) value") }
                var vs: [QueryValue] = []
                for x in a { vs.append(try constant(x)) }
                parts.append(op == "$all" ? .containsAll(path, vs) : .inList(path, vs, negated: op == "$nin"))
            case "$exists":
                guard let b = arg.boolValue else { throw ParseError(.invalidJSON, "bad $exists value") }
                parts.append(.exists(path, b))
            case "$regex":
                guard let pattern = arg.stringValue else { throw ParseError(.invalidQuery, "bad $regex value") }
                let options = o["$options"]?.stringValue ?? ""
                guard options.allSatisfy({ "imxs".contains($0) }) else {
                    throw ParseError(.invalidQuery, "Invalid regex options: \(options)")
                }
                guard (try? Regex(options.isEmpty ? pattern : "(?\(options))\(pattern)")) != nil else {
                    throw ParseError(.invalidQuery, "Invalid regular expression: \(pattern)")
                }
                parts.append(.regex(path, pattern: pattern, options: options))
            case "$options":
                guard o["$regex"] != nil else { throw ParseError(.invalidQuery, "$options without $regex") }
            default:
                throw ParseError(.invalidQuery, "bad constraint: \(op)")
            }
        }
        return parts.count == 1 ? parts[0] : .and(parts)
    }

    /// A comparison constant in stored form.
    func constant(_ v: JSON) throws(ParseError) -> QueryValue {
        switch v {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .number(let n): return .number(n)
        case .string(let s): return .string(s)
        case .array: return .json(try coding.toStored(v))
        case .object(let o):
            switch o["__type"]?.stringValue {
            case "Date":
                guard let d = ParseDate(json: v) else { throw ParseError(.incorrectType, "This is not a valid Date") }
                return .date(d)
            case "Pointer", "Object":
                guard let c = o["className"]?.stringValue, let id = o["objectId"]?.stringValue else {
                    throw ParseError(.invalidPointer, "Invalid pointer.")
                }
                return .pointer(className: c, objectId: id)
            case "File":
                guard let n = o["name"]?.stringValue else { throw ParseError(.incorrectType, "File must have a name.") }
                return .file(name: n)
            default:
                return .json(try coding.toStored(v))
            }
        }
    }
}
