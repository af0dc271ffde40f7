import PhotoWallCore
import PhotoWallHTTP

extension MockFacebookServer {
    /// Largest picture edge served, in pixels (the PNGs are uncompressed: 480² ≈ 690 KB).
    static let maxPictureEdge = 480

    /// Graph's sizes: `square` and `small` 50, `normal` 100, `large` 200 (square pictures);
    /// `width`/`height` override (one given → square), clamped to 1…`maxPictureEdge`.
    static func pictureSize(type: String?, width: String?, height: String?) -> (width: Int, height: Int) {
        let w = width.flatMap { Int($0) }, h = height.flatMap { Int($0) }
        if w != nil || h != nil {
            func clamp(_ v: Int) -> Int { max(1, min(maxPictureEdge, v)) }
            return (clamp(w ?? h!), clamp(h ?? w!))
        }
        switch type {
        case "normal": return (100, 100)
        case "large": return (200, 200)
        default: return (50, 50)
        }
    }

    /// `{"height","is_silhouette":false,"url","width"}`: the shape of `picture.data` (notes §2.3).
    func pictureData(_ user: FixtureUser, size: (width: Int, height: Int), call: GraphCall) -> JSON {
        let url = call.baseURL + "/platform/profilepic/\(user.id).png?" + Encoding.query([("width", String(size.width)), ("height", String(size.height))])
        return ["height": .number(Double(size.height)), "is_silhouette": false, "url": .string(url), "width": .number(Double(size.width))]
    }

    /// `GET /{id}/picture`: 302 to the PNG, or with `redirect=false|0` `{"data":{…}}`.
    /// Like the tutorial's `graph.facebook.com/{id}/picture`, no access token is needed; `me` needs one.
    func picture(_ call: GraphCall, _ id: String) throws(GraphError) -> Response {
        guard call.method == "GET" || call.method == "HEAD" else { throw GraphError.unsupportedMethod(call.method) }
        let index: Int
        if id == "me" {
            index = try authenticateUser(call, missing: GraphError.needsUserToken).1
        } else {
            guard let i = fixture.indexByID[id] else { throw GraphError.noSuchObject(id) }
            index = i
        }
        let size = MockFacebookServer.pictureSize(type: call.parameter("type"), width: call.parameter("width"), height: call.parameter("height"))
        let data = pictureData(fixture.users[index], size: size, call: call)
        if let redirect = call.parameter("redirect"), ["false", "0"].contains(redirect) {
            return .json(["data": data])
        }
        var headers = HTTPHeaders()
        headers.set("Location", data["url"]!.stringValue!)
        return Response(status: 302, headers: headers)
    }

    /// `GET /platform/profilepic/{id}.png?width=&height=`: the picture itself (`image/png`).
    func profilePicture(_ call: GraphCall, _ file: String) throws(GraphError) -> Response {
        guard file.hasSuffix(".png"), let index = fixture.indexByID[String(file.dropLast(4))] else {
            throw GraphError.noSuchObject(file)
        }
        let size = MockFacebookServer.pictureSize(type: nil, width: call.parameter("width"), height: call.parameter("height"))
        var headers = HTTPHeaders()
        headers.set("Content-Type", "image/png")
        headers.set("Cache-Control", "public, max-age=86400")
        return Response(status: 200, headers: headers,
                        body: .bytes(AvatarPNG.make(width: size.width, height: size.height, color: fixture.users[index].color)))
    }
}
