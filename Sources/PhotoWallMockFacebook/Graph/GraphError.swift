import PhotoWallCore
import PhotoWallCrypto
import PhotoWallHTTP

/// A Graph API error, rendered as Graph does (notes §2.6; Graph "Handling Errors" docs):
/// HTTP 400 (unless `status` says otherwise) with
/// `{"error":{"message","type","code","error_subcode"?,"fbtrace_id"}}`.
struct GraphError: Error, Sendable {
    var message: String
    var type: String = "OAuthException"
    var code: Int
    var subcode: Int?
    var status: Int = 400

    func response(headers extra: HTTPHeaders = HTTPHeaders()) -> Response {
        var error: [String: JSON] = ["message": .string(message), "type": .string(type), "code": .number(Double(code)),
                                     "fbtrace_id": .string(GraphError.traceID())]
        if let subcode { error["error_subcode"] = .number(Double(subcode)) }
        var headers = extra
        if code == 190 {
            // Graph also names the failure in WWW-Authenticate (seen in client bug reports).
            headers.set("WWW-Authenticate", "OAuth \"Facebook Platform\" \"invalid_token\" \"\(message.replacingQuotes)\"")
        }
        return .json(["error": .object(error)], status: status, headers: headers)
    }

    /// 11 base64url characters, like Graph's `fbtrace_id`.
    static func traceID() -> String { String(Base64.urlEncode(Crypto.randomBytes(9)).prefix(11)) }

    // MARK: Access tokens (code 190)

    /// Unknown or malformed token: 190 with no subcode (facebook-ios-sdk#2576).
    static let invalidToken = GraphError(message: "Invalid OAuth access token - Cannot parse access token", code: 190)

    /// 190/463 with Graph's message shape (snarfed/bridgy#59).
    static func expired(at expiresAt: Int, now: Int) -> GraphError {
        GraphError(message: "Error validating access token: Session has expired on \(WallClock.graphDate(expiresAt)). "
                   + "The current time is \(WallClock.graphDate(now)).", code: 190, subcode: 463)
    }

    /// 190 with subcode 460, 467 or 458.
    static func invalidated(_ reason: AccessTokenRecord.Invalidation, appID: String) -> GraphError {
        let detail: String
        switch reason {
        case .passwordChanged:
            detail = "The session has been invalidated because the user changed their password or Facebook has changed the session for security reasons."
        case .loggedOut:
            detail = "The session is invalid because the user logged out."
        case .appRemoved:
            detail = "The user has not authorized application \(appID)."
        }
        return GraphError(message: "Error validating access token: " + detail, code: 190, subcode: reason.subcode)
    }

    /// `/me` without a user token (code 2500).
    static let needsUserToken = GraphError(message: "An active access token must be used to query information about the current user.", code: 2500)

    /// Any other node without a token (code 104).
    static let needsToken = GraphError(message: "An access token is required to request this resource.", code: 104)

    // MARK: appsecret_proof (code 100, GraphMethodException; notes §2.5)

    static let missingProof = GraphError(message: "API calls from the server require an appsecret_proof argument",
                                         type: "GraphMethodException", code: 100)
    static let wrongProof = GraphError(message: "Invalid appsecret_proof provided in the API argument",
                                       type: "GraphMethodException", code: 100)

    // MARK: Requests

    static func unknownPath(_ rest: String) -> GraphError {
        GraphError(message: "Unknown path components: \(rest)", code: 2500)
    }

    static func noSuchObject(_ id: String) -> GraphError {
        GraphError(message: "Unsupported get request. Object with ID '\(id)' does not exist, cannot be loaded due to missing permissions, or does not support this operation. Please read the Graph API documentation at https://developers.facebook.com/docs/graph-api",
                   type: "GraphMethodException", code: 100, subcode: 33)
    }

    static func unsupportedMethod(_ method: String) -> GraphError {
        GraphError(message: "Unsupported \(method.lowercased()) request.", type: "GraphMethodException", code: 100)
    }

    static func nonexistingField(_ field: String, nodeType: String = "User") -> GraphError {
        GraphError(message: "(#100) Tried accessing nonexisting field (\(field)) on node type (\(nodeType))", code: 100)
    }

    static func badParameter(_ message: String) -> GraphError {
        GraphError(message: "(#100) \(message)", code: 100)
    }
}

fileprivate extension String {
    /// The text with `"` replaced by `'`, for a quoted header parameter.
    var replacingQuotes: String { String(map { $0 == "\"" ? "'" : $0 }) }
}
