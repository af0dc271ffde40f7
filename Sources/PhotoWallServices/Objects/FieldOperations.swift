import PhotoWallCore
import PhotoWallStorage

/// Applies a create or update body to an object's stored fields: plain values are converted to
/// stored form; `{"__op":…}` values run Parse's field operators.
///
/// Operators: `Increment` (`amount`, a number; the field must be a number or unset), `Delete`,
/// `Add`, `AddUnique`, `Remove` (`objects`, an array; the field must be an array or unset).
/// - Returns: the new values of fields changed by operators (echoed in the response, as parse-server does).
/// - Throws: 105 invalid field name; 108 `The X operator is not supported yet.`; 111 wrong type for an operator.
/// - Source: parse-rest-api.md §1 ("Update operators").
struct FieldOperations {
    let coding: ValueCoding

    /// Keys a body may carry that are not fields.
    static let builtins: Set<String> = ["objectId", "createdAt", "updatedAt", "ACL", "className", "__type"]

    func apply(_ body: [String: JSON], to fields: inout [String: JSON]) throws(ParseError) -> [String: JSON] {
        var results: [String: JSON] = [:]
        for key in body.keys.sorted() where !Self.builtins.contains(key) {
            guard ObjectNames.isValidFieldName(key) else { throw ParseError.invalidFieldName(key) }
            let value = body[key]!
            guard let op = value["__op"]?.stringValue else {
                if value.isNull { fields[key] = nil } else { fields[key] = try coding.toStored(value) }
                continue
            }
            switch op {
            case "Delete":
                fields[key] = nil
            case "Increment":
                guard let amount = value["amount"]?.doubleValue else {
                    throw ParseError(.invalidJSON, "Increment amount must be a number.")
                }
                let current = fields[key] ?? .number(0)
                guard let n = current.doubleValue else {
                    throw ParseError(.incorrectType, "Cannot increment a field of type \(current.typeName).")
                }
                fields[key] = .number(n + amount)
                results[key] = .number(n + amount)
            case "Add", "AddUnique", "Remove":
                guard let objects = value["objects"]?.arrayValue else {
                    throw ParseError(.invalidJSON, "\(op) objects must be an array.")
                }
                var stored: [JSON] = []
                for o in objects { stored.append(try coding.toStored(o)) }
                let current = fields[key] ?? .array([])
                guard var array = current.arrayValue else {
                    throw ParseError(.incorrectType, "Cannot \(op) on a field of type \(current.typeName).")
                }
                switch op {
                case "Add": array += stored
                case "AddUnique": for o in stored where !array.contains(o) { array.append(o) }
                default: array.removeAll { stored.contains($0) }
                }
                fields[key] = .array(array)
                results[key] = coding.toWire(.array(array))
            default:
                throw ParseError(.commandUnavailable, "The \(op) operator is not supported yet.")
            }
        }
        return results
    }
}
