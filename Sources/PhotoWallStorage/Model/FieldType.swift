import PhotoWallCore

/// The type of a class field, as Parse's schema records it.
public enum FieldType: Sendable, Hashable, CustomStringConvertible {
    case string, number, boolean, date, object, array, file, geoPoint, bytes, acl, polygon
    case pointer(String)
    case relation(String)

    /// The type a JSON value (in stored encoding) has, or nil for `null`.
    public static func of(_ value: JSON) -> FieldType? {
        switch value {
        case .null: return nil
        case .bool: return .boolean
        case .number: return .number
        case .string: return .string
        case .array: return .array
        case .object(let o):
            switch o["__type"]?.stringValue {
            case "Date": return .date
            case "Pointer": return .pointer(o["className"]?.stringValue ?? "")
            case "Relation": return .relation(o["className"]?.stringValue ?? "")
            case "File": return .file
            case "GeoPoint": return .geoPoint
            case "Bytes": return .bytes
            case "Polygon": return .polygon
            default: return .object
            }
        }
    }

    /// Parse's schema name: `String`, `Pointer`, …
    public var name: String {
        switch self {
        case .string: return "String"
        case .number: return "Number"
        case .boolean: return "Boolean"
        case .date: return "Date"
        case .object: return "Object"
        case .array: return "Array"
        case .file: return "File"
        case .geoPoint: return "GeoPoint"
        case .bytes: return "Bytes"
        case .acl: return "ACL"
        case .polygon: return "Polygon"
        case .pointer: return "Pointer"
        case .relation: return "Relation"
        }
    }

    public var description: String {
        switch self {
        case .pointer(let c): return "Pointer<\(c)>"
        case .relation(let c): return "Relation<\(c)>"
        default: return name
        }
    }

    /// `{"type":"Pointer","targetClass":"_User"}` as parse-server's `_SCHEMA` stores it.
    public var json: JSON {
        switch self {
        case .pointer(let c), .relation(let c): return ["type": .string(name), "targetClass": .string(c)]
        default: return ["type": .string(name)]
        }
    }

    public init?(json: JSON) {
        guard let t = json["type"]?.stringValue else { return nil }
        let target = json["targetClass"]?.stringValue ?? ""
        switch t {
        case "String": self = .string
        case "Number": self = .number
        case "Boolean": self = .boolean
        case "Date": self = .date
        case "Object": self = .object
        case "Array": self = .array
        case "File": self = .file
        case "GeoPoint": self = .geoPoint
        case "Bytes": self = .bytes
        case "ACL": self = .acl
        case "Polygon": self = .polygon
        case "Pointer": self = .pointer(target)
        case "Relation": self = .relation(target)
        default: return nil
        }
    }
}

/// A class and its known fields.
public struct ClassSchema: Sendable {
    public var className: String
    public var fields: [String: FieldType]
    public init(className: String, fields: [String: FieldType]) { self.className = className; self.fields = fields }

    /// Checks `values` against the schema.
    /// - Returns: the fields to add to the schema (first use of a name).
    /// - Throws: `ParseError` 111 `schema mismatch for C.f; expected T but got U`.
    public func additions(for values: [String: JSON]) throws(ParseError) -> [String: FieldType] {
        var add: [String: FieldType] = [:]
        for (name, value) in values where !name.hasPrefix("_") {
            guard let t = FieldType.of(value) else { continue }
            if let existing = fields[name] {
                if existing != t {
                    throw ParseError(.incorrectType, "schema mismatch for \(className).\(name); expected \(existing) but got \(t)")
                }
            } else {
                add[name] = t
            }
        }
        return add
    }
}
