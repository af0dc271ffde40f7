internal import CMicroHTTPD

import PhotoWallCore
import Synchronization

/// What the upgrade handler needs. The request's context holds it until the request completes, which
/// libmicrohttpd reports only after the upgraded connection was closed, so the handler's unretained `cls`
/// stays valid; whichever comes first of the handler and the completion `claim`s it.
final class UpgradeBox: Sendable {
    let route: UpgradeRoute
    let remoteAddress: String
    private let claimed = Atomic<Bool>(false)
    init(route: UpgradeRoute, remoteAddress: String) { self.route = route; self.remoteAddress = remoteAddress }
    /// True for the first caller only.
    func claim() -> Bool { !claimed.exchange(true, ordering: .acquiringAndReleasing) }
}

/// `MHD_UpgradeHandler`: the `101` is sent; hands the socket to the route.
func engineUpgradeHandler(_ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?, _ requestSlot: UnsafeMutableRawPointer?,
                          _ extraIn: UnsafePointer<CChar>?, _ extraInSize: Int, _ socket: Int32, _ urh: OpaquePointer?) {
    guard let cls else { return }
    let box = Unmanaged<UpgradeBox>.fromOpaque(cls).takeUnretainedValue() // held by the request's context
    guard let urh, box.claim() else { return }
    var extra: [UInt8] = []
    if let extraIn, extraInSize > 0 {
        extra = Array(UnsafeRawBufferPointer(start: extraIn, count: extraInSize))
    }
    box.route.onUpgrade(UpgradedConnection(socket: socket, bytesAlreadyRead: extra, remoteAddress: box.remoteAddress, handle: urh))
}

extension Engine {
    /// Queues `101 Switching Protocols` with the route's headers; libmicrohttpd calls
    /// `engineUpgradeHandler` once it is sent.
    func queueUpgrade(_ context: RequestContext, _ route: UpgradeRoute, connection: OpaquePointer) -> MHD_Result {
        let box = UpgradeBox(route: route, remoteAddress: context.head.remoteAddress)
        context.upgradeBox = box // until requestCompleted (which abandons it if the handler never ran)
        guard let raw = MHD_create_response_for_upgrade(engineUpgradeHandler, Unmanaged.passUnretained(box).toOpaque()) else {
            logger.warning("MHD_create_response_for_upgrade failed", ["request.id": context.head.requestID])
            return .NO
        }
        for (name, value) in route.headers { _ = MHD_add_response_header(raw, name, value) }
        _ = MHD_add_response_header(raw, "X-Request-Id", context.head.requestID)
        let result = MHD_queue_response(connection, 101, raw)
        MHD_destroy_response(raw)
        context.phase = .responded
        if result == .YES {
            context.status = 101
        } else {
            logger.warning("MHD_queue_response refused the upgrade", ["request.id": context.head.requestID])
        }
        return result
    }
}
