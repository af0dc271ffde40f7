import PhotoWallCore
import PhotoWallStorage

/// Carries `ObjectEvent`s between instances that share one database, through a `ChangeNotifier`
/// (PostgreSQL `LISTEN`/`NOTIFY`); with SQLite there is one process and none of this runs.
///
/// Each event this instance commits is encoded (`ObjectEvent.json`) and published; events from the
/// other instances are decoded and handed to this instance's `ObjectEventBus` listeners
/// (`publishFromOtherInstance`), so LiveQuery decides them per viewer here, by the same rules as a
/// local write. The stored objects travel with the event (the original of an update and a deleted
/// object can't be read again); the notifier moves encodings too large for one notification
/// through the database.
public enum ClusterEvents {
    /// Connects `bus` to `notifier` both ways and starts listening.
    public static func connect(_ bus: ObjectEventBus, through notifier: any ChangeNotifier, logger: Logger) {
        bus.listenLocal { event in notifier.publish(event.json.text) }
        notifier.listen { text in
            do { bus.publishFromOtherInstance(try ObjectEvent(json: try JSON.parse(text))) } catch {
                logger.error("undecodable event from another instance: \(error)")
            }
        }
    }
}

extension ObjectEvent {
    /// `{"op":"saved","original":…,"current":…}`, `{"op":"deleted","object":…}` or
    /// `{"op":"sessionsEnded","userId":…,"sessionToken":…}`; objects as `storedJSON` (internal `_`
    /// fields included: this never leaves the servers and their database).
    public var json: JSON {
        switch self {
        case .saved(let original, let current):
            var o: [String: JSON] = ["op": "saved", "className": .string(current.className),
                                     "objectId": .string(current.objectId), "current": Self.encode(current)]
            if let original { o["original"] = Self.encode(original) }
            return .object(o)
        case .deleted(let object):
            return .object(["op": "deleted", "className": .string(object.className), "objectId": .string(object.objectId),
                            "object": Self.encode(object)])
        case .sessionsEnded(let userId, let token):
            return .object(["op": "sessionsEnded", "userId": .string(userId), "sessionToken": token.map(JSON.string) ?? .null])
        }
    }

    /// Reads `json`.
    /// - Throws: `ParseError` 107 (invalid JSON) when the shape is wrong.
    public init(json: JSON) throws(ParseError) {
        let bad = ParseError(.invalidJSON, "bad cluster event")
        switch json["op"]?.stringValue {
        case "saved":
            guard let current = json["current"] else { throw bad }
            self = .saved(original: try json["original"].map { j throws(ParseError) in try Self.decode(j) }, current: try Self.decode(current))
        case "deleted":
            guard let object = json["object"] else { throw bad }
            self = .deleted(try Self.decode(object))
        case "sessionsEnded":
            guard let userId = json["userId"]?.stringValue else { throw bad }
            self = .sessionsEnded(userId: userId, sessionToken: json["sessionToken"]?.stringValue)
        default:
            throw bad
        }
    }

    static func encode(_ o: StoredObject) -> JSON {
        var j: [String: JSON] = ["className": .string(o.className), "objectId": .string(o.objectId),
                                 "createdAt": .number(Double(o.createdAt.millisecondsSince1970)),
                                 "updatedAt": .number(Double(o.updatedAt.millisecondsSince1970)),
                                 "fields": .object(o.fields)]
        if let acl = o.acl { j["ACL"] = acl.json }
        return .object(j)
    }

    static func decode(_ j: JSON) throws(ParseError) -> StoredObject {
        guard let className = j["className"]?.stringValue, let objectId = j["objectId"]?.stringValue,
              let created = j["createdAt"]?.doubleValue, let updated = j["updatedAt"]?.doubleValue,
              let fields = j["fields"]?.objectValue else { throw ParseError(.invalidJSON, "bad cluster event object") }
        return StoredObject(className: className, objectId: objectId,
                            createdAt: ParseDate(millisecondsSince1970: Int64(created)),
                            updatedAt: ParseDate(millisecondsSince1970: Int64(updated)),
                            fields: fields, acl: try j["ACL"].map { a throws(ParseError) in try ACL(json: a) })
    }
}
