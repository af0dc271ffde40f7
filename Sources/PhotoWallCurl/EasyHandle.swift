internal import CCurl
internal import CCurlShim
import PhotoWallCore
#if canImport(Glibc)
import Glibc
#endif

/// libcurl's `CURL *` (imported as a raw pointer because `CURL` is `typedef void`).
typealias CurlEasyPointer = UnsafeMutableRawPointer

/// One libcurl easy handle: one HTTP/1.1 connection (kept alive between requests) and the state
/// its callbacks write into while `perform` runs.
///
/// Callbacks reach this object through an **unretained** context pointer set in `perform`; the
/// handle outlives every transfer it runs (curl only calls back inside `curl_easy_perform`).
/// Not thread-safe: use one handle on one thread at a time.
package final class EasyHandle {
    let rawHandle: CurlEasyPointer
    /// `CURLOPT_ERRORBUFFER` (CURL_ERROR_SIZE bytes), owned here so it outlives every transfer.
    private let errorBuffer: UnsafeMutablePointer<CChar>

    // MARK: transfer state, written by the callbacks in CurlCallbacks.swift

    var responseHeaders: [(name: String, value: String)] = []
    var responseBody: [UInt8] = []
    /// Bigger bodies abort the transfer (`CURLE_WRITE_ERROR`).
    package var maxResponseBodyBytes = 8 << 20
    /// When set for a transfer (`perform(_:timeouts:responseFile:)`), a 2xx response body is
    /// written to this descriptor at its current offset instead of memory.
    var responseFile: Int32?
    /// Bytes written to `responseFile` in this transfer.
    var responseFileBytes: Int64 = 0
    /// errno of a failed write to `responseFile`.
    var fileFailure: Int32?
    var bodyOverflow = false
    var requestBody: RequestBodyReader?
    /// Called with the request body bytes sent so far; returns false to abort the transfer.
    var uploadProgress: ((Int64) -> Bool)?
    /// Set when `uploadProgress` asked for the abort (so the error is `cancelled`, not transport).
    var abortedByProgress = false

    /// - Throws: `CurlError.Code.internalError` when libcurl cannot allocate a handle.
    package init() throws(CurlError) {
        CurlGlobal.ensureInitialized()
        guard let h = curl_easy_init() else { throw CurlError(.internalError, "curl_easy_init failed.") }
        rawHandle = h
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    }

    deinit {
        curl_easy_cleanup(rawHandle)
        errorBuffer.deallocate()
    }

    /// Runs one request on this handle and returns the response.
    ///
    /// The handle is reset first (`curl_easy_reset` keeps the live connection, so requests to the
    /// same host reuse it).
    /// - Parameters:
    ///   - request: method, URL, headers and body.
    ///   - timeouts: connect timeout and stall detection.
    ///   - responseFile: when given, a 2xx response body is written to this open descriptor (at its
    ///     current offset) instead of `HTTPResponse.body`; other statuses keep their body in memory.
    ///   - progress: called on this thread with the body bytes sent so far (at least once a
    ///     second while the transfer runs); return false to abort.
    /// - Throws: `CurlError` `.unreachable` (connect/DNS failure), `.transport` (the connection
    ///   broke or stalled), `.cancelled` (progress returned false), `.fileError` (the body could
    ///   not be read or the response file written), `.responseTooLarge` (response body over
    ///   `maxResponseBodyBytes`).
    package func perform(_ request: HTTPRequest, timeouts: Timeouts, responseFile: Int32? = nil,
                         progress: ((Int64) -> Bool)? = nil) throws(CurlError) -> HTTPResponse {
        curl_easy_reset(rawHandle)
        responseHeaders = []
        responseBody = []
        self.responseFile = responseFile
        responseFileBytes = 0
        fileFailure = nil
        defer { self.responseFile = nil }
        bodyOverflow = false
        abortedByProgress = false
        uploadProgress = progress
        requestBody = request.body.map { RequestBodyReader($0) }
        defer { requestBody = nil; uploadProgress = nil }

        // Unretained: `self` outlives the transfer, which ends before `perform` returns.
        let context = Unmanaged.passUnretained(self).toOpaque()
        var headerList: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(headerList) }

        errorBuffer[0] = 0
        var ok = true
        func check(_ rc: CURLcode) { if rc != CURLE_OK { ok = false } }
        check(CCurlShim_easy_setopt_pointer(rawHandle, CURLOPT_ERRORBUFFER, errorBuffer))
        check(request.url.withCString { CCurlShim_easy_setopt_string(rawHandle, CURLOPT_URL, $0) })
        check(CCurlShim_easy_setopt_long(rawHandle, CURLOPT_NOSIGNAL, 1))
        check(CCurlShim_easy_setopt_long(rawHandle, CURLOPT_TCP_NODELAY, 1))
        check(CCurlShim_easy_setopt_long(rawHandle, CURLOPT_CONNECTTIMEOUT_MS, timeouts.connectMilliseconds))
        // Abort when fewer than 1 byte/s moves for `stallSeconds` (no total timeout: chunks may be large).
        check(CCurlShim_easy_setopt_long(rawHandle, CURLOPT_LOW_SPEED_LIMIT, 1))
        check(CCurlShim_easy_setopt_long(rawHandle, CURLOPT_LOW_SPEED_TIME, timeouts.stallSeconds))
        if timeouts.totalMilliseconds > 0 {
            check(CCurlShim_easy_setopt_long(rawHandle, CURLOPT_TIMEOUT_MS, timeouts.totalMilliseconds))
        }
        // Keys may contain `..` segments: send the path exactly as given (it is signed as sent).
        check(CCurlShim_easy_setopt_long(rawHandle, CURLOPT_PATH_AS_IS, 1))
        check(CCurlShim_easy_setopt_write_function(rawHandle, CURLOPT_WRITEFUNCTION, curlWriteCallback))
        check(CCurlShim_easy_setopt_pointer(rawHandle, CURLOPT_WRITEDATA, context))
        check(CCurlShim_easy_setopt_write_function(rawHandle, CURLOPT_HEADERFUNCTION, curlHeaderCallback))
        check(CCurlShim_easy_setopt_pointer(rawHandle, CURLOPT_HEADERDATA, context))
        check(CCurlShim_easy_setopt_xferinfo_function(rawHandle, curlXferInfoCallback))
        check(CCurlShim_easy_setopt_pointer(rawHandle, CURLOPT_XFERINFODATA, context))
        check(CCurlShim_easy_setopt_long(rawHandle, CURLOPT_NOPROGRESS, 0))

        var headers = request.headers
        switch request.method {
        case "GET":
            check(CCurlShim_easy_setopt_long(rawHandle, CURLOPT_HTTPGET, 1))
        case "HEAD":
            check(CCurlShim_easy_setopt_long(rawHandle, CURLOPT_NOBODY, 1))
        default:
            if let body = requestBody {
                // UPLOAD + a read callback streams the body; CUSTOMREQUEST renames PUT.
                check(CCurlShim_easy_setopt_long(rawHandle, CURLOPT_UPLOAD, 1))
                check(CCurlShim_easy_setopt_off_t(rawHandle, CURLOPT_INFILESIZE_LARGE, curl_off_t(body.length)))
                check(CCurlShim_easy_setopt_read_function(rawHandle, curlReadCallback))
                check(CCurlShim_easy_setopt_pointer(rawHandle, CURLOPT_READDATA, context))
                check(CCurlShim_easy_setopt_seek_function(rawHandle, curlSeekCallback))
                // Bigger reads than curl's 64 KiB default: fewer callbacks and send(2)s per chunk.
                check(CCurlShim_easy_setopt_long(rawHandle, CURLOPT_UPLOAD_BUFFERSIZE, 512 << 10))
                check(CCurlShim_easy_setopt_pointer(rawHandle, CURLOPT_SEEKDATA, context))
                // Ask before sending a large body, so a refusal (409, 413, 423…) costs no body bytes;
                // small bodies go at once (no round trip).
                if !headers.contains(where: { $0.name.lowercased() == "expect" }) {
                    headers.append((name: "Expect", value: body.length >= 65_536 ? "100-continue" : ""))
                }
                check(CCurlShim_easy_setopt_long(rawHandle, CURLOPT_EXPECT_100_TIMEOUT_MS, 2000))
            } else {
                check(CCurlShim_easy_setopt_long(rawHandle, CURLOPT_POST, 1))
                check(CCurlShim_easy_setopt_off_t(rawHandle, CURLOPT_POSTFIELDSIZE_LARGE, 0))
                check(CCurlShim_easy_setopt_string(rawHandle, CURLOPT_COPYPOSTFIELDS, ""))
            }
            check(request.method.withCString { CCurlShim_easy_setopt_string(rawHandle, CURLOPT_CUSTOMREQUEST, $0) })
        }
        // libcurl adds `Content-Type: application/x-www-form-urlencoded` to POSTs; an empty value removes it.
        if request.method != "GET", request.method != "HEAD", !headers.contains(where: { $0.name.lowercased() == "content-type" }) {
            headers.append((name: "Content-Type", value: ""))
        }
        for (name, value) in headers {
            // "Name:" removes a header curl would add; "Name;" sends it empty (curl_easy_setopt(3) HTTPHEADER).
            let line = value.isEmpty ? "\(name):" : "\(name): \(value)"
            headerList = curl_slist_append(headerList, line)
        }
        check(CCurlShim_easy_setopt_pointer(rawHandle, CURLOPT_HTTPHEADER, headerList))
        guard ok else { throw CurlError(.internalError, "libcurl refused an option for \(request.method) \(request.url).") }

        // The transfer waits on the network: a `WorkerPool.blocking` region.
        let rc = WorkerPool.blocking { curl_easy_perform(rawHandle) }
        if rc != CURLE_OK { throw transferError(rc, request) }
        var status = 0
        CCurlShim_easy_getinfo_long(rawHandle, CURLINFO_RESPONSE_CODE, &status)
        return HTTPResponse(status: status, headers: responseHeaders, body: responseBody)
    }

    /// The status of the response being received (0 before its status line).
    func currentStatus() -> Int {
        var status = 0
        CCurlShim_easy_getinfo_long(rawHandle, CURLINFO_RESPONSE_CODE, &status)
        return status
    }

    /// Maps a failed `curl_easy_perform` to a `CurlError`.
    private func transferError(_ rc: CURLcode, _ request: HTTPRequest) -> CurlError {
        let detail = errorBuffer[0] != 0 ? String(cString: errorBuffer) : String(cString: curl_easy_strerror(rc))
        var osErrno = 0
        CCurlShim_easy_getinfo_long(rawHandle, CURLINFO_OS_ERRNO, &osErrno)
        if abortedByProgress { return CurlError(.cancelled, "Cancelled.") }
        if let failure = requestBody?.failure {
            return CurlError(.fileError, "Could not read the file: \(String(cString: strerror(failure))).", systemError: failure)
        }
        if let failure = fileFailure {
            return CurlError(.fileError, "Could not write the response file: \(String(cString: strerror(failure))).", systemError: failure)
        }
        if bodyOverflow {
            return CurlError(.responseTooLarge, "The response to \(request.method) \(request.url) exceeds \(maxResponseBodyBytes) bytes.")
        }
        let code: CurlError.Code
        switch rc {
        case CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            code = .unreachable
        case CURLE_URL_MALFORMAT, CURLE_UNSUPPORTED_PROTOCOL:
            code = .badURL
        case CURLE_OPERATION_TIMEDOUT:
            // A timeout before the connection was made means the server is unreachable.
            var connectTime: curl_off_t = 0
            CCurlShim_easy_getinfo_off_t(rawHandle, CURLINFO_CONNECT_TIME_T, &connectTime)
            code = connectTime == 0 ? .unreachable : .transport
        default:
            code = .transport
        }
        var e = CurlError(code, "\(request.method) \(request.url): \(detail)")
        e.curlCode = Int(rc.rawValue)
        if osErrno != 0 { e.systemError = Int32(osErrno) }
        return e
    }
}

/// Connect timeout, stall detection and an optional overall limit for one request.
package struct Timeouts: Sendable {
    /// TCP connect timeout, in milliseconds.
    package var connectMilliseconds: Int
    /// Abort when less than 1 byte per second moved for this many seconds.
    package var stallSeconds: Int
    /// Abort the whole request after this many milliseconds; 0: no overall limit.
    package var totalMilliseconds: Int

    package init(connectMilliseconds: Int, stallSeconds: Int, totalMilliseconds: Int = 0) {
        self.connectMilliseconds = connectMilliseconds; self.stallSeconds = stallSeconds; self.totalMilliseconds = totalMilliseconds
    }
}

/// Calls `curl_global_init` once per process, before the first handle (it is not thread-safe).
enum CurlGlobal {
    private static let initialized: Bool = {
        curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK
    }()

    static func ensureInitialized() {
        precondition(initialized, "curl_global_init failed")
    }
}
