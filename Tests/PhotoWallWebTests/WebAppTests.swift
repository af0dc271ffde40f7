import Foundation
import PhotoWallHTTP
@testable import PhotoWallWeb
import Testing

/// The browser wall's file serving and config, in process (router level); the live page is tested
/// in headless Chromium by Tests/browser.
@Suite struct WebAppTests {
    /// A folder with an index, a script, a nested file and a hidden one.
    func withSite(_ body: (WebApp) throws -> Void) throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("photowall-web-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root + "/img", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        try Data("<!doctype html><title>t</title>".utf8).write(to: URL(fileURLWithPath: root + "/index.html"))
        try Data("export const x = 1;\n".utf8).write(to: URL(fileURLWithPath: root + "/app.js"))
        try Data("<svg/>".utf8).write(to: URL(fileURLWithPath: root + "/img/logo.svg"))
        try Data("secret".utf8).write(to: URL(fileURLWithPath: root + "/.env"))
        let config = WebConfig(appId: "app", serverPath: "/parse", facebookDialogURL: nil, facebookAppId: nil, maxUploadBytes: 1024)
        try body(WebApp(assets: try WebAssets(root: root), config: config, facebook: nil, extraOrigins: ["http://cdn.example:8080"]))
    }

    func get(_ app: WebApp, _ path: String, headers: [(String, String)] = []) -> Response {
        var router = Router()
        app.register(on: &router)
        var head = RequestHead(method: "GET", path: path, headers: HTTPHeaders(headers))
        guard case .immediate(let response) = router.resolve(&head) else {
            Issue.record("GET \(path) is not answered at once")
            return Response(status: 0)
        }
        return response
    }

    func body(_ r: Response) -> String {
        if case .bytes(let b) = r.body { return String(decoding: b, as: UTF8.self) }
        return ""
    }

    @Test func servesFilesWithTypeETagAndCaching() throws {
        try withSite { app in
            #expect(app.assets.files.keys.sorted() == ["app.js", "img/logo.svg", "index.html"])
            let index = get(app, "/")
            #expect(index.status == 200)
            #expect(body(index) == "<!doctype html><title>t</title>")
            #expect(index.headers["Content-Type"] == "text/html; charset=utf-8")
            #expect(index.headers["Cache-Control"] == "no-cache")
            #expect(index.headers["Content-Security-Policy"]?.contains("img-src 'self' data: blob: http://cdn.example:8080;") == true)
            let script = get(app, "/app.js")
            #expect(script.headers["Content-Type"] == "text/javascript; charset=utf-8")
            #expect(script.headers["Content-Security-Policy"] == nil)
            #expect(get(app, "/img/logo.svg").headers["Content-Type"] == "image/svg+xml")
            let etag = try #require(script.headers["ETag"])
            #expect(etag.count == 34)
            let again = get(app, "/app.js", headers: [("If-None-Match", "\"other\", \(etag)")])
            #expect(again.status == 304)
            #expect(body(again) == "")
        }
    }

    @Test(arguments: ["/nope.js", "/.env", "/../Package.swift", "/img", "/img/", "/index.html/x", "/%2e%2e/etc/passwd",
                      "/app.js/", "/index.html//", "//app.js"])
    func unknownAndEscapingPathsAre404(path: String) throws {
        try withSite { app in
            let r = get(app, path)
            #expect(r.status == 404)
            #expect(body(r) == "Not found.\n")
        }
    }

    @Test func configCarriesNoSecrets() throws {
        let c = WebConfig(appId: "photowall", serverPath: "/parse", facebookDialogURL: "http://127.0.0.1:1338/v19.0/dialog/oauth",
                          facebookAppId: "1234567890123456", maxUploadBytes: 20 << 20, facebookGraphURL: "http://127.0.0.1:1338/v19.0")
        #expect(String(decoding: c.json.serialized, as: UTF8.self)
                == #"{"appId":"photowall","facebook":{"appId":"1234567890123456","dialogURL":"http://127.0.0.1:1338/v19.0/dialog/oauth","graphURL":"http://127.0.0.1:1338/v19.0","scope":"public_profile,user_friends"},"maxUploadBytes":20971520,"serverPath":"/parse"}"#)
    }

    @Test func dialogURLFollowsTheGraphBase() {
        #expect(WebConfig.dialogURL(forGraphBase: "https://graph.facebook.com/v19.0") == "https://www.facebook.com/v19.0/dialog/oauth")
        #expect(WebConfig.dialogURL(forGraphBase: "http://127.0.0.1:1338/v19.0/") == "http://127.0.0.1:1338/v19.0/dialog/oauth")
    }

    @Test func theShippedFilesAreFound() throws {
        let root = try #require(WebAssets.defaultRoot())
        let assets = try WebAssets(root: root)
        for name in ["index.html", "app.js", "api.js", "tus.js", "wall.js", "upload.js", "live.js", "app.css", "favicon.svg"] {
            #expect(assets.files[name] != nil, "\(name) is shipped")
        }
    }
}
