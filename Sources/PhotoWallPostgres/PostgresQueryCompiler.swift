import PhotoWallCore
import PhotoWallStorage

/// Compiles a `StoredQuery` into PostgreSQL SQL over a class table, with the same semantics as
/// `SQLiteQueryCompiler`.
///
/// Field paths are written as literal JSONB operators so they match the expression indexes
/// `PostgresAdapter` creates (a bound path would not):
/// - text form `(doc->>'f')` / `(doc#>>'{a,b}')` when the field is a String, Date (its `iso`),
///   Pointer (its `objectId`) or File (its `name`), or has no known type, and the value is text;
/// - JSONB form `(doc->'f')` compared with `$n::jsonb` otherwise (numbers compare numerically,
///   booleans as booleans, objects structurally).
/// `IS NULL` tests use the text form, so a missing field and a JSON `null` both count as null.
/// Equality on an Array field means "contains" (`@>`); `$ne`/`$nin` also match missing fields;
/// nulls sort first ascending and last descending (as SQLite, Mongo and parse-server do).
/// `$in` becomes `IN ($1,$2,…)`, one parameter per value, never `= ANY($1)`, whose generic plan
/// PostgreSQL gets wrong (social-and-uploads.md §5.4).
///
/// `$regex` runs PostgreSQL's ARE engine (`~`): see `PostgresRegex` for what translates.
struct PostgresQueryCompiler {
    let schema: ClassSchema
    /// How a `friendOf` scope compiles: true, a probe of `"_FRIENDS"`' primary key per row (when the
    /// predicate names its few rows by `objectId`); false, `IN` the viewer's friend rows, which the
    /// planner turns into a semi-join. Set by `compileWhere` from the predicate.
    var probesFriendScopes = false

    struct Compiled { var sql: String; var params: [String?] }

    /// Accumulates parameters and hands out `$n` placeholders.
    struct Params {
        var values: [String?] = []
        mutating func add(_ v: String?, cast: String? = nil) -> String {
            values.append(v)
            return "$\(values.count)" + (cast.map { "::\($0)" } ?? "")
        }
    }

    // MARK: paths

    /// `(doc->>'f')` or `(doc#>>'{a,b}')`: the field as text (NULL when missing or JSON null).
    static func textPath(_ path: String) -> String {
        let parts = path.split(separator: ".")
        return parts.count == 1 ? "(doc->>'\(path)')" : "(doc#>>'{\(parts.joined(separator: ","))}')"
    }

    /// `(doc->'f')` or `(doc#>'{a,b}')`: the field as JSONB.
    static func jsonPath(_ path: String) -> String {
        let parts = path.split(separator: ".")
        return parts.count == 1 ? "(doc->'\(path)')" : "(doc#>'{\(parts.joined(separator: ","))}')"
    }

    /// The path a typed field compares by: Date → `f.iso`, Pointer → `f.objectId`, File → `f.name`.
    static func scalarPath(_ path: String, _ type: FieldType?) -> String {
        switch type {
        case .date?: return path + ".iso"
        case .pointer?: return path + ".objectId"
        case .file?: return path + ".name"
        default: return path
        }
    }

    static func isTextual(_ type: FieldType?) -> Bool {
        switch type {
        case nil, .string?, .date?, .pointer?, .file?: return true
        default: return false
        }
    }

    /// The expression an index on `field` uses (non-unique indexes append `"createdAt"`): the text form
    /// for textual types, the JSONB form for numbers, booleans and objects. Matches what
    /// `compile` emits for an equality or `$in` with values of the field's type.
    static func indexExpression(_ field: String, schema: ClassSchema) -> String {
        let top = field.split(separator: ".").first.map(String.init) ?? field
        let type = field == top ? schema.fields[top] : nil
        let p = scalarPath(field, type)
        return isTextual(type) ? textPath(p) : jsonPath(p)
    }

    /// `("rperm" IS NULL OR "rperm" && $n::text[])`; `TRUE` for the master key.
    static func permissionFilter(column: String, _ perms: PermissionSet, _ params: inout Params) -> String {
        guard let perms else { return "TRUE" }
        return "(\"\(column)\" IS NULL OR \"\(column)\" && \(params.add(textArrayLiteral(perms), cast: "text[]")))"
    }

    /// `{"a","b"}`: a `text[]` literal, each element quoted, with a `\` before each `"` and `\` in it
    /// (PostgreSQL §8.15.6, array value input). Built in one pass over UTF-8 bytes: it runs for every
    /// permission filter and id list, so it must cost no more than the bytes it copies.
    static func textArrayLiteral(_ items: [String]) -> String {
        var bytes: [UInt8] = [UInt8(ascii: "{")]
        bytes.reserveCapacity(items.reduce(2) { $0 + $1.utf8.count + 3 })
        for item in items {
            if bytes.count > 1 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(UInt8(ascii: "\""))
            for b in item.utf8 {
                if b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") { bytes.append(UInt8(ascii: "\\")) }
                bytes.append(b)
            }
            bytes.append(UInt8(ascii: "\""))
        }
        bytes.append(UInt8(ascii: "}"))
        return String(decoding: bytes, as: UTF8.self)
    }

    // MARK: statements

    func select(_ q: StoredQuery, columns: String, forExplain: Bool = false) throws(ParseError) -> Compiled {
        var params = Params()
        let w = try compileWhere(q.predicate, &params)
        let acl = Self.permissionFilter(column: "rperm", q.readers, &params)
        var sql = "SELECT \(columns) FROM \(PostgresAdapter.table(q.className)) WHERE (\(w)) AND \(acl)"
        if !q.order.isEmpty {
            var terms: [String] = []
            for k in q.order { terms.append(try orderTerm(k)) }
            if !q.order.contains(where: { $0.path == "objectId" }) {
                terms.append("\"objectId\" \(q.order.last!.descending ? "DESC" : "ASC")")
            }
            sql += " ORDER BY " + terms.joined(separator: ", ")
        }
        if let limit = q.limit {
            sql += " LIMIT \(params.add(String(limit), cast: "bigint")) OFFSET \(params.add(String(q.skip), cast: "bigint"))"
        } else if q.skip > 0 {
            sql += " OFFSET \(params.add(String(q.skip), cast: "bigint"))"
        }
        return Compiled(sql: sql, params: params.values)
    }

    func whereClause(_ p: Predicate) throws(ParseError) -> Compiled {
        var params = Params()
        let sql = try compileWhere(p, &params)
        return Compiled(sql: sql, params: params.values)
    }

    /// `compile` of a whole `where`, with `probesFriendScopes` chosen for it.
    func compileWhere(_ p: Predicate, _ params: inout Params) throws(ParseError) -> String {
        var compiler = self
        compiler.probesFriendScopes = p.selectsFewObjectIds()
        return try compiler.compile(p, &params)
    }

    // MARK: columns

    enum Column { case builtinText(String), builtinTime(String), json(String, FieldType?) }

    func column(_ path: String) throws(ParseError) -> Column {
        guard !path.isEmpty, path.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_" || $0 == ".") }) else {
            throw ParseError.invalidFieldName(path)
        }
        switch path {
        case "objectId": return .builtinText("\"objectId\"")
        case "createdAt", "updatedAt": return .builtinTime("\"\(path)\"")
        default:
            let top = path.split(separator: ".").first.map(String.init) ?? path
            return .json(path, path == top ? schema.fields[top] : nil)
        }
    }

    func orderTerm(_ k: SortKey) throws(ParseError) -> String {
        switch try column(k.path) {
        case .builtinText(let c), .builtinTime(let c):
            return "\(c) \(k.descending ? "DESC" : "ASC")"
        case .json(let p, let type):
            let sp = Self.scalarPath(p, type)
            let e = Self.isTextual(type) ? "\(Self.textPath(sp)) COLLATE \"C\"" : Self.jsonPath(sp)
            return "\(e) \(k.descending ? "DESC NULLS LAST" : "ASC NULLS FIRST")"
        }
    }

    // MARK: values

    /// The text a textual column compares with, or nil when the value isn't text-like.
    static func text(_ v: QueryValue) -> String? {
        switch v {
        case .string(let s): return s
        case .date(let d): return d.iso
        case .pointer(_, let id): return id
        case .file(let name): return name
        default: return nil
        }
    }

    /// The value as JSONB for comparison with a scalar path (Dates, Pointers, Files reduced to their key).
    static func scalarJSON(_ v: QueryValue) -> String {
        switch v {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .number(let n): return JSON.number(n).text
        case .string, .date, .pointer, .file: return JSON.string(text(v) ?? "").text
        case .json(let j): return j.text
        }
    }

    /// The value in its stored encoding, for containment in an Array field.
    static func storedJSON(_ v: QueryValue) -> JSON {
        switch v {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .number(let n): return .number(n)
        case .string(let s): return .string(s)
        case .date(let d): return ["__type": "Date", "iso": .string(d.iso)]
        case .pointer(let c, let id): return ["__type": "Pointer", "className": .string(c), "objectId": .string(id)]
        case .file(let name): return ["__type": "File", "name": .string(name)]
        case .json(let j): return j
        }
    }

    /// Milliseconds for a built-in time column, or nil when the value can't be a time.
    static func millis(_ v: QueryValue) -> Int64? {
        switch v {
        case .date(let d): return d.millisecondsSince1970
        case .string(let s): return ParseDate(iso: s)?.millisecondsSince1970
        case .number(let n): return n.isFinite && abs(n) < 9e15 ? Int64(n) : nil
        default: return nil
        }
    }

    static func sqlOperator(_ op: Predicate.Comparison) -> String {
        switch op {
        case .eq: return "="
        case .ne: return "<>"
        case .lt: return "<"
        case .lte: return "<="
        case .gt: return ">"
        case .gte: return ">="
        }
    }

    // MARK: predicates

    func compile(_ p: Predicate, _ params: inout Params) throws(ParseError) -> String {
        switch p {
        case .all:
            return "TRUE"
        case .and(let ps):
            if ps.isEmpty { return "TRUE" }
            var parts: [String] = []
            for x in ps { parts.append(try compile(x, &params)) }
            return "(" + parts.joined(separator: " AND ") + ")"
        case .or(let ps):
            if ps.isEmpty { return "FALSE" }
            var parts: [String] = []
            for x in ps { parts.append(try compile(x, &params)) }
            return "(" + parts.joined(separator: " OR ") + ")"
        case .nor(let ps):
            // NOT over a possibly-NULL disjunction would drop rows; COALESCE keeps $nor two-valued.
            return "NOT COALESCE(" + (try compile(.or(ps), &params)) + ", FALSE)"
        case .compare(let path, let op, let value):
            return try compare(path, op, value, &params)
        case .inList(let path, let values, let negated):
            return try inList(path, values, negated: negated, &params)
        case .exists(let path, let present):
            switch try column(path) {
            case .builtinText, .builtinTime: return present ? "TRUE" : "FALSE"
            case .json(let p, _):
                return "\(Self.textPath(p)) IS \(present ? "NOT " : "")NULL"
            }
        case .regex(let path, let pattern, let options):
            let e: String
            switch try column(path) {
            case .builtinText(let c): e = c
            case .builtinTime(let c): e = "\(c)::text"
            case .json(let p, let type): e = Self.textPath(Self.scalarPath(p, type))
            }
            return "COALESCE(\(e) ~ \(params.add(PostgresRegex.translate(pattern, options: options), cast: "text")), FALSE)"
        case .friendOf(let path, let scope):
            // `"_FRIENDS"` (primary key ("userId", "friendId")) as it stands when the statement runs:
            // one parameter, whatever the number of friends.
            let viewer = params.add(scope.viewer, cast: "text")
            let e: String
            switch try column(path) {
            case .builtinText(let c): e = c
            case .builtinTime(let c): e = "\(c)::text"
            case .json(let p, let type):
                if case .array? = type {
                    let array = Self.jsonPath(p)
                    let elements = "jsonb_array_elements_text(CASE WHEN jsonb_typeof(\(array)) = 'array' THEN \(array) ELSE '[]'::jsonb END) AS x(v)"
                    return "EXISTS (SELECT 1 FROM \(elements) WHERE x.v = \(viewer) OR EXISTS (SELECT 1 FROM \"_FRIENDS\" f WHERE f.\"userId\" = \(viewer) AND f.\"friendId\" = x.v))"
                }
                e = Self.textPath(Self.scalarPath(p, type))
            }
            if probesFriendScopes {
                return "(\(e) = \(viewer) OR EXISTS (SELECT 1 FROM \"_FRIENDS\" f WHERE f.\"userId\" = \(viewer) AND f.\"friendId\" = \(e)))"
            }
            return "\(e) IN (SELECT \(viewer) UNION ALL SELECT \"friendId\" FROM \"_FRIENDS\" WHERE \"userId\" = \(viewer))"
        case .containsAll(let path, let values):
            if values.isEmpty { return "TRUE" }
            let e = Self.jsonPath(path)
            _ = try column(path)
            return "COALESCE(\(e) @> \(params.add(JSON.array(values.map(Self.storedJSON)).text, cast: "jsonb")), FALSE)"
        }
    }

    func compare(_ path: String, _ op: Predicate.Comparison, _ value: QueryValue, _ params: inout Params) throws(ParseError) -> String {
        let col = try column(path)
        // Null: only equality and inequality mean anything.
        if case .null = value {
            let nullTest: String
            switch col {
            case .builtinText, .builtinTime: nullTest = "FALSE"
            case .json(let p, let type): nullTest = "\(Self.textPath(Self.scalarPath(p, type))) IS NULL"
            }
            switch op {
            case .eq: return nullTest
            case .ne: return "NOT (\(nullTest))"
            default: return "FALSE"
            }
        }
        switch col {
        case .builtinText(let c):
            guard let t = Self.text(value) else { return op == .ne ? "TRUE" : "FALSE" }
            return "\(c) \(op == .eq || op == .ne ? "" : "COLLATE \"C\" ")\(Self.sqlOperator(op)) \(params.add(t, cast: "text"))"
        case .builtinTime(let c):
            guard let ms = Self.millis(value) else { return op == .ne ? "TRUE" : "FALSE" }
            return "\(c) \(Self.sqlOperator(op)) \(params.add(String(ms), cast: "bigint"))"
        case .json(let p, let type):
            let sp = Self.scalarPath(p, type)
            let nullTest = "\(Self.textPath(sp)) IS NULL"
            if case .array? = type, op == .eq || op == .ne {
                let contains = "\(Self.jsonPath(p)) @> \(params.add(JSON.array([Self.storedJSON(value)]).text, cast: "jsonb"))"
                return op == .eq ? "COALESCE(\(contains), FALSE)" : "(\(nullTest) OR NOT \(contains))"
            }
            let term: String
            if Self.isTextual(type), let t = Self.text(value) {
                let collate = op == .eq || op == .ne ? "" : " COLLATE \"C\""
                term = "\(Self.textPath(sp))\(collate) \(Self.sqlOperator(op)) \(params.add(t, cast: "text"))"
            } else {
                term = "\(Self.jsonPath(sp)) \(Self.sqlOperator(op)) \(params.add(Self.scalarJSON(value), cast: "jsonb"))"
            }
            return op == .ne ? "(\(nullTest) OR \(term))" : term
        }
    }

    func inList(_ path: String, _ values: [QueryValue], negated: Bool, _ params: inout Params) throws(ParseError) -> String {
        if values.isEmpty { return negated ? "TRUE" : "FALSE" }
        let col = try column(path)
        let nonNull = values.filter { if case .null = $0 { return false }; return true }
        let hasNull = nonNull.count != values.count
        var terms: [String] = []
        let nullTest: String
        switch col {
        case .builtinText(let c):
            nullTest = "FALSE"
            let texts = nonNull.compactMap(Self.text)
            // One array parameter: one statement text (and prepared statement) whatever the list's length.
            if !texts.isEmpty { terms.append("\(c) = ANY(\(params.add(Self.textArrayLiteral(texts), cast: "text[]")))") }
        case .builtinTime(let c):
            nullTest = "FALSE"
            let ms = nonNull.compactMap(Self.millis)
            if !ms.isEmpty { terms.append("\(c) IN (\(ms.map { params.add(String($0), cast: "bigint") }.joined(separator: ",")))") }
        case .json(let p, let type):
            let sp = Self.scalarPath(p, type)
            nullTest = "\(Self.textPath(sp)) IS NULL"
            if !nonNull.isEmpty {
                if case .array? = type {
                    let ors = nonNull.map { "\(Self.jsonPath(p)) @> \(params.add(JSON.array([Self.storedJSON($0)]).text, cast: "jsonb"))" }
                    terms.append("COALESCE(" + ors.joined(separator: " OR ") + ", FALSE)")
                } else if Self.isTextual(type), nonNull.allSatisfy({ Self.text($0) != nil }) {
                    terms.append("\(Self.textPath(sp)) IN (\(nonNull.map { params.add(Self.text($0), cast: "text") }.joined(separator: ",")))")
                } else {
                    terms.append("\(Self.jsonPath(sp)) IN (\(nonNull.map { params.add(Self.scalarJSON($0), cast: "jsonb") }.joined(separator: ",")))")
                }
            }
        }
        if hasNull { terms.append(nullTest) }
        if terms.isEmpty { return negated ? "TRUE" : "FALSE" }
        // Positive lists stay bare so `(doc->>'f') IN (…)` can use the expression index; NULL
        // (a missing field) already filters a row out. Negations test for NULL explicitly.
        let any = "(" + terms.joined(separator: " OR ") + ")"
        if !negated { return any }
        return hasNull ? "NOT COALESCE(\(any), FALSE)" : "(\(nullTest) OR NOT \(any))"
    }
}
