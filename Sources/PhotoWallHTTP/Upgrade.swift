internal import CMHDShim
import Synchronization

/// A route that switches protocols (WebSocket): the `101` answer's headers and who takes the socket.
public struct UpgradeRoute: Sendable {
    /// Headers of the `101 Switching Protocols` answer; must include `Upgrade` (libmicrohttpd refuses
    /// the response otherwise) and, for WebSocket, `Sec-WebSocket-Accept`. `Connection: Upgrade` is
    /// added by libmicrohttpd.
    public var headers: [(String, String)]
    /// Called once the `101` was sent, on a libmicrohttpd event thread: must not block (hand the
    /// connection to an event loop and return).
    public var onUpgrade: @Sendable (UpgradedConnection) -> Void
    /// Called instead of `onUpgrade` when the connection ended before the switch (e.g. the client left
    /// before the `101` was sent), so whatever the route reserved for it can be released.
    public var onAbandoned: @Sendable () -> Void

    public init(headers: [(String, String)], onUpgrade: @escaping @Sendable (UpgradedConnection) -> Void,
                onAbandoned: @escaping @Sendable () -> Void = {}) {
        self.headers = headers; self.onUpgrade = onUpgrade; self.onAbandoned = onAbandoned
    }
}

/// The socket of a connection that switched protocols, owned by whoever `UpgradeRoute.onUpgrade`
/// handed it to until `close()`.
///
/// The descriptor is non-blocking. Never `close(2)` it: `close()` asks libmicrohttpd to
/// (`MHD_upgrade_action(urh, MHD_UPGRADE_ACTION_CLOSE)`), which also ends the HTTP connection.
public final class UpgradedConnection: Sendable {
    /// The connected socket (read and write it; don't close it).
    public let socket: Int32
    /// Bytes the client sent after the request head that libmicrohttpd already read: they come first.
    public let bytesAlreadyRead: [UInt8]
    /// The peer address as text (`127.0.0.1`), as the request head had it.
    public let remoteAddress: String
    /// `struct MHD_UpgradeResponseHandle *` as bits; zeroed by the first `close()`.
    private let handle: Atomic<UInt>

    init(socket: Int32, bytesAlreadyRead: [UInt8], remoteAddress: String, handle: OpaquePointer) {
        self.socket = socket; self.bytesAlreadyRead = bytesAlreadyRead; self.remoteAddress = remoteAddress
        self.handle = Atomic(UInt(bitPattern: handle))
    }

    /// Ends the connection (libmicrohttpd closes the socket). Idempotent; any thread. The socket
    /// number may be reused right after: stop polling it first.
    public func close() {
        let bits = handle.exchange(0, ordering: .acquiringAndReleasing)
        guard bits != 0, let urh = OpaquePointer(bitPattern: bits) else { return }
        _ = CMHDShim_upgrade_close(urh)
    }
}
