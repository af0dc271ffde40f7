import PhotoWallCore
import PhotoWallStorage

/// Converts field values between the REST wire format and the stored format.
///
/// Wire → stored: Dates are normalised to `{"__type":"Date","iso":<.SSSZ>}`, Pointers keep
/// `className`/`objectId`, Files keep only `name` (an incoming `url` is ignored, as parse-server
/// does), nested objects and arrays are converted recursively. Stored → wire: Files gain their `url`.
/// - Source: parse-rest-api.md §1 (`__type` encodings).
public struct ValueCoding: Sendable {
    public var config: ServerConfig
    public init(config: ServerConfig) { self.config = config }

    /// - Throws: 111 `This is not a valid Date` and similar for malformed `__type` values;
    ///   106 for a malformed Pointer; 105 for invalid nested key names (`$`, `.`).
    public func toStored(_ value: JSON, depth: Int = 0) throws(ParseError) -> JSON {
        guard depth < 64 else { throw ParseError(.invalidJSON, "Nesting too deep.") }
        switch value {
        case .array(let a):
            var out: [JSON] = []
            out.reserveCapacity(a.count)
            for v in a { out.append(try toStored(v, depth: depth + 1)) }
            return .array(out)
        case .object(let o):
            if let type = o["__type"]?.stringValue {
                switch type {
                case "Date":
                    guard let d = ParseDate(json: value) else { throw ParseError(.incorrectType, "This is not a valid Date") }
                    return d.json
                case "Pointer":
                    guard let c = o["className"]?.stringValue, let id = o["objectId"]?.stringValue, !id.isEmpty,
                          ObjectNames.isValidClassName(c) else {
                        throw ParseError(.invalidPointer, "Invalid pointer.")
                    }
                    return ["__type": "Pointer", "className": .string(c), "objectId": .string(id)]
                case "File":
                    guard let name = o["name"]?.stringValue, !name.isEmpty else {
                        throw ParseError(.incorrectType, "File must have a name.")
                    }
                    return ["__type": "File", "name": .string(name)]
                case "GeoPoint":
                    guard let lat = o["latitude"]?.doubleValue, let lng = o["longitude"]?.doubleValue,
                          (-90...90).contains(lat), (-180...180).contains(lng) else {
                        throw ParseError(.incorrectType, "Invalid GeoPoint.")
                    }
                    return ["__type": "GeoPoint", "latitude": .number(lat), "longitude": .number(lng)]
                case "Bytes":
                    guard let b = o["base64"]?.stringValue else { throw ParseError(.incorrectType, "Invalid Bytes.") }
                    return ["__type": "Bytes", "base64": .string(b)]
                case "Object":
                    // An included object sent back: store it as a pointer.
                    guard let c = o["className"]?.stringValue, let id = o["objectId"]?.stringValue, ObjectNames.isValidClassName(c) else {
                        throw ParseError(.invalidPointer, "Invalid pointer.")
                    }
                    return ["__type": "Pointer", "className": .string(c), "objectId": .string(id)]
                default:
                    throw ParseError(.incorrectType, "Unknown type \(type).")
                }
            }
            var out: [String: JSON] = [:]
            for (k, v) in o {
                guard !k.hasPrefix("$"), !k.contains(".") else { throw ParseError(.invalidKeyName, "Invalid field name: \(k).") }
                out[k] = try toStored(v, depth: depth + 1)
            }
            return .object(out)
        default:
            return value
        }
    }

    /// Stored → wire: adds `url` to Files, recursively.
    public func toWire(_ value: JSON) -> JSON {
        switch value {
        case .array(let a): return .array(a.map(toWire))
        case .object(var o):
            if o["__type"]?.stringValue == "File", let name = o["name"]?.stringValue {
                o["url"] = .string(config.fileURL(name))
                return .object(o)
            }
            if o["__type"] != nil { return value }
            for (k, v) in o { o[k] = toWire(v) }
            return .object(o)
        default: return value
        }
    }
}

/// Parse's naming rules. - Source: parse-rest-api.md §1 ("Names").
public enum ObjectNames {
    public static let systemClasses: Set<String> = ["_User", "_Session", "_Role", "_Installation"]

    /// `^[A-Za-z][A-Za-z0-9_]*$` or a system class.
    public static func isValidClassName(_ name: String) -> Bool {
        systemClasses.contains(name) || isIdentifier(name, maxLength: 128)
    }

    /// `^[A-Za-z][A-Za-z0-9_]*$`.
    public static func isValidFieldName(_ name: String) -> Bool { isIdentifier(name, maxLength: 128) }

    static func isIdentifier(_ s: String, maxLength: Int) -> Bool {
        let u = Array(s.utf8)
        guard let f = u.first, u.count <= maxLength, (65...90).contains(f) || (97...122).contains(f) else { return false }
        return u.allSatisfy { (65...90).contains($0) || (97...122).contains($0) || (48...57).contains($0) || $0 == 95 }
    }

    /// A key path in a query: `field` or `field.sub.sub` (each part `[A-Za-z0-9_]`, the first starting with a letter).
    public static func isValidKeyPath(_ s: String) -> Bool {
        let parts = s.split(separator: ".", omittingEmptySubsequences: false)
        guard let first = parts.first, isIdentifier(String(first), maxLength: 128) else { return false }
        return parts.dropFirst().allSatisfy { p in
            !p.isEmpty && p.utf8.allSatisfy { (65...90).contains($0) || (97...122).contains($0) || (48...57).contains($0) || $0 == 95 }
        }
    }
}
