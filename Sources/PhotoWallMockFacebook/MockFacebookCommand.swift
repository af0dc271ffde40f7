import PhotoWallCore
#if canImport(Glibc)
import Glibc
#endif

/// Usage of `photowall mock-facebook`.
public let mockFacebookUsage = """
    usage: photowall mock-facebook [options]
           photowall mock-facebook --generate-fixture N [--out FILE] [--seed S] [--avg-friends K] [--max-friends M] [--app-user-ratio R]

    Serves a mock Facebook login dialog and Graph API (development and tests only).

      --port N               TCP port (default 1338; 0 picks a free one, printed on stdout)
      --host ADDR            IPv4 address to bind (default 127.0.0.1)
      --fixture FILE         users and friendships (default Samples/facebook/users.json)
      --app-id ID            the app's id / client_id (default \(MockFacebookServer.defaultAppID))
      --app-secret S         check client_secret and appsecret_proof (default: no secret, nothing checked)
      --app-name NAME        shown on the dialog and by /app (default PhotoWall)
      --no-appsecret-proof   with a secret: accept calls without appsecret_proof (a proof sent is still checked)
      --public-url URL       base of absolute links (default http://<Host header>)
      --redirect-uri PREFIX  allowed redirect_uri prefix; repeat for several (default: any)
      --token-ttl SECONDS    user token lifetime (default 5183976, about 60 days)
      --code-ttl SECONDS     dialog code lifetime (default 600)
      --no-control           disable the test-only /__control endpoints
      --log-level LEVEL      trace|debug|info|notice|warning|error (default info)
      --stop-on-stdin-eof    shut down when standard input closes (for supervisors and tests)

    Fixture generator (deterministic for a seed; prints to stdout without --out):
      --generate-fixture N   number of users
      --seed S               default 1
      --avg-friends K        mean friends per user (default N/7, 2…30)
      --max-friends M        largest friend count (default min(N-1, 6K, N/2))
      --app-user-ratio R     share of users already using the app, 0…1 (default 0.85)

    Test-only controls: GET /__control lists them; POST /__control/login -d user_id=ID mints a token.

    """

/// Runs `photowall mock-facebook ARGS…`: serves until SIGINT/SIGTERM, or writes a generated fixture.
///
/// - Returns: the exit code: 0 on success, 64 for a usage error, 1 when the fixture cannot be read
///   or written or the port cannot be bound.
public func runMockFacebookCommand(_ args: [String]) -> Int32 {
    do {
        let options = try CommandOptions.parse(args)
        if options.flags.contains("help") { writeOut(mockFacebookUsage, to: 1); return 0 }
        if let count = options.values["generate-fixture"] { return try generateFixture(count, options) }
        return try serveMock(options)
    } catch let error as UsageError {
        writeOut("photowall mock-facebook: \(error.description)\n", to: 2)
        return 64
    } catch let error as FixtureError {
        writeOut("photowall mock-facebook: \(error.message)\n", to: 2)
        return 1
    } catch {
        writeOut("photowall mock-facebook: \(error)\n", to: 2)
        return 1
    }
}

private func generateFixture(_ countText: String, _ o: CommandLineOptions) throws -> Int32 {
    guard let count = Int(countText), count >= 1 else { throw UsageError("--generate-fixture needs a user count ≥ 1") }
    var seed: UInt64 = 1
    if let text = o.values["seed"] {
        guard let s = UInt64(text) else { throw UsageError("bad --seed '\(text)'") }
        seed = s
    }
    let average = try o.double("avg-friends")
    let ratio = try o.double("app-user-ratio") ?? 0.85
    let maxFriends = try o.int("max-friends")
    let fixture = try FixtureGenerator(userCount: count, seed: seed, averageFriends: average, maxFriends: maxFriends,
                                       appUserRatio: ratio).generate()
    let text = fixture.fileText()
    if let out = o.values["out"] {
        try FileIO.write(Array(text.utf8), to: out)
        writeOut("wrote \(out): \(fixture.users.count) users, \(fixture.friendshipCount) friendships (seed \(seed))\n", to: 2)
    } else {
        writeOut(text, to: 1)
    }
    return 0
}

private func serveMock(_ o: CommandLineOptions) throws -> Int32 {
    let levelName = o.values["log-level"] ?? "info"
    guard let level = Logger.Level(name: levelName) else { throw UsageError("unknown log level '\(levelName)'") }
    let fixturePath = o.values["fixture"] ?? "Samples/facebook/users.json"
    let fixture = try FacebookFixture.load(path: fixturePath)
    var config = MockFacebookServer.Configuration(appID: o.values["app-id"] ?? MockFacebookServer.defaultAppID,
                                                  appSecret: o.values["app-secret"], host: o.values["host"] ?? "127.0.0.1",
                                                  port: try o.int("port") ?? 1338)
    guard (0...65535).contains(config.port) else { throw UsageError("bad port \(config.port)") }
    config.appName = o.values["app-name"] ?? config.appName
    config.requireAppSecretProof = !o.flags.contains("no-appsecret-proof")
    config.enableControlEndpoints = !o.flags.contains("no-control")
    config.publicBaseURL = o.values["public-url"].map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
    config.allowedRedirectURIPrefixes = o.repeated["redirect-uri"] ?? []
    if let ttl = try o.int("token-ttl") { guard ttl > 0 else { throw UsageError("--token-ttl must be > 0") }; config.tokenLifetimeSeconds = ttl }
    if let ttl = try o.int("code-ttl") { guard ttl > 0 else { throw UsageError("--code-ttl must be > 0") }; config.codeLifetimeSeconds = ttl }
    config.logger = Logger(label: "mock-facebook", level: level)

    let server = MockFacebookServer(fixture: fixture, configuration: config)
    try server.start()
    let base = server.baseURL
    let sample = fixture.users.first.map { $0.id } ?? "ID"
    writeOut("""
        Mock Facebook listening on \(base)
          app id:     \(config.appID)   app secret: \(config.appSecret == nil ? "none (client_secret and appsecret_proof not checked)" : "(set)")
          fixture:    \(fixturePath) (\(fixture.users.count) users, \(fixture.friendshipCount) friendships)
          dialog:     \(base)/v19.0/dialog/oauth?client_id=\(config.appID)&redirect_uri=REDIRECT&state=STATE&scope=public_profile,user_friends
          graph:      \(base)/me?fields=id,name&access_token=TOKEN\(config.appSecret == nil ? "" : "&appsecret_proof=HMAC")
        \(config.enableControlEndpoints ? "  test token: curl -s -X POST -d user_id=\(sample) \(base)/__control/login\n" : "")
        """, to: 1)
    if o.flags.contains("stop-on-stdin-eof") { StandardInput.onEndOfFile { server.shutdown() } }
    server.runUntilSignal()
    return 0
}
