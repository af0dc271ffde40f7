internal import PhotoWallCurl
import Foundation
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

    /// The server's error message: Parse's `error` field; for an HTML page (a proxy's error page,
    /// such as nginx's `502 Bad Gateway`) the status and the page's `<title>`; else the body's first
    /// 300 bytes; else the status.
    var errorMessage: String {
        if let j = json, let m = j["error"]?.stringValue ?? j["message"]?.stringValue { return m }
        let text = String(decoding: body.prefix(300), as: UTF8.self).trimmingLineSpace()
        if header("Content-Type")?.lowercased().contains("html") == true || text.hasPrefix("<") {
            let title = text.range(of: "<title>", options: .caseInsensitive).flatMap { open in
                text[open.upperBound...].range(of: "</title>", options: .caseInsensitive).map { text[open.upperBound..<$0.lowerBound] }
            }.map { String($0).trimmingLineSpace() } ?? ""
            return title.isEmpty ? "HTTP \(status) (an HTML page)" : title.hasPrefix("\(status)") ? "HTTP \(title)" : "HTTP \(status): \(title)"
        }
        return text.isEmpty ? "HTTP \(status)" : text
    }
}
