import PhotoWallCore
import PhotoWallHTTP

/// What one friends page is asked for: whose friends, as whom, and the paging parameters.
struct FriendsPageRequest: Sendable {
    var ownerIndex: Int
    var record: AccessTokenRecord
    var call: GraphCall
    var limitText: String?
    var fieldsText: String?
    var after: String?
    var before: String?

    init(ownerIndex: Int, record: AccessTokenRecord, call: GraphCall) {
        self.ownerIndex = ownerIndex
        self.record = record
        self.call = call
        limitText = call.parameter("limit")
        fieldsText = call.parameter("fields")
        after = call.parameter("after")
        before = call.parameter("before")
    }
}

extension MockFacebookServer {
    /// Default and largest `limit` of the friends edge (Graph's default page is 25; it caps some edges).
    static let defaultFriendsLimit = 25
    static let maxFriendsLimit = 5000

    /// `GET /me/friends`, `/{id}/friends` (only the caller's own), `/me/friends/{other}` (is `other` a friend?).
    ///
    /// Graph v2+ rules (notes §2.3): only friends who are app users are listed, and only if the token
    /// has `user_friends` (otherwise `data` is empty); `summary.total_count` counts all friends. Friends
    /// come in numeric id order; cursors encode an id, so a removed friend does not break paging.
    func friends(_ call: GraphCall, _ id: String, other: String?) throws(GraphError) -> Response {
        guard call.method == "GET" || call.method == "HEAD" else { throw GraphError.unsupportedMethod(call.method) }
        let (record, index) = try authenticateUser(call, missing: id == "me" ? GraphError.needsUserToken : GraphError.needsToken)
        guard try resolveNode(id, caller: .user(record, index: index)) == index else { throw GraphError.noSuchObject(id) }
        if let other {
            guard let otherIndex = fixture.indexByID[other] else { return .json(["data": []]) }
            let (isFriend, total) = state.world.withLock { w -> (Bool, Int) in
                let list = w.friends[index]
                let p = ProviderState.lowerBound(list, otherIndex)
                return (w.appUsers[otherIndex] && p < list.count && list[p] == otherIndex, list.count)
            }
            let visible = isFriend && record.scopes.contains("user_friends")
            let entry: [JSON] = visible ? [.object(try friendEntry(otherIndex, FieldSelection.parse(call.parameter("fields") ?? "id,name"), call))] : []
            return .json(["data": .array(entry), "summary": ["total_count": .number(Double(total))]])
        }
        return .json(try friendsPage(FriendsPageRequest(ownerIndex: index, record: record, call: call)))
    }

    /// `{"data":[…],"paging":{"cursors":{"before","after"},"previous"?,"next"?},"summary":{"total_count":N}}`;
    /// `paging` is absent when `data` is empty, `next` when nothing follows (the end of the list).
    /// - Throws: 100 for a bad `limit` or cursor, or a field friends do not have.
    func friendsPage(_ page: FriendsPageRequest) throws(GraphError) -> JSON {
        var limit = MockFacebookServer.defaultFriendsLimit
        if let text = page.limitText {
            guard let n = Int(text), n >= 1 else { throw GraphError.badParameter("The parameter limit must be a positive integer") }
            limit = min(n, MockFacebookServer.maxFriendsLimit)
        }
        let selections = FieldSelection.parse(page.fieldsText ?? "id,name")
        let (visible, total) = state.world.withLock { w in
            (page.record.scopes.contains("user_friends") ? w.friends[page.ownerIndex].filter { w.appUsers[$0] } : [],
             w.friends[page.ownerIndex].count)
        }
        let users = fixture.users
        /// First position whose id is not below `id` (visible is in id order).
        func position(of id: String) -> Int {
            var low = 0, high = visible.count
            while low < high {
                let mid = (low + high) / 2
                if FacebookFixture.idPrecedes(users[visible[mid]].id, id) { low = mid + 1 } else { high = mid }
            }
            return low
        }
        var start = 0, end = min(limit, visible.count)
        if let cursor = page.after {
            guard let id = MockFacebookServer.decodeCursor(cursor) else { throw GraphError.badParameter("Invalid after cursor") }
            var p = position(of: id)
            if p < visible.count, users[visible[p]].id == id { p += 1 }
            start = p
            end = min(visible.count, p + limit)
        } else if let cursor = page.before {
            guard let id = MockFacebookServer.decodeCursor(cursor) else { throw GraphError.badParameter("Invalid before cursor") }
            end = position(of: id)
            start = max(0, end - limit)
        }
        var result: [String: JSON] = ["summary": ["total_count": .number(Double(total))]]
        var data: [JSON] = []
        for i in visible[start..<end] { data.append(.object(try friendEntry(i, selections, page.call))) }
        result["data"] = .array(data)
        if start < end {
            let first = MockFacebookServer.encodeCursor(users[visible[start]].id)
            let last = MockFacebookServer.encodeCursor(users[visible[end - 1]].id)
            var paging: [String: JSON] = ["cursors": ["before": .string(first), "after": .string(last)]]
            if end < visible.count { paging["next"] = .string(pageLink(page, limit: limit, cursor: ("after", last))) }
            if start > 0 { paging["previous"] = .string(pageLink(page, limit: limit, cursor: ("before", first))) }
            result["paging"] = .object(paging)
        }
        return .object(result)
    }

    /// A friend as listed: `fields` from the user fields, minus the caller-only ones.
    func friendEntry(_ index: Int, _ selections: [FieldSelection], _ call: GraphCall) throws(GraphError) -> [String: JSON] {
        for field in selections where ["email", "friends"].contains(field.name) { throw GraphError.nonexistingField(field.name) }
        return try userObject(index, selections: selections, caller: .app, call: call)
    }

    /// Absolute URL of the neighbouring page: the same parameters (token, proof, fields), a new cursor.
    func pageLink(_ page: FriendsPageRequest, limit: Int, cursor: (String, String)) -> String {
        var pairs: [(String, String)] = []
        let owner = fixture.users[page.ownerIndex].id
        for (name, value) in page.call.parameters where !["limit", "after", "before", "fields"].contains(name) {
            pairs.append((name, value))
        }
        if let fields = page.fieldsText { pairs.append(("fields", fields)) }
        pairs.append(("limit", String(limit)))
        pairs.append(cursor)
        return page.call.baseURL + page.call.versionPrefix + "/\(owner)/friends?" + Encoding.query(pairs)
    }

    /// Opaque to clients: base64url of `"friend:" + id`.
    static func encodeCursor(_ id: String) -> String { Base64.urlEncode(Array(("friend:" + id).utf8)) }

    static func decodeCursor(_ cursor: String) -> String? {
        guard let bytes = Base64.urlDecode(cursor) else { return nil }
        let text = String(decoding: bytes, as: UTF8.self)
        guard text.hasPrefix("friend:") else { return nil }
        let id = String(text.dropFirst(7))
        return FacebookFixture.isValidID(id) ? id : nil
    }
}
