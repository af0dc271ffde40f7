import Foundation
import PhotoWallCore

/// One object held the way Parse SDKs that save whole objects hold it (the Swift SDK): a local
/// copy into which every response is merged, and a `save` that sends every key of the copy,
/// including the ones the server set (`user`, `userFBId`, files with their signed URLs, …).
///
/// ```swift
/// let comment = WholeObjectClient(server: s, className: "WallImageComment", key: .session(token),
///                                 fields: ["comment": "hi", "imageObjectId": .string(imageId)])
/// _ = try await comment.save()            // POST, then merges objectId, createdAt, userFBId, …
/// comment["comment"] = "edited"
/// let r = try await comment.save(via: .batch)  // PUT of the whole object inside /batch
/// ```
public final class WholeObjectClient: @unchecked Sendable {
    // @unchecked Sendable: one test task uses a client at a time (its `fields` are not shared).
    /// How a save reaches the server: its own request, a `/batch` sub-request, or `POST` with `_method`.
    public enum Route: CaseIterable, Sendable { case direct, batch, methodOverride }

    public let server: ParseTestServer
    public let className: String
    public var key: ParseTestServer.Key
    /// The local copy, wire form, as the SDK keeps it.
    public private(set) var fields: [String: JSON]

    public init(server: ParseTestServer, className: String, key: ParseTestServer.Key, fields: [String: JSON] = [:]) {
        self.server = server; self.className = className; self.key = key; self.fields = fields
    }

    public var objectId: String? { fields["objectId"]?.stringValue }

    public subscript(name: String) -> JSON? {
        get { fields[name] }
        set { fields[name] = newValue }
    }

    var collectionPath: String { className == "_User" ? "/users" : "/classes/\(className)" }

    /// Sends the whole local copy: `POST` when it has no `objectId` yet, else `PUT` (minus the
    /// read-only `objectId`, `createdAt`, `updatedAt`, as the SDKs leave them out), by `route`.
    /// A 2xx response is merged into the copy. - Returns: the reply (for a batch, the sub-result:
    /// `{"success":…}` becomes a 200 reply with its body, `{"error":…}` a 400 one).
    @discardableResult
    public func save(via route: Route = .direct) async throws -> ParseTestServer.Reply {
        var body = fields
        for k in ["objectId", "createdAt", "updatedAt"] { body[k] = nil }
        let method = objectId == nil ? "POST" : "PUT"
        let path = objectId.map { collectionPath + "/" + $0 } ?? collectionPath
        let reply: ParseTestServer.Reply
        switch route {
        case .direct:
            reply = try await server.request(method, path, json: .object(body), key: key)
        case .methodOverride:
            body["_method"] = .string(method)
            reply = try await server.request("POST", path, json: .object(body), key: key)
        case .batch:
            let r = try await server.request("POST", "/batch", json: ["requests": [
                ["method": .string(method), "path": .string("/parse" + path), "body": .object(body)],
            ]], key: key)
            let first = r.json.arrayValue?.first ?? .null
            if let success = first["success"] {
                reply = ParseTestServer.Reply(status: 200, headers: [:], body: Data(success.serialized))
            } else {
                reply = ParseTestServer.Reply(status: r.status == 200 ? 400 : r.status, headers: [:],
                                              body: Data((first["error"] ?? r.json).serialized))
            }
        }
        if (200..<300).contains(reply.status) { merge(reply.json) }
        return reply
    }

    /// `GET`s the object and merges it into the copy.
    @discardableResult
    public func fetch() async throws -> ParseTestServer.Reply {
        let r = try await server.request("GET", collectionPath + "/" + (objectId ?? ""), key: key)
        if r.status == 200 { merge(r.json) }
        return r
    }

    /// Merges a response's fields into the local copy, as the SDKs do.
    public func merge(_ response: JSON) {
        for (k, v) in response.objectValue ?? [:] { fields[k] = v }
    }
}
