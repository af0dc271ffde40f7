import PhotoWallCore
import PhotoWallHTTP

extension MockFacebookServer {
    /// Fields a user node offers. `email` needs the `email` permission and is the caller's own;
    /// `installed` appears (as `true`) only for app users, as Graph omits it otherwise;
    /// `friends` is the friends edge (the caller's own), taking `.limit(n)` and `{fields}`.
    static let userFields: Set<String> = ["id", "name", "first_name", "last_name", "short_name", "name_format",
                                          "email", "picture", "installed", "friends"]

    /// `GET /me`, `GET /{id}` (and `GET /{app-id}`) with `fields=` (default `id,name`).
    func node(_ call: GraphCall, _ id: String) throws(GraphError) -> Response {
        guard call.method == "GET" || call.method == "HEAD" else { throw GraphError.unsupportedMethod(call.method) }
        if id == configuration.appID { return try app(call) }
        let caller = try authenticate(call, missing: id == "me" ? GraphError.needsUserToken : GraphError.needsToken)
        let index = try resolveNode(id, caller: caller)
        let selections = FieldSelection.parse(call.parameter("fields") ?? "id,name")
        return .json(.object(try userObject(index, selections: selections, caller: caller, call: call)))
    }

    /// The JSON of user `index` restricted to `selections`.
    /// - Throws: 100 "Tried accessing nonexisting field" for a field users do not have.
    func userObject(_ index: Int, selections: [FieldSelection], caller: GraphCaller, call: GraphCall) throws(GraphError) -> [String: JSON] {
        let user = fixture.users[index]
        let isSelf = caller.userIndex == index
        var object: [String: JSON] = [:]
        for field in selections {
            switch field.name {
            case "id": object["id"] = .string(user.id)
            case "name": object["name"] = .string(user.name)
            case "first_name": object["first_name"] = .string(user.firstName)
            case "last_name": object["last_name"] = .string(user.lastName)
            case "short_name": object["short_name"] = .string(user.firstName)
            case "name_format": object["name_format"] = "{first} {last}"
            case "email":
                if isSelf, caller.record?.scopes.contains("email") == true, let email = user.email { object["email"] = .string(email) }
            case "installed":
                if state.world.withLock({ $0.appUsers[index] }) { object["installed"] = true }
            case "picture":
                let size = MockFacebookServer.pictureSize(type: field.modifiers["type"], width: field.modifiers["width"],
                                                          height: field.modifiers["height"])
                object["picture"] = ["data": pictureData(user, size: size, call: call)]
            case "friends":
                guard isSelf, let record = caller.record else { continue }
                var page = FriendsPageRequest(ownerIndex: index, record: record, call: call)
                if let limit = field.modifiers["limit"] { page.limitText = limit }
                page.fieldsText = field.subfields
                page.after = nil
                page.before = nil
                object["friends"] = try friendsPage(page)
            default:
                throw GraphError.nonexistingField(field.name)
            }
        }
        if object["id"] == nil, !selections.isEmpty { object["id"] = .string(user.id) } // Graph always echoes the id
        return object
    }

    /// `GET /app`: `{"id","name"}` of the one app, for parse-server's `validateAppId` (notes §3).
    func app(_ call: GraphCall) throws(GraphError) -> Response {
        guard call.method == "GET" || call.method == "HEAD" else { throw GraphError.unsupportedMethod(call.method) }
        _ = try authenticate(call, missing: GraphError.needsToken)
        return .json(["id": .string(configuration.appID), "name": .string(configuration.appName)])
    }

    /// `GET /me/permissions` lists the grants; `DELETE /me/permissions` removes the app: the user's
    /// tokens then fail with 190/458 and they leave their friends' lists (Graph "Permissions" docs).
    func permissions(_ call: GraphCall, _ id: String) throws(GraphError) -> Response {
        let (record, index) = try authenticateUser(call, missing: GraphError.needsUserToken)
        guard try resolveNode(id, caller: .user(record, index: index)) == index else { throw GraphError.noSuchObject(id) }
        switch call.method {
        case "GET", "HEAD":
            return .json(["data": .array(record.scopes.map { ["permission": .string($0), "status": "granted"] })])
        case "DELETE":
            state.removeApp(userIndex: index)
            return .json(["success": true])
        default:
            throw GraphError.unsupportedMethod(call.method)
        }
    }
}
