import PhotoWallCore
@testable import PhotoWallHTTP
import PhotoWallTesting
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("Responses")
struct ResponseTests {
    @Test func fileResponseSendsTheRequestedRange() throws {
        try withTemporaryDirectory { directory in
            let content = testBytes(100_000)
            let path = "\(directory)/photo.jpg"
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            _ = content.withUnsafeBytes { write(fd, $0.baseAddress!, $0.count) }
            close(fd)
            var router = Router()
            router.add("GET", "/file") { _ in
                .buffered(maxBodyBytes: 0) { _ in
                    var headers = HTTPHeaders()
                    headers.set("Content-Type", "image/jpeg")
                    return Response(status: 200, headers: headers, body: .file(path: path, offset: 1_000, length: 50_000))
                }
            }
            router.add("GET", "/whole") { _ in .immediate(Response(body: .file(path: path, offset: 0, length: 100_000))) }
            router.add("GET", "/missing") { _ in .immediate(Response(body: .file(path: "\(directory)/nope", offset: 0, length: 1))) }
            router.add("GET", "/past-end") { _ in .immediate(Response(body: .file(path: path, offset: 99_999, length: 2))) }
            try withServer(router) { _, port, _ in
                let client = try TestHTTPClient(port: port)
                let r = try client.request("GET", "/file")
                #expect(r.status == 200)
                #expect(r.header("Content-Length") == "50000")
                #expect(r.header("Content-Type") == "image/jpeg")
                #expect(sameBytes(r.body, Array(content[1_000..<51_000])))
                let head = try client.request("HEAD", "/file")
                #expect(head.status == 200)
                #expect(head.header("Content-Length") == "50000")
                #expect(head.body.isEmpty)
                let whole = try client.request("GET", "/whole")
                #expect(sameBytes(whole.body, content))
                let missing = try client.request("GET", "/missing")
                #expect(missing.status == 404)
                let pastEnd = try client.request("GET", "/past-end")
                #expect(pastEnd.status == 500)
                #expect(pastEnd.text == #"{"error":"internal server error"}"#)
                // All on one connection: nothing stray was sent after the HEAD response.
                #expect(try client.request("GET", "/whole").body.count == 100_000)
            }
        }
    }

    @Test func emptyAndUnusualResponses() throws {
        var router = Router()
        router.add("DELETE", "/thing") { _ in .buffered(maxBodyBytes: 0) { _ in Response(status: 204) } }
        router.add("GET", "/bad-status") { _ in .buffered(maxBodyBytes: 0) { _ in Response(status: 42) } }
        router.add("GET", "/bad-header") { _ in
            .immediate(Response(status: 200, headers: HTTPHeaders([("X-Evil", "a\r\nSet-Cookie: x=y"), ("X-Fine", "ok"),
                                                                    ("Content-Length", "999")]),
                                body: .bytes(Array("abc".utf8))))
        }
        router.add("PATCH", "/any") { _ in .immediate(.text("patched", status: 200)) }
        try withServer(router) { _, port, _ in
            let client = try TestHTTPClient(port: port)
            let deleted = try client.request("DELETE", "/thing")
            #expect(deleted.status == 204)
            #expect(deleted.body.isEmpty)
            let bad = try client.request("GET", "/bad-status")
            #expect(bad.status == 500)
            let headers = try client.request("GET", "/bad-header")
            #expect(headers.status == 200)
            #expect(headers.header("X-Evil") == nil)
            #expect(headers.header("Set-Cookie") == nil)
            #expect(headers.header("X-Fine") == "ok")
            #expect(headers.header("Content-Length") == "3")
            #expect(headers.text == "abc")
            #expect(try client.request("PATCH", "/any").text == "patched")
        }
    }

    @Test func malformedRequestsAreRejectedWithoutReachingHandlers() throws {
        let handled = Box(0)
        var router = Router()
        router.add("*", "/*rest") { _ in
            .buffered(maxBodyBytes: 10) { _ in
                handled.update { $0 += 1 }
                return Response(status: 200)
            }
        }
        try withServer(router) { _, port, _ in
            for raw in ["GARBAGE\r\n\r\n", "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
                        "GET / HTTP/1.1\r\nNo colon here\r\n\r\n"] {
                let client = try TestHTTPClient(port: port)
                try client.send(Array(raw.utf8))
                if let r = try? client.readResponse() { #expect(r.status >= 400) }
            }
            // The server is still fine.
            #expect(try TestHTTPClient(port: port).request("GET", "/ok").status == 200)
            #expect(handled.value == 1)
        }
    }
}
