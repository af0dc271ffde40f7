import Foundation
import PhotoWallCore
import PhotoWallTesting
import Synchronization

/// Who makes a request in the authorization matrix (issue 11, "An authorization-matrix suite").
enum Principal: String, CaseIterable, Sendable, CustomStringConvertible {
    /// A Facebook user who posts the photo and the comments the other cells read.
    case owner
    /// A Facebook friend of the owner (per the mock provider's fixture).
    case friend
    /// A Facebook user who is not the owner's friend (nor the friend's, nor the commenter's).
    case stranger
    /// The application id only.
    case anonymous
    /// A username/password user without Facebook (not anyone's friend).
    case password
    /// The master key.
    case master

    var description: String { rawValue }
    static let nonMaster: [Principal] = [.owner, .friend, .stranger, .anonymous, .password]
    static let users: [Principal] = [.owner, .friend, .stranger, .password]
}

/// A fixture object the table names before the server exists; the world resolves it to an objectId.
enum Ref: String, Sendable, CustomStringConvertible {
    // _User rows.
    case ownerUser, friendUser, strangerUser, passwordUser, commenterUser
    /// The owner's photo (with image, thumbnail and display files).
    case image
    /// Another photo of the owner (no file) that only the commenter comments on and no cell touches:
    /// the feed shows its comment with the commenter's name to the friend.
    case quietImage
    /// The password user's own photo (no file).
    case passwordImage
    /// Comments on `image` by the owner, the friend, and the commenter (a friend of the owner who is not the friend's friend).
    case ownerComment, friendComment, commenterComment
    /// The principals' sessions from the set-up logins.
    case ownerSession, friendSession, strangerSession, passwordSession
    /// A master-made public object of another class pointing at the owner (`include` on it).
    case note

    var description: String { rawValue }

    /// The `_User` row of a principal (nil for anonymous and master).
    static func user(of p: Principal) -> Ref? {
        switch p {
        case .owner: .ownerUser
        case .friend: .friendUser
        case .stranger: .strangerUser
        case .password: .passwordUser
        case .anonymous, .master: nil
        }
    }

    /// The set-up session of a principal (nil for anonymous and master).
    static func session(of p: Principal) -> Ref? {
        switch p {
        case .owner: .ownerSession
        case .friend: .friendSession
        case .stranger: .strangerSession
        case .password: .passwordSession
        case .anonymous, .master: nil
        }
    }
}

/// The server, the principals and their objects, set up once for the whole suite.
/// How many spare Facebook users `freshFacebookUser` has handed out (each cell gets the next one).
private let freshFacebookUsersHandedOut = Mutex(0)

struct MatrixWorld: Sendable {
    struct Account: Sendable {
        var objectId: String
        var sessionToken: String
        /// The Facebook id (nil for the password user).
        var fbId: String?
        var username: String
    }

    let server: ParseTestServer
    let facebook: MockFacebookProcess
    let accounts: [Principal: Account]
    let commenter: Account
    /// The Facebook access token the owner logged in with (what the oracle tries to extract).
    let ownerAccessToken: String
    let ownerEmail = "matrix.owner@example.com"
    let passwordEmail = "matrix.password@example.com"
    let caption = "matrix caption"
    /// objectId of each `Ref`.
    let ids: [Ref: String]
    /// The owner's photo's files (`image`, `thumbnail`, `display` → stored name) and the signed URLs the owner got.
    let imageFiles: [String: String]
    let imageSignedURLs: [String: String]
    /// The same for a photo the owner posted and then deleted.
    let deletedFiles: [String: String]
    let deletedSignedURLs: [String: String]
    /// A file the password user uploaded and no `WallImage` names.
    let looseFile: String
    /// Bytes of the photo the owner posted.
    let photo: Data

    subscript(ref: Ref) -> String { ids[ref]! }

    func account(_ p: Principal) -> Account { accounts[p]! }

    /// The credentials a principal sends.
    func key(_ p: Principal) -> ParseTestServer.Key {
        switch p {
        case .anonymous: .app
        case .master: .master(nil)
        default: .session(accounts[p]!.sessionToken)
        }
    }

    /// The fixture name of an objectId (nil for objects made by a cell).
    func ref(of objectId: String) -> Ref? { ids.first { $0.value == objectId }?.key }

    func plainURL(_ name: String) -> String { "\(server.baseURL)/files/\(server.appId)/\(name)" }

    /// Built once; every test awaits the same task.
    static let shared = Task { try await MatrixWorld.make() }

    /// Picks owner, friend, commenter and stranger from the fixture: friend and commenter are the
    /// owner's friends but not each other's; the stranger is no friend of any of them.
    static func pickFacebookUsers() throws -> (owner: String, friend: String, commenter: String, stranger: String) {
        let fixture = MockFacebookProcess.fixture
        let appUsers = MockFacebookProcess.appUsers()
        func friends(_ id: String) -> Set<String> {
            Set((fixture[id]?["friends"]?.arrayValue ?? []).compactMap { $0.stringValue }).intersection(appUsers)
        }
        for owner in appUsers {
            let f = friends(owner).sorted()
            for friend in f {
                guard let commenter = f.first(where: { $0 != friend && !friends(friend).contains($0) }) else { continue }
                let near = friends(owner).union(friends(friend)).union(friends(commenter)).union([owner, friend, commenter])
                if let stranger = appUsers.first(where: { !near.contains($0) }) { return (owner, friend, commenter, stranger) }
            }
        }
        throw TestServerError(description: "the fixture has no owner/friend/commenter/stranger quadruple")
    }

    static func make() async throws -> MatrixWorld {
        let (s, fb) = MockFacebookProcess.withServer()
        // A static is never deinitialized: remove the server's data folder when the test process exits.
        matrixDataDir.withLock { $0 = s.dataDir.path }
        atexit(removeMatrixDataDir)
        func expect(_ r: ParseTestServer.Reply, _ status: Int, _ what: String) throws -> JSON {
            guard r.status == status else { throw TestServerError(description: "matrix set-up: \(what): \(r.status) \(r.text)") }
            return r.json
        }
        func id(_ j: JSON, _ what: String) throws -> String {
            guard let v = j["objectId"]?.stringValue else { throw TestServerError(description: "matrix set-up: \(what): no objectId in \(j.text)") }
            return v
        }
        let picked = try pickFacebookUsers()
        var accounts: [Principal: Account] = [:]
        var ownerAccessToken = ""
        func login(_ fbId: String) async throws -> Account {
            let (objectId, session, token) = try await fb.logIn(fbId, on: s)
            if fbId == picked.owner { ownerAccessToken = token }
            let me = try expect(try await s.request("GET", "/users/me", key: .session(session)), 200, "users/me")
            return Account(objectId: objectId, sessionToken: session, fbId: fbId, username: me["username"]?.stringValue ?? "")
        }
        accounts[.owner] = try await login(picked.owner)
        accounts[.friend] = try await login(picked.friend)
        accounts[.stranger] = try await login(picked.stranger)
        let commenter = try await login(picked.commenter)
        let username = "matrix_pw_\(UUID().uuidString.prefix(6))"
        let signUp = try expect(try await s.request("POST", "/users", json: [
            "username": .string(username), "password": "matrix-secret", "email": "matrix.password@example.com",
        ]), 201, "password sign-up")
        accounts[.password] = Account(objectId: try id(signUp, "sign-up"), sessionToken: signUp["sessionToken"]?.stringValue ?? "",
                                      fbId: nil, username: username)
        let owner = accounts[.owner]!, friend = accounts[.friend]!, password = accounts[.password]!
        _ = try expect(try await s.request("PUT", "/users/\(owner.objectId)", json: ["email": "matrix.owner@example.com"],
                                           key: .session(owner.sessionToken)), 200, "owner sets an email")

        // The owner's photo, with its three files.
        // A small JPEG (made from a sample photo by the CLI), so the thumbnail runs of the cells are quick.
        let small = s.dataDir.appendingPathComponent("matrix-photo.jpg")
        let made = try runProcess(TestPaths.binary, ["thumbnail", TestPaths.packageRoot.appendingPathComponent("Samples/photos/landscape_o1.jpg").path,
                                                      small.path, "--size", "120"])
        guard made.status == 0 else { throw TestServerError(description: "matrix set-up: photowall thumbnail: \(made.output)") }
        let photo = try Data(contentsOf: small)
        func post(_ name: String) async throws -> (id: String, files: [String: String], signed: [String: String]) {
            let up = try expect(try await s.request("POST", "/files/\(name)", body: photo, key: .session(owner.sessionToken),
                                                    headers: ["Content-Type": "image/jpeg"]), 201, "owner uploads")
            let made = try expect(try await s.request("POST", "/classes/WallImage", json: [
                "caption": "matrix caption", "image": ["__type": "File", "name": up["name"] ?? .null],
            ], key: .session(owner.sessionToken)), 201, "owner posts a photo")
            let photoId = try id(made, "photo")
            let stored = try expect(try await s.request("GET", "/classes/WallImage/\(photoId)", key: .session(owner.sessionToken)), 200, "owner reads the photo")
            var files: [String: String] = [:], signed: [String: String] = [:]
            for f in ["image", "thumbnail", "display"] {
                files[f] = stored[f]?["name"]?.stringValue
                signed[f] = stored[f]?["url"]?.stringValue
            }
            return (photoId, files, signed)
        }
        var ids: [Ref: String] = [.ownerUser: owner.objectId, .friendUser: friend.objectId, .strangerUser: accounts[.stranger]!.objectId,
                                  .passwordUser: password.objectId, .commenterUser: commenter.objectId]
        for p in Principal.users {
            let me = try expect(try await s.request("GET", "/sessions/me", key: .session(accounts[p]!.sessionToken)), 200, "sessions/me")
            ids[Ref.session(of: p)!] = try id(me, "session")
        }
        let image = try await post("matrix.jpg")
        ids[.image] = image.id
        for (ref, who, text) in [(Ref.ownerComment, owner, "by the owner"), (.friendComment, friend, "by the friend"),
                                 (.commenterComment, commenter, "by the commenter")] {
            ids[ref] = try id(try expect(try await s.request("POST", "/classes/WallImageComment", json: [
                "comment": .string(text), "imageObjectId": .string(image.id),
            ], key: .session(who.sessionToken)), 201, "comment \(text)"), "comment")
        }
        ids[.quietImage] = try id(try expect(try await s.request("POST", "/classes/WallImage", json: ["caption": "quiet"],
                                                                  key: .session(owner.sessionToken)), 201, "quiet photo"), "photo")
        _ = try expect(try await s.request("POST", "/classes/WallImageComment", json: ["comment": "quietly", "imageObjectId": .string(ids[.quietImage]!)],
                                           key: .session(commenter.sessionToken)), 201, "comment on the quiet photo")
        ids[.passwordImage] = try id(try expect(try await s.request("POST", "/classes/WallImage", json: ["caption": "password user's"],
                                                                     key: .session(password.sessionToken)), 201, "password user's photo"), "photo")
        let loose = try expect(try await s.request("POST", "/files/notes.txt", body: Data("loose file".utf8), key: .session(password.sessionToken),
                                                   headers: ["Content-Type": "text/plain"]), 201, "password user's file")
        ids[.note] = try id(try expect(try await s.request("POST", "/classes/MatrixNote", json: [
            "target": ["__type": "Pointer", "className": "_User", "objectId": .string(owner.objectId)],
        ], key: .master(nil)), 201, "master's note"), "note")

        // A photo posted and deleted: none of its URLs may work afterwards.
        let doomed = try await post("doomed.jpg")
        _ = try expect(try await s.request("DELETE", "/classes/WallImage/\(doomed.id)", key: .session(owner.sessionToken)), 200, "delete the photo")

        return MatrixWorld(server: s, facebook: fb, accounts: accounts, commenter: commenter, ownerAccessToken: ownerAccessToken,
                           ids: ids, imageFiles: image.files, imageSignedURLs: image.signed, deletedFiles: doomed.files,
                           deletedSignedURLs: doomed.signed, looseFile: loose["name"]?.stringValue ?? "", photo: photo)
    }

    // MARK: objects made by a cell

    /// A fresh photo of `who` (no file, so no imaging work), for a cell that changes or deletes it.
    func freshImage(of who: Principal = .owner) async throws -> String {
        let r = try await server.request("POST", "/classes/WallImage", json: ["caption": "scratch"], key: key(who))
        guard r.status == 201, let id = r.json["objectId"]?.stringValue else { throw TestServerError(description: "fresh image: \(r.text)") }
        return id
    }

    /// A fresh comment of `who` on the owner's photo.
    func freshComment(by who: Principal) async throws -> String {
        let r = try await server.request("POST", "/classes/WallImageComment", json: ["comment": "scratch", "imageObjectId": .string(self[.image])],
                                         key: key(who))
        guard r.status == 201, let id = r.json["objectId"]?.stringValue else { throw TestServerError(description: "fresh comment: \(r.text)") }
        return id
    }

    /// A fresh upload of `who` (the owner's photo bytes). - Returns: the stored file name.
    func freshFile(of who: Principal) async throws -> String {
        let r = try await server.request("POST", "/files/scratch.jpg", body: photo, key: key(who), headers: ["Content-Type": "image/jpeg"])
        guard r.status == 201, let name = r.json["name"]?.stringValue else { throw TestServerError(description: "fresh file: \(r.text)") }
        return name
    }

    /// A Facebook user of the fixture who is none of the principals, logged in anew. - Returns: (objectId, session token).
    func freshFacebookUser() async throws -> (String, String) {
        let taken = Set([account(.owner).fbId, account(.friend).fbId, account(.stranger).fbId, commenter.fbId].compactMap { $0 })
        let spare = MockFacebookProcess.appUsers().filter { !taken.contains($0) }
        // Each cell gets its own spare user: two cells running at once that logged in the same new
        // Facebook user would race to create it, and the loser's 208 is the server being right.
        let fbId = spare[freshFacebookUsersHandedOut.withLock { n in defer { n += 1 }; return n % spare.count }]
        let (id, session, _) = try await facebook.logIn(fbId, on: server)
        return (id, session)
    }

    /// A fresh session of the password user (a second login), for a cell that changes or deletes one.
    func freshPasswordSession() async throws -> (objectId: String, token: String) {
        let r = try await server.request("POST", "/login", json: ["username": .string(account(.password).username), "password": "matrix-secret"])
        guard let token = r.json["sessionToken"]?.stringValue else { throw TestServerError(description: "fresh session: \(r.text)") }
        let me = try await server.request("GET", "/sessions/me", key: .session(token))
        guard let id = me.json["objectId"]?.stringValue else { throw TestServerError(description: "fresh session: \(me.text)") }
        return (id, token)
    }
}

private let matrixDataDir = Mutex<String?>(nil)

/// `atexit` hook (a global function: C calls it).
private func removeMatrixDataDir() {
    if let dir = matrixDataDir.withLock({ $0 }) { try? FileManager.default.removeItem(atPath: dir) }
}
