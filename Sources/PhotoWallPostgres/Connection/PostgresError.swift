import PhotoWallCore

/// A failed libpq call or statement. `sql` is kept for logs; bound parameters never are.
///
/// - Source: PostgreSQL 15 manual, Appendix A "PostgreSQL Error Codes"; libpq `PQresultErrorField`.
public struct PostgresError: Error, Sendable, CustomStringConvertible {
    /// The five-character SQLSTATE (`23505` unique violation, `40P01` deadlock, …); empty when
    /// the failure happened before the server answered (connection lost, libpq out of memory).
    public var sqlState: String
    /// The server's primary message, or libpq's `PQerrorMessage`.
    public var message: String
    /// The statement text with `$n` placeholders, never the values.
    public var sql: String?

    public init(sqlState: String, message: String, sql: String?) {
        self.sqlState = sqlState; self.message = message; self.sql = sql
    }

    public var description: String {
        "PostgreSQL error \(sqlState.isEmpty ? "(no SQLSTATE)" : sqlState): \(message)" + (sql.map { " in \($0)" } ?? "")
    }

    /// Class 23505: a unique index or primary key refused the row.
    public var isUniqueViolation: Bool { sqlState == "23505" }
    /// Class 08 (connection exception) or no answer at all: the connection must be dropped.
    public var isConnectionFailure: Bool { sqlState.isEmpty || sqlState.hasPrefix("08") || sqlState == "57P01" }
    /// `2201B`: the `~` operator got a pattern PostgreSQL's regex engine rejects.
    public var isInvalidRegex: Bool { sqlState == "2201B" }

    /// The Parse error a client sees for this failure (the translation at the adapter boundary):
    /// 23505 → 137; an invalid regular expression (2201B) → 102; a statement cancelled by its time limit
    /// (57014) → 124; `\u0000` in a JSONB string (22P05) → 107;
    /// anything else → 1 with this as the cause.
    public var parseError: ParseError {
        if isUniqueViolation {
            return ParseError(.duplicateValue, "A duplicate value for a field with unique values was provided", cause: self)
        }
        if isInvalidRegex { return ParseError(.invalidQuery, "Invalid regular expression.", cause: self) }
        if sqlState == "57014" {
            // query_canceled: the connection's statement_timeout ran out (`PostgresAdapter` statementTimeLimit).
            return ParseError(.timeout, "The query took longer than the server allows and was stopped.", cause: self)
        }
        if sqlState == "22P05" {
            // JSONB refuses `\u0000` in strings (parse-server on PostgreSQL has the same limit).
            return ParseError(.invalidJSON, "Strings containing \\u0000 are not supported.", cause: self)
        }
        return ParseError(.internalServerError, "Internal server error.", cause: self)
    }
}
