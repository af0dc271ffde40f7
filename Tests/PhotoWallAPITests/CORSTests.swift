import Foundation
import PhotoWallTesting
import Testing

/// CORS as browsers read it (Fetch §3.2.3, §4.8): every API answer lets any origin read it and names
/// the headers scripts may read; a preflight (`OPTIONS`) also names the methods and request headers
/// allowed, which browsers read only there, so actual answers don't carry them.
@Suite struct CORSTests {
    let s = sharedServer

    @Test func preflightsAllowTheMethodsAndHeadersParseAndTusClientsSend() throws {
        let client = try TestHTTPClient(port: s.port)
        for path in ["/parse/classes/WallImage", "/parse/functions/feed", "/parse/uploads", "/parse/uploads/0123456789abcdef0123456789abcdef"] {
            let r = try client.request("OPTIONS", path, headers: [
                ("Origin", "http://elsewhere.example"), ("Access-Control-Request-Method", path.hasPrefix("/parse/uploads/") ? "PATCH" : "POST"),
                ("Access-Control-Request-Headers", "x-parse-application-id,x-parse-session-token,content-type,upload-offset,tus-resumable"),
            ])
            #expect((200...204).contains(r.status), "\(path): \(r.status)")
            #expect(r.header("Access-Control-Allow-Origin") == "*", "\(path)")
            let methods = Set((r.header("Access-Control-Allow-Methods") ?? "").split(separator: ",").map(String.init))
            #expect(methods.isSuperset(of: ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD"]), "\(path): \(methods)")
            let headers = Set((r.header("Access-Control-Allow-Headers") ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() })
            #expect(headers.isSuperset(of: ["x-parse-application-id", "x-parse-session-token", "content-type", "upload-offset", "tus-resumable"]),
                    "\(path): \(headers)")
            #expect(r.header("Access-Control-Max-Age") == "86400", "\(path)")
        }
    }

    @Test func actualAnswersCarryOnlyWhatBrowsersReadThere() async throws {
        let (_, token) = try await s.signUp()
        let created = try await s.request("POST", "/classes/Note", json: ["text": "hi"], key: .master(nil))
        let id = try #require(created.json["objectId"]?.stringValue)
        let client = try TestHTTPClient(port: s.port)
        for path in ["/parse/classes/Note/\(id)", "/parse/classes/Note", "/parse/classes/Nope/x"] {
            let r = try client.request("GET", path, headers: [("Origin", "http://elsewhere.example"), ("X-Parse-Application-Id", s.appId),
                                                              ("X-Parse-Session-Token", token)])
            #expect(r.header("Access-Control-Allow-Origin") == "*", "\(path): \(r.status)")
            #expect(r.header("Access-Control-Expose-Headers")?.contains("X-Request-Id") == true, "\(path)")
            #expect(r.header("Access-Control-Allow-Headers") == nil, "\(path)")
            #expect(r.header("Access-Control-Allow-Methods") == nil, "\(path)")
        }
    }
}
