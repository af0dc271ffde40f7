import PhotoWallCore
internal import CCurl
#if canImport(Glibc)
import Glibc
#endif

// libcurl callbacks: global functions (never closures in top-level code; notes §4 pitfall 5). Each
// recovers its `EasyHandle` from the unretained context pointer set in `EasyHandle.perform` and
// forwards to it. They run on the thread that called `curl_easy_perform`.

private func handle(_ context: UnsafeMutableRawPointer?) -> EasyHandle {
    Unmanaged<EasyHandle>.fromOpaque(context!).takeUnretainedValue()
}

/// CURLOPT_WRITEFUNCTION: collects the response body; returning less than given aborts.
func curlWriteCallback(_ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?) -> Int {
    let h = handle(context)
    let n = size * count
    guard n > 0, let data else { return 0 }
    if let fd = h.responseFile {
        // Only a 2xx body goes to the file; an error body is kept in memory for the message.
        if (200..<300).contains(h.currentStatus()) {
            guard writeAll(fd, UnsafeRawBufferPointer(start: data, count: n)) else { h.fileFailure = errno; return 0 }
            h.responseFileBytes += Int64(n)
            return n
        }
    }
    if h.responseBody.count + n > h.maxResponseBodyBytes {
        h.bodyOverflow = true
        return 0
    }
    h.responseBody.append(contentsOf: UnsafeRawBufferPointer(start: data, count: n))
    return n
}

/// CURLOPT_HEADERFUNCTION: one header line per call, status lines included. A new status line
/// (e.g. the final response after `100 Continue`) starts a fresh header list.
func curlHeaderCallback(_ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?) -> Int {
    let h = handle(context)
    let n = size * count
    guard n > 0, let data else { return n }
    let line = String(decoding: UnsafeRawBufferPointer(start: data, count: n), as: UTF8.self)
    if line.hasPrefix("HTTP/") {
        h.responseHeaders = []
        return n
    }
    guard let colon = line.firstIndex(of: ":") else { return n }
    let name = String(line[..<colon]).trimmingLineSpace()
    let value = String(line[line.index(after: colon)...]).trimmingLineSpace()
    if !name.isEmpty { h.responseHeaders.append((name: name, value: value)) }
    return n
}

/// CURLOPT_READFUNCTION: fills curl's buffer from the request body.
func curlReadCallback(_ buffer: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?) -> Int {
    let h = handle(context)
    guard let reader = h.requestBody, let buffer else { return 0 }
    let n = reader.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: size * count))
    return n < 0 ? Int(CURL_READFUNC_ABORT) : n
}

/// CURLOPT_SEEKFUNCTION: rewinds the body (curl resends it on a fresh connection when a reused
/// keep-alive connection turns out dead).
func curlSeekCallback(_ context: UnsafeMutableRawPointer?, _ offset: curl_off_t, _ origin: Int32) -> Int32 {
    let h = handle(context)
    guard let reader = h.requestBody, origin == SEEK_SET, reader.seek(to: Int64(offset)) else { return Int32(CURL_SEEKFUNC_CANTSEEK) }
    return Int32(CURL_SEEKFUNC_OK)
}

/// CURLOPT_XFERINFOFUNCTION: reports upload progress; non-zero aborts (`CURLE_ABORTED_BY_CALLBACK`).
/// libcurl calls it very often (about every 32 KiB, notes §4 pitfall 10); throttling is the
/// receiver's job.
func curlXferInfoCallback(_ context: UnsafeMutableRawPointer?, _ downloadTotal: curl_off_t, _ downloaded: curl_off_t,
                          _ uploadTotal: curl_off_t, _ uploaded: curl_off_t) -> Int32 {
    let h = handle(context)
    guard let progress = h.uploadProgress else { return 0 }
    if progress(Int64(uploaded)) { return 0 }
    h.abortedByProgress = true
    return 1
}

extension String {
    /// Without leading and trailing spaces, tabs, CR and LF (works on bytes: "\r\n" is one
    /// `Character` in Swift, so character comparisons would miss it).
    package func trimmingLineSpace() -> String {
        let u = Array(utf8)
        func space(_ b: UInt8) -> Bool { b == 32 || b == 9 || b == 13 || b == 10 }
        var start = 0, end = u.count
        while start < end, space(u[start]) { start += 1 }
        while end > start, space(u[end - 1]) { end -= 1 }
        return String(decoding: u[start..<end], as: UTF8.self)
    }
}
