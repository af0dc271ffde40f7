internal import CMicroHTTPD

// libmicrohttpd's C callbacks. Global functions, never closures in top-level code (notes pitfall 5).
// Trampolines only forward: recover the owner from `cls`, then make one method call.
// `cls` is always the `Engine`, kept retained by `HTTPServer` while the daemon runs.

/// `MHD_AccessHandlerCallback`: called for the head, for every body piece, at the end of the body,
/// and again after a suspended connection is resumed.
func engineAccessHandler(_ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
                         _ url: UnsafePointer<CChar>?, _ method: UnsafePointer<CChar>?,
                         _ version: UnsafePointer<CChar>?, _ uploadData: UnsafePointer<CChar>?,
                         _ uploadDataSize: UnsafeMutablePointer<Int>?,
                         _ requestSlot: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) -> MHD_Result {
    guard let cls, let connection, let uploadDataSize, let requestSlot else { return .NO }
    return Engine.from(cls).access(connection: connection, url: url, method: method, uploadData: uploadData,
                                   uploadDataSize: uploadDataSize, requestSlot: requestSlot)
}

/// `MHD_RequestCompletedCallback`: once per request whose access handler ran, whatever the outcome.
func engineRequestCompleted(_ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
                            _ requestSlot: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                            _ code: MHD_RequestTerminationCode) {
    guard let cls, let requestSlot, let raw = requestSlot.pointee else { return }
    requestSlot.pointee = nil
    // Balances the passRetained of the access handler's first call.
    let context = Unmanaged<RequestContext>.fromOpaque(raw).takeRetainedValue()
    Engine.from(cls).requestCompleted(context, code: code)
}

/// `CMHDShim_LogFunction`: one formatted libmicrohttpd error-log line.
func engineLog(_ cls: UnsafeMutableRawPointer?, _ message: UnsafePointer<CChar>?) {
    guard let cls, let message else { return }
    Engine.from(cls).logLibraryMessage(String(cString: message))
}

/// Bag for `MHD_get_connection_values`; lives on the caller's stack frame for one synchronous call.
final class KeyValueCollector {
    var pairs: [(String, String)] = []
}

/// `MHD_KeyValueIterator`: appends one header or query argument (a missing value becomes "").
func collectKeyValue(_ cls: UnsafeMutableRawPointer?, _ kind: MHD_ValueKind,
                     _ key: UnsafePointer<CChar>?, _ value: UnsafePointer<CChar>?) -> MHD_Result {
    guard let cls, let key else { return .YES }
    let collector = Unmanaged<KeyValueCollector>.fromOpaque(cls).takeUnretainedValue()
    collector.pairs.append((String(cString: key), value.map { String(cString: $0) } ?? ""))
    return .YES
}
