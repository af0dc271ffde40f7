import PhotoWallCore

extension Predicate {
    /// Whether `object` satisfies the predicate, evaluated in memory with the adapters' semantics: a
    /// comparison on an Array field matches when any element does; `ne` and negated `inList` also match a
    /// missing field; `exists` means present and not null; ordering compares numbers with numbers,
    /// strings with strings and dates with dates (anything else does not match). For objects that are
    /// not (or no longer) stored, e.g. a deleted object or an update's original in LiveQuery events.
    public func matches(_ object: StoredObject) -> Bool {
        switch self {
        case .all: return true
        case .and(let parts): return parts.allSatisfy { $0.matches(object) }
        case .or(let parts): return parts.contains { $0.matches(object) }
        case .nor(let parts): return !parts.contains { $0.matches(object) }
        case .compare(let path, let op, let value):
            let candidates = Self.candidates(Self.value(at: path, in: object))
            switch op {
            case .eq: return candidates.contains { Self.equal($0, value) }
            case .ne: return !candidates.contains { Self.equal($0, value) }
            case .lt, .lte, .gt, .gte:
                return candidates.contains { c in
                    guard let order = Self.order(c, value) else { return false }
                    switch op {
                    case .lt: return order < 0
                    case .lte: return order <= 0
                    case .gt: return order > 0
                    default: return order >= 0
                    }
                }
            }
        case .inList(let path, let list, let negated):
            let candidates = Self.candidates(Self.value(at: path, in: object))
            let hit = candidates.contains { c in list.contains { Self.equal(c, $0) } }
            return negated ? !hit : hit
        case .exists(let path, let wanted):
            let v = Self.value(at: path, in: object)
            return (v != nil && v != .null) == wanted
        case .regex(let path, let pattern, let options):
            guard case .string(let s)? = Self.value(at: path, in: object).map(Self.queryValue),
                  var regex = try? Regex(pattern) else { return false }
            if options.contains("i") { regex = regex.ignoresCase() }
            if options.contains("s") { regex = regex.dotMatchesNewlines() }
            if options.contains("m") { regex = regex.anchorsMatchLineEndings() }
            return s.contains(regex)
        case .friendOf(let path, let scope):
            // A friend list that can't be read admits nobody (callers that must report the failure
            // load the scope first: `loadingFriendScopes`).
            guard let members = try? scope.members() else { return false }
            // As the stores compare a typed field: a Pointer by objectId, a File by name, a Date by iso.
            return Self.candidates(Self.value(at: path, in: object)).contains { c in
                switch c {
                case .string(let s), .pointer(_, let s), .file(let s): return members.contains(s)
                case .date(let d): return members.contains(d.iso)
                default: return false
                }
            }
        case .containsAll(let path, let list):
            guard let array = Self.value(at: path, in: object)?.arrayValue else { return false }
            let values = array.map(Self.queryValue)
            return list.allSatisfy { want in values.contains { Self.equal($0, want) } }
        }
    }

    /// The stored value at a field path (`objectId`, `createdAt`, `updatedAt`, a field, `a.b.c`).
    static func value(at path: String, in object: StoredObject) -> JSON? {
        switch path {
        case "objectId": return .string(object.objectId)
        case "createdAt": return object.createdAt.json
        case "updatedAt": return object.updatedAt.json
        default:
            let parts = path.split(separator: ".").map(String.init)
            guard let first = parts.first else { return nil }
            var v = object.fields[first]
            for p in parts.dropFirst() { v = v?[p] }
            return v
        }
    }

    /// The values a comparison looks at: an array's elements (and the array itself), else the value.
    static func candidates(_ value: JSON?) -> [QueryValue] {
        guard let value else { return [] }
        if let a = value.arrayValue { return a.map(queryValue) + [queryValue(value)] }
        return [queryValue(value)]
    }

    static func queryValue(_ v: JSON) -> QueryValue {
        switch v {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .number(let n): return .number(n)
        case .string(let s): return .string(s)
        case .array: return .json(v)
        case .object:
            switch v.parseType {
            case "Date": if let d = ParseDate(json: v) { return .date(d) }
            case "Pointer":
                if let c = v["className"]?.stringValue, let id = v["objectId"]?.stringValue { return .pointer(className: c, objectId: id) }
            case "File": if let n = v["name"]?.stringValue { return .file(name: n) }
            default: break
            }
            return .json(v)
        }
    }

    static func equal(_ a: QueryValue, _ b: QueryValue) -> Bool {
        if case .number(let x) = a, case .number(let y) = b { return x == y }
        return a == b
    }

    /// -1, 0 or 1 for comparable values of one kind; nil otherwise.
    static func order(_ a: QueryValue, _ b: QueryValue) -> Int? {
        switch (a, b) {
        case (.number(let x), .number(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.string(let x), .string(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.date(let x), .date(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        default: return nil
        }
    }
}
