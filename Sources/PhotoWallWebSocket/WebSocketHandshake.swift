import PhotoWallCore
import PhotoWallCrypto
import PhotoWallHTTP

/// The server side of the WebSocket opening handshake (RFC 6455 §4.2).
public enum WebSocketHandshake {
    /// The GUID RFC 6455 §1.3 appends to the client's key.
    static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// `Sec-WebSocket-Accept` for a client's `Sec-WebSocket-Key`: base64(SHA-1(key + GUID)).
    /// RFC 6455 §1.3's example: `dGhlIHNhbXBsZSBub25jZQ==` → `s3pPLMBiTxaQ9kYGzzhZRbK+xOo=`.
    public static func accept(key: String) -> String {
        Base64.encode(Digest.hash(.sha1, Array((key + guid).utf8)))
    }

    /// Whether `head` asks for a WebSocket (`Upgrade: websocket`), whatever else is wrong with it.
    public static func isUpgradeRequest(_ head: RequestHead) -> Bool {
        head.headers["Upgrade"]?.lowercased().split(separator: ",").contains { $0.trimmingWhitespace() == "websocket" } ?? false
    }

    /// Checks a WebSocket opening request.
    /// - Returns: the `101` answer's headers (`Upgrade`, `Sec-WebSocket-Accept`), or the refusal to send
    ///   instead: 400 `{"error"}` for a method other than GET, no `Connection: Upgrade` or a key that is not
    ///   16 bytes in base64; 426 with `Sec-WebSocket-Version: 13` for another version (RFC 6455 §4.2.2, §4.4).
    public static func check(_ head: RequestHead) -> Result<[(String, String)], HTTPRefusal> {
        func refuse(_ status: Int, _ message: String) -> Result<[(String, String)], HTTPRefusal> {
            .failure(HTTPRefusal(response: HTTPError(status: status, message: message).response))
        }
        guard head.method == "GET" else { return refuse(400, "A WebSocket handshake is a GET.") }
        let connection = head.headers["Connection"]?.lowercased() ?? ""
        guard connection.split(separator: ",").contains(where: { $0.trimmingWhitespace() == "upgrade" }) else {
            return refuse(400, "A WebSocket handshake needs Connection: Upgrade.")
        }
        guard head.headers["Sec-WebSocket-Version"]?.trimmingWhitespace() == "13" else {
            var response = HTTPError(status: 426, message: "Only WebSocket version 13 is supported.").response
            response.headers.set("Sec-WebSocket-Version", "13")
            return .failure(HTTPRefusal(response: response))
        }
        guard let key = head.headers["Sec-WebSocket-Key"]?.trimmingWhitespace(), Base64.decode(key)?.count == 16 else {
            return refuse(400, "Sec-WebSocket-Key must be 16 bytes in base64.")
        }
        return .success([("Upgrade", "websocket"), ("Sec-WebSocket-Accept", accept(key: key))])
    }
}

/// A handshake answered with an HTTP error instead of `101`.
public struct HTTPRefusal: Error, Sendable {
    public var response: Response
}
