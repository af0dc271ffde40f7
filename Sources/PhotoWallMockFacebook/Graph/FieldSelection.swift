/// One entry of a Graph `fields=` list: `name`, `name.modifier(arg)…`, or `name{sub,fields}`
/// (Graph "Field expansion"; e.g. `picture.type(large)`, `friends.limit(5){id,name}`).
struct FieldSelection: Sendable, Equatable {
    var name: String
    /// `limit` → `5` for `friends.limit(5)`.
    var modifiers: [String: String] = [:]
    /// The text inside `{…}`, unparsed; nil when absent.
    var subfields: String?

    /// Splits a `fields` value at top-level commas; blank entries are skipped.
    static func parse(_ text: String) -> [FieldSelection] {
        var entries: [String] = []
        var depth = 0
        var current = ""
        for ch in text {
            switch ch {
            case "(", "{": depth += 1; current.append(ch)
            case ")", "}": depth -= 1; current.append(ch)
            case "," where depth == 0: entries.append(current); current = ""
            default: current.append(ch)
            }
        }
        entries.append(current)
        return entries.compactMap { entry -> FieldSelection? in
            var rest = Substring(entry.trimmedSpaces)
            guard !rest.isEmpty else { return nil }
            var subfields: String?
            if let brace = rest.firstIndex(of: "{"), rest.last == "}" {
                subfields = String(rest[rest.index(after: brace)..<rest.index(before: rest.endIndex)])
                rest = rest[..<brace]
            }
            let parts = rest.split(separator: ".", omittingEmptySubsequences: false)
            var selection = FieldSelection(name: String(parts[0]), subfields: subfields)
            for part in parts.dropFirst() {
                guard let open = part.firstIndex(of: "("), part.last == ")" else { continue }
                selection.modifiers[String(part[..<open])] = String(part[part.index(after: open)..<part.index(before: part.endIndex)])
            }
            return selection
        }
    }
}
