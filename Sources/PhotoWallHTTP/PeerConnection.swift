internal import CMHDShim
import Synchronization

/// The client side of a request's connection, as far as a streamed body's sink needs it: whether the
/// client has hung up. The engine learns of a hang-up by reading the socket, which it may do late: a
/// FIN that arrives with or right behind the last body bytes can go unseen by libmicrohttpd 0.9.75
/// (epoll, edge-triggered) until its idle timeout, and under load the event thread reaches it only
/// after the connections ahead of it. Asking the socket directly (`hasHungUp`) answers at once.
///
/// Given to a sink by `RequestBodySink.attach(_:)` before its first `write`. Valid until the request
/// completes: the engine then `detach`es it, before libmicrohttpd closes the socket (whose number the
/// kernel may hand to the next connection), and from then on it answers false.
public final class PeerConnection: Sendable {
    /// The socket, -1 once detached. The lock is held around each `poll`, so the socket can't be
    /// closed and its number reused by another connection in the middle of one.
    private let socket: Mutex<Int32>

    init(socket: Int32) { self.socket = Mutex(socket) }

    /// Whether the client has reset the connection, or sent its FIN and the engine has read every byte
    /// before it (while bytes are left, the engine will read them and then the FIN). Never waits.
    /// False once the request has completed (the engine has then acted on the hang-up).
    public func hasHungUp() -> Bool {
        socket.withLock { fd in fd >= 0 && CMHDShim_socket_peer_hung_up(fd) == 1 }
    }

    /// Forgets the socket (the request completed; libmicrohttpd is about to close it).
    func detach() { socket.withLock { $0 = -1 } }
}
