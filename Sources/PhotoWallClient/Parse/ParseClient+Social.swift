import PhotoWallCore

extension ParseClient {
    /// `POST /users` with `authData` (e.g. `{"facebook":{"id","access_token"}}`): signs up or logs in.
    /// - Returns: the session; the client's credential is switched to its token.
    /// - Throws: `.rejected` with Parse 101 (token refused), 208, 252; network errors.
    /// - Source: parse-rest-api.md §6.
    public func logIn(authData: JSON) throws(ClientError) -> Session {
        let json = try send("POST", "/users", json: ["authData": authData], credential: .anonymous, action: "Logging in")
        guard let id = json["objectId"]?.stringValue, let token = json["sessionToken"]?.stringValue else {
            throw ClientError(.protocolError, "The login answer has no objectId or sessionToken.")
        }
        server.credential = .sessionToken(token)
        return Session(objectId: id, username: json["username"]?.stringValue ?? "", sessionToken: token, fbId: json["fbId"]?.stringValue)
    }

    /// `POST /functions/<name>` with JSON params. - Returns: the `result` value.
    /// - Throws: `.rejected` with the Parse code (141 for an unknown function); network errors.
    public func callFunction(_ name: String, params: JSON = [:]) throws(ClientError) -> JSON {
        let json = try send("POST", "/functions/\(name)", json: params, action: "Calling \(name)")
        return json["result"] ?? .null
    }
}
