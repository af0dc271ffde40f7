import PhotoWallCore
import PhotoWallSQL
import PhotoWallStorage

/// Compiles a `StoredQuery` into SQLite SQL over a class table.
///
/// Field paths are written as literal `json_extract(doc,'$.path')` so that they match the
/// expression indexes (a bound path would not). Paths were validated by the service
/// (`^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*$`), so they cannot break out of the literal.
/// The schema chooses how a typed field compares: Dates by their `iso` text (fixed-width, so
/// text order is time order), Pointers by `objectId`, Files by `name`, Booleans as 0/1, and
/// equality on an Array field means "contains".
struct SQLiteQueryCompiler {
    let schema: ClassSchema
    /// How a `friendOf` scope compiles: true, a probe of `_FRIENDS`' primary key per row (when the
    /// predicate names its few rows by `objectId`); false, `IN` the viewer's friend rows, which the
    /// planner may use to drive the field's index. Set by `whereClause` from the predicate.
    var probesFriendScopes = false

    struct Compiled { var sql: String; var args: [SQLValue] }

    static func jsonPath(_ path: String) -> String { "json_extract(doc,'$.\(path)')" }

    /// `(column IS NULL OR EXISTS (… value IN (?,…)))` for a permission set; `1` for the master key.
    /// When the set holds `*` (every caller's does), a row everyone may read passes on `readByEveryone`
    /// before `json_each` opens its array (most rows: a public-read ACL).
    static func permissionFilter(column: String, _ perms: PermissionSet) -> (String, [SQLValue]) {
        guard let perms else { return ("1", []) }
        let everyone = perms.contains("*")
        let args = perms.map { SQLValue.text($0) }
        if column == "rperm", perms.count < readFilters.count { return (readFilters[perms.count][everyone ? 1 : 0], args) }
        return (permissionFilterText(column: column, count: perms.count, everyone: everyone), args)
    }

    /// `permissionFilter`'s text for `count` placeholders, with the `readByEveryone` shortcut or not.
    private static func permissionFilterText(column: String, count: Int, everyone: Bool) -> String {
        let marks = SQLiteAdapter.placeholders(count)
        let shortcut = everyone ? " OR \(readByEveryone(column))" : ""
        return "(\(column) IS NULL\(shortcut) OR EXISTS (SELECT 1 FROM json_each(\(column)) WHERE value IN (\(marks))))"
    }

    /// The read filter's text for permission sets of 0 to 31 entries (`[count][everyone ? 1 : 0]`),
    /// made once: every read compiles one, and building it was 3% of a `GET` of one object's CPU.
    private static let readFilters: [[String]] = (0..<32).map { count in
        [false, true].map { permissionFilterText(column: "rperm", count: count, everyone: $0) }
    }

    /// Whether the readers array in `column` (`rperm`: a JSON array of strings as `JSON.text` writes
    /// it, `encodeRow`) has the element `*`, by two `instr`s instead of `json_each`: `"*"` right after
    /// `[` or `,`. A quote inside a string is always escaped, so a quote after `[` or `,` opens an
    /// element, and the next unescaped quote, right after its `*`, closes it. (`"*"` alone would also
    /// match inside the entry `x"*`, written `"x\"*"`: an ACL key a client chooses.)
    static func readByEveryone(_ column: String) -> String {
        "(instr(\(column), '[\"*\"') > 0 OR instr(\(column), ',\"*\"') > 0)"
    }

    func select(_ q: StoredQuery, columns: String) throws(ParseError) -> Compiled {
        var w = try whereClause(q.predicate)
        let (acl, aclArgs) = Self.permissionFilter(column: "rperm", q.readers)
        var sql = "SELECT \(columns) FROM \(SQLiteAdapter.table(q.className)) WHERE (\(w.sql)) AND \(acl)"
        w.args += aclArgs
        if !q.order.isEmpty {
            var terms = q.order.map { "\(orderExpression($0.path)) \($0.descending ? "DESC" : "ASC")" }
            if !q.order.contains(where: { $0.path == "objectId" }) {
                terms.append("objectId \(q.order.last!.descending ? "DESC" : "ASC")")
            }
            sql += " ORDER BY " + terms.joined(separator: ", ")
        }
        if let limit = q.limit {
            sql += " LIMIT ? OFFSET ?"
            w.args += [.integer(Int64(limit)), .integer(Int64(q.skip))]
        } else if q.skip > 0 {
            sql += " LIMIT -1 OFFSET ?"
            w.args.append(.integer(Int64(q.skip)))
        }
        return Compiled(sql: sql, args: w.args)
    }

    func whereClause(_ p: Predicate) throws(ParseError) -> Compiled {
        var args: [SQLValue] = []
        var compiler = self
        compiler.probesFriendScopes = p.selectsFewObjectIds()
        let sql = try compiler.compile(p, &args)
        return Compiled(sql: sql, args: args)
    }

    // MARK: expressions

    enum Column { case builtinText(String), builtinTime(String), json(String, FieldType?) }

    func column(_ path: String) -> Column {
        switch path {
        case "objectId": return .builtinText("objectId")
        case "createdAt", "updatedAt": return .builtinTime(path)
        default:
            // A dotted path reaches inside a field: no schema type applies to it. (Tested on the
            // bytes: this runs for every path of a query, not once per request.)
            if path.utf8.contains(UInt8(ascii: ".")) { return .json(path, nil) }
            return .json(path, schema.fields[path])
        }
    }

    /// The scalar SQL expression a path compares as.
    func expression(_ path: String) -> String {
        switch column(path) {
        case .builtinText(let c), .builtinTime(let c): return c
        case .json(let p, let type):
            switch type {
            case .date?: return Self.jsonPath(p + ".iso")
            case .pointer?: return Self.jsonPath(p + ".objectId")
            case .file?: return Self.jsonPath(p + ".name")
            default: return Self.jsonPath(p)
            }
        }
    }

    func orderExpression(_ path: String) -> String { expression(path) }

    /// Binds a constant for comparison against `path`.
    func bind(_ v: QueryValue, for path: String) -> SQLValue {
        bind(v, builtinTime: isBuiltinTime(path))
    }

    /// Whether `path` is `createdAt` or `updatedAt` (stored as milliseconds, not JSON).
    func isBuiltinTime(_ path: String) -> Bool {
        if case .builtinTime = column(path) { return true }
        return false
    }

    /// `bind(_:for:)` with the path's column already looked up (`isBuiltinTime`), for lists of values.
    func bind(_ v: QueryValue, builtinTime: Bool) -> SQLValue {
        switch v {
        case .null: return .null
        case .bool(let b): return .integer(b ? 1 : 0)
        case .number(let n): return .real(n)
        case .string(let s):
            if builtinTime, let d = ParseDate(iso: s) { return .integer(d.millisecondsSince1970) }
            return .text(s)
        case .date(let d): return builtinTime ? .integer(d.millisecondsSince1970) : .text(d.iso)
        case .pointer(_, let id): return .text(id)
        case .file(let name): return .text(name)
        case .json(let j): return .text(j.text)
        }
    }

    func isArray(_ path: String) -> Bool {
        if case .json(_, .array?) = column(path) { return true }
        return false
    }

    func compile(_ p: Predicate, _ args: inout [SQLValue]) throws(ParseError) -> String {
        switch p {
        case .all:
            return "1"
        case .and(let ps):
            if ps.isEmpty { return "1" }
            var parts: [String] = []
            for x in ps { parts.append(try compile(x, &args)) }
            return "(" + parts.joined(separator: " AND ") + ")"
        case .or(let ps):
            if ps.isEmpty { return "0" }
            var parts: [String] = []
            for x in ps { parts.append(try compile(x, &args)) }
            return "(" + parts.joined(separator: " OR ") + ")"
        case .nor(let ps):
            // COALESCE: a comparison with a missing field is NULL, and NOT NULL would drop the row;
            // Mongo (and parse-server) keep rows where none of the clauses holds.
            return "NOT COALESCE(" + (try compile(.or(ps), &args)) + ", 0)"
        case .compare(let path, let op, let value):
            let e = expression(path)
            if case .null = value {
                switch op {
                case .eq: return "\(e) IS NULL"
                case .ne: return "\(e) IS NOT NULL"
                default: return "0"
                }
            }
            if isArray(path), op == .eq || op == .ne {
                args.append(bind(value, for: path))
                let contains = "EXISTS (SELECT 1 FROM json_each(doc,'$.\(path)') WHERE value = ?)"
                return op == .eq ? contains : "NOT \(contains)"
            }
            args.append(bind(value, for: path))
            switch op {
            case .eq: return "\(e) = ?"
            case .ne: return "(\(e) IS NULL OR \(e) != ?)"
            case .lt: return "\(e) < ?"
            case .lte: return "\(e) <= ?"
            case .gt: return "\(e) > ?"
            case .gte: return "\(e) >= ?"
            }
        case .inList(let path, let values, let negated):
            if values.isEmpty { return negated ? "1" : "0" }
            let e = expression(path)
            let nonNull = values.filter { if case .null = $0 { return false }; return true }
            let hasNull = nonNull.count != values.count
            var terms: [String] = []
            if !nonNull.isEmpty {
                let marks = SQLiteAdapter.placeholders(nonNull.count)
                if isArray(path) {
                    terms.append("EXISTS (SELECT 1 FROM json_each(doc,'$.\(path)') WHERE value IN (\(marks)))")
                } else {
                    terms.append("\(e) IN (\(marks))")
                }
                // One column lookup for the list, not one per value (a read scope's list has a value per friend).
                let builtinTime = isBuiltinTime(path)
                args.reserveCapacity(args.count + nonNull.count)
                for v in nonNull { args.append(bind(v, builtinTime: builtinTime)) }
            }
            if hasNull { terms.append("\(e) IS NULL") }
            let any = "(" + terms.joined(separator: " OR ") + ")"
            return negated ? (hasNull ? "NOT \(any)" : "(\(e) IS NULL OR NOT \(any))") : any
        case .exists(let path, let present):
            let e: String
            switch column(path) {
            case .builtinText(let c), .builtinTime(let c): return present ? "\(c) IS NOT NULL" : "\(c) IS NULL"
            case .json(let p, _): e = "json_type(doc,'$.\(p)')"
            }
            return present ? "(\(e) IS NOT NULL AND \(e) != 'null')" : "(\(e) IS NULL OR \(e) = 'null')"
        case .regex(let path, let pattern, let options):
            let flags = options.filter { "imsx".contains($0) }
            let full = flags.isEmpty ? pattern : "(?\(flags))\(pattern)"
            // `regexp()` matches nothing for a pattern Swift's `Regex` can't compile: refuse it here, as
            // PostgreSQL does (`ObjectService` refuses such a `$regex` before it reaches an adapter).
            guard (try? Regex(full)) != nil else { throw ParseError(.invalidQuery, "Invalid regular expression: \(pattern)") }
            args.append(.text(full))
            return "regexp(?, \(expression(path))) = 1"
        case .friendOf(let path, let scope):
            // `_FRIENDS` (primary key (userId, friendId)) as it stands when the statement runs: nothing
            // is bound per friend, and the statement text is the same for every viewer.
            args += [.text(scope.viewer), .text(scope.viewer)]
            if probesFriendScopes {
                if isArray(path) {
                    return "EXISTS (SELECT 1 FROM json_each(doc,'$.\(path)') j WHERE j.value = ? OR EXISTS (SELECT 1 FROM _FRIENDS WHERE userId = ? AND friendId = j.value))"
                }
                let e = expression(path)
                return "(\(e) = ? OR EXISTS (SELECT 1 FROM _FRIENDS WHERE userId = ? AND friendId = \(e)))"
            }
            // The friend rows first: so written, SQLite's planner drives the field's index from the set
            // (with the viewer's own row first it scans the whole table in `ORDER BY` order instead).
            let members = "(SELECT friendId FROM _FRIENDS WHERE userId = ? UNION ALL SELECT ?)"
            if isArray(path) { return "EXISTS (SELECT 1 FROM json_each(doc,'$.\(path)') WHERE value IN \(members))" }
            return "\(expression(path)) IN \(members)"
        case .containsAll(let path, let values):
            if values.isEmpty { return "1" }
            var parts: [String] = []
            for v in values {
                args.append(bind(v, for: path))
                parts.append("EXISTS (SELECT 1 FROM json_each(doc,'$.\(path)') WHERE value = ?)")
            }
            return "(" + parts.joined(separator: " AND ") + ")"
        }
    }
}
