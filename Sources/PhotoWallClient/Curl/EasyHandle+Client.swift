internal import PhotoWallCurl
import PhotoWallCore

// The client's view of the shared libcurl wrapper (PhotoWallCurl): its failures as `ClientError`s
// and Parse-shaped response bodies.

extension EasyHandle {
    /// A new handle. - Throws: `ClientError` `.internalError` when libcurl cannot allocate one.
    static func forClient() throws(ClientError) -> EasyHandle {
        do { return try EasyHandle() } catch { throw ClientError(error) }
    }

    /// `perform` with its failure as a `ClientError` (same codes, see `ClientError.init(_:)`).
    func send(_ request: HTTPRequest, timeouts: Timeouts, progress: ((Int64) -> Bool)? = nil) throws(ClientError) -> HTTPResponse {
        do { return try perform(request, timeouts: timeouts, progress: progress) } catch { throw ClientError(error) }
    }
}

extension ClientError {
    /// The client error for a failed transfer.
    init(_ e: CurlError) {
        let code: Code
        switch e.code {
        case .unreachable: code = .unreachable
        case .badURL: code = .badURL
        case .transport: code = .transport
        case .cancelled: code = .cancelled
        case .fileError: code = .fileError
        case .responseTooLarge: code = .protocolError
        case .internalError: code = .internalError
        }
        self.init(code, e.message, systemError: e.systemError)
        curlCode = e.curlCode
    }
}

extension HTTPResponse {
    /// The body parsed as JSON, or nil when it isn't JSON.
    var json: JSON? { try? JSON.parse(body) }

    /// The server's error message: Parse's `error` field, else the body text, else the status.
    var errorMessage: String {
        if let j = json, let m = j["error"]?.stringValue ?? j["message"]?.stringValue { return m }
        let text = String(decoding: body.prefix(300), as: UTF8.self).trimmingLineSpace()
        return text.isEmpty ? "HTTP \(status)" : text
    }
}
