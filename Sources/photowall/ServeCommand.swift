import Foundation
import PhotoWallCore
import PhotoWallHTTP
import PhotoWallLive
import PhotoWallPostgres
import PhotoWallREST
import PhotoWallS3
import PhotoWallServices
import PhotoWallStorage
import PhotoWallWall
import PhotoWallWeb
import PhotoWallWebSocket
#if canImport(Glibc)
import Glibc
#endif

/// `photowall serve`: the Parse-compatible API with the embedded defaults (SQLite and files under
/// `Storage/`), configured like parse-server by options or its environment variables.
enum ServeCommand {
    static let help = """
        usage: photowall serve [options]

          photowall serve                          # the wall on http://127.0.0.1:1337/, the API under /parse,
                                                   # SQLite and files in ./Storage
          photowall serve --port 8080 --data-dir /var/lib/photowall --master-key "$(cat /etc/photowall/master-key)"

        Every option also reads parse-server's environment variable (in parentheses).

        Network:
          --port N               TCP port (PORT; default 1337; 0 picks a free port)
          --host ADDR            IPv4 address to bind (PARSE_SERVER_HOST; default 127.0.0.1)
          --public-url URL       base of file URLs (PARSE_PUBLIC_SERVER_URL; default http://HOST:PORT/parse)
          --max-connections N    open connections in total; more wait in the listen backlog (PHOTOWALL_MAX_CONNECTIONS;
                                 default 4096)
          --max-connections-per-ip N  open connections per client address; more are closed at once
                                 (PHOTOWALL_MAX_CONNECTIONS_PER_IP; default 64; 0 = no limit: behind a proxy all
                                 clients share its address, so raise it or set 0 there)
          --live-connections-per-ip N  LiveQuery WebSocket connections per client address, within the limit
                                 above; more are answered 429 (PHOTOWALL_LIVE_CONNECTIONS_PER_IP; default 32)
          --live-ping-interval S  seconds between WebSocket pings; a peer that misses one pong is dropped
                                 (PHOTOWALL_LIVE_PING_INTERVAL; default 10)
          --request-head-timeout S  seconds to send a whole request head, not restarted by each byte (on a
                                 kept-alive connection counted after the 30 s idle timeout)
                                 (PHOTOWALL_REQUEST_HEAD_TIMEOUT; default 10; 0 = none)
          --worker-threads N     handler threads (PHOTOWALL_WORKER_THREADS; default 32)
          --active-workers N     handlers running at once outside their waits on disks and networks
                                 (PHOTOWALL_ACTIVE_WORKERS; default two per core, at most --worker-threads)
          --local-threads N      threads for CPU-only handlers, SQLite queries among them, first in, first out
                                 (PHOTOWALL_LOCAL_THREADS; default one per core)

        Data:
          --data-dir DIR         database and files (PHOTOWALL_DATA_DIR; default Storage)
          --database URL         postgres://USER@HOST:PORT/DB instead of SQLite in the data dir (PARSE_SERVER_DATABASE_URI)
          --files URL            where file bytes live (PHOTOWALL_FILES_URL; default: the data dir). An S3 bucket:
                                 s3://BUCKET?endpoint=http(s)://HOST[:PORT]&region=R[&prefix=files/][&cache-size=BYTES]
                                 [&presigned-urls=SECONDS: downloads that pass PhotoWall's checks are redirected to S3]
                                 (path-style, SigV4; credentials from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
                                 optional AWS_SESSION_TOKEN). Files are served from a local read cache in
                                 DATA_DIR/s3-cache (cache-size default 1 GiB). Resumable uploads become S3 multipart
                                 uploads plus a small tail object; only the chunk being received is spooled in DATA_DIR/uploads

        Keys (parse-server's):
          --app-id ID            application id (PARSE_SERVER_APPLICATION_ID; default photowall)
          --master-key KEY       master key (PARSE_SERVER_MASTER_KEY; default photowall-master)
          --rest-key KEY         require this X-Parse-REST-API-Key (PARSE_SERVER_REST_API_KEY)
          --client-key KEY       require this X-Parse-Client-Key (PARSE_SERVER_CLIENT_KEY)
          --javascript-key KEY   require this X-Parse-Javascript-Key (PARSE_SERVER_JAVASCRIPT_KEY)
          --allow-client-class-creation   let clients create classes (PARSE_SERVER_ALLOW_CLIENT_CLASS_CREATION)

        Limits:
          --max-upload-size SIZE largest file upload, e.g. 20mb (PARSE_SERVER_MAX_UPLOAD_SIZE; default 20mb)
          --max-json-size SIZE   largest JSON body (PHOTOWALL_MAX_JSON_SIZE; default 1mb)
          --session-length S     seconds a new session lasts (PARSE_SERVER_SESSION_LENGTH; default 31536000, a year)
          --query-time-limit S   seconds a query may run; longer ones are stopped and answered {"code":124}: on SQLite
                                 one read with all its statements (a query, a feed page), on PostgreSQL each statement
                                 (statement_timeout; not DDL) (PHOTOWALL_QUERY_TIME_LIMIT; default 10; 0 = none)

        Resumable uploads (tus):
          --upload-expiry SECONDS          an unfinished resumable upload expires after this idle time (PHOTOWALL_UPLOAD_EXPIRY; default 86400)
          --upload-reaper-interval SECONDS how often expired uploads are removed (PHOTOWALL_UPLOAD_REAPER_INTERVAL; default 60)
          --upload-orphan-age SECONDS      upload storage no record refers to (a crash between steps; on S3 also
                                           multipart uploads of POST /files bodies that died), parts of completed
                                           uploads, and thumbnails no photo names (a crash while saving it) are
                                           removed once this old, at start and hourly (PHOTOWALL_UPLOAD_ORPHAN_AGE;
                                           default 86400)
          --upload-stall-timeout SECONDS   a PATCH that received nothing for this long gives way to a newer PATCH
                                           of the same upload (PHOTOWALL_UPLOAD_STALL_TIMEOUT; default 5)

        Photos and the wall:
          --thumbnail-size N     longest edge of \(WallSchema.imageClass).thumbnail in pixels (PHOTOWALL_THUMBNAIL_SIZE; default 256)
          --display-size N       longest edge of \(WallSchema.imageClass).display in pixels (PHOTOWALL_DISPLAY_SIZE; default 1080)
          --thumbnail-threads N  threads rendering thumbnails (PHOTOWALL_THUMBNAIL_THREADS; default one per core)
          --render-wait-limit SECONDS  a WallImage save whose thumbnails have not started rendering after this long
                                 (a backlog of large photos) is refused with 124 and Retry-After (HTTP 503), and its
                                 render stays queued for the retry (PHOTOWALL_RENDER_WAIT_LIMIT; default 20)
          --wall-visibility V    friends: images and comments seen by the owner and the owner's friends (default);
                                 public: by everyone (PHOTOWALL_WALL_VISIBILITY)
          --feed-threshold N     authors (friends + 1) up to which the feed probes per author; above it, it scans by
                                 time (PHOTOWALL_FEED_THRESHOLD; default: the database's measured crossover for the
                                 \(WallSchema.imageClass) rows it holds, re-read each minute: SQLite √(0.3 × images), 547 at 1M
                                 and 1,095 at 4M; PostgreSQL √(0.045 × rows), about 210 at 1M and 670 at 10M)
          --web-root DIR         serve the browser wall at / from DIR instead of the shipped files (PHOTOWALL_WEB_ROOT)

        Facebook login:
          --facebook-url URL     Graph API base for Facebook login, e.g. http://127.0.0.1:1338/v19.0 (PHOTOWALL_FACEBOOK_URL;
                                 without it authData.facebook is refused with 252)
          --facebook-app-id IDS  accepted app ids, comma-separated, checked with GET /app (PHOTOWALL_FACEBOOK_APP_ID)
          --facebook-app-secret S  app secret for appsecret_proof (PHOTOWALL_FACEBOOK_APP_SECRET)
          --facebook-dialog-url URL  the OAuth dialog the browser wall opens (PHOTOWALL_FACEBOOK_DIALOG_URL; default
                                 <facebook-url>/dialog/oauth, or www.facebook.com's for graph.facebook.com)
          --friend-sync-ttl S    refresh a user's friend list from Facebook after S seconds (PHOTOWALL_FRIEND_SYNC_TTL; default 3600)

        Running:
          --log-level LEVEL      trace|debug|info|notice|warning|error (PARSE_SERVER_LOG_LEVEL; default info)
          --stop-on-stdin-eof    shut down gracefully when standard input closes (for supervisors and tests)

        """

    static func run(_ args: [String]) -> Int32 {
        do {
            let o = try Options(args, known: ["port", "host", "data-dir", "database", "files", "app-id", "master-key", "rest-key", "client-key",
                                              "javascript-key", "public-url", "max-upload-size", "max-json-size", "session-length",
                                              "worker-threads", "active-workers", "local-threads", "max-connections", "max-connections-per-ip", "live-connections-per-ip", "live-ping-interval", "request-head-timeout", "query-time-limit", "log-level", "thumbnail-size", "display-size", "thumbnail-threads", "render-wait-limit", "upload-expiry", "upload-reaper-interval", "upload-orphan-age", "upload-stall-timeout",
                                              "facebook-url", "facebook-app-id", "facebook-app-secret", "friend-sync-ttl",
                                              "wall-visibility", "feed-threshold", "web-root", "facebook-dialog-url"],
                                flags: ["help", "allow-client-class-creation", "stop-on-stdin-eof"])
            if o.flag("help") { Terminal.write(help, to: 1); return 0 }
            return try serve(o)
        } catch let e as UsageError {
            Terminal.write("photowall serve: \(e)\n", to: 2)
            return 64
        } catch let e as ParseError {
            Terminal.write("photowall serve: \(e.message)\(e.cause.map { " (\($0))" } ?? "")\n", to: 2)
            return 1
        } catch {
            Terminal.write("photowall serve: \(error)\n", to: 2)
            return 1
        }
    }

    static func serve(_ o: Options) throws -> Int32 {
        let levelName = o.value("log-level", env: ["PARSE_SERVER_LOG_LEVEL"]) ?? "info"
        guard let level = Logger.Level(name: levelName) else { throw UsageError(description: "unknown log level '\(levelName)'") }
        let logger = Logger(label: "photowall", level: level)
        let host = o.value("host", env: ["PARSE_SERVER_HOST"]) ?? "127.0.0.1"
        let portText = o.value("port", env: ["PORT", "PARSE_SERVER_PORT"]) ?? "1337"
        guard let port = Int(portText), (0...65535).contains(port) else { throw UsageError(description: "bad port '\(portText)'") }
        let dataDir = o.value("data-dir", env: ["PHOTOWALL_DATA_DIR"]) ?? "Storage"
        var config = ServerConfig()
        config.appId = o.value("app-id", env: ["PARSE_SERVER_APPLICATION_ID"]) ?? config.appId
        config.masterKey = o.value("master-key", env: ["PARSE_SERVER_MASTER_KEY"]) ?? config.masterKey
        config.restAPIKey = o.value("rest-key", env: ["PARSE_SERVER_REST_API_KEY"])
        config.clientKey = o.value("client-key", env: ["PARSE_SERVER_CLIENT_KEY"])
        config.javascriptKey = o.value("javascript-key", env: ["PARSE_SERVER_JAVASCRIPT_KEY"])
        if let s = o.value("max-upload-size", env: ["PARSE_SERVER_MAX_UPLOAD_SIZE"]) {
            guard let n = parseByteSize(s), n > 0 else { throw UsageError(description: "bad size '\(s)'") }
            config.maxUploadBytes = n
        }
        if let s = o.value("session-length", env: ["PARSE_SERVER_SESSION_LENGTH"]) {
            guard let n = Int64(s), n > 0 else { throw UsageError(description: "bad --session-length '\(s)' (seconds)") }
            config.sessionLengthSeconds = n
        }
        if let s = o.value("max-json-size", env: ["PHOTOWALL_MAX_JSON_SIZE"]) {
            guard let n = parseByteSize(s), n > 0 else { throw UsageError(description: "bad size '\(s)'") }
            config.maxJSONBytes = n
        }
        if o.flag("allow-client-class-creation") || o.value("", env: ["PARSE_SERVER_ALLOW_CLIENT_CLASS_CREATION"]) == "true" {
            config.allowClientClassCreation = true
        }
        var httpConfig = HTTPServer.Configuration(host: host, port: port, logger: Logger(label: "http", level: level))
        if let w = o.value("worker-threads", env: ["PHOTOWALL_WORKER_THREADS"]) {
            guard let n = Int(w), n > 0 else { throw UsageError(description: "bad --worker-threads '\(w)'") }
            httpConfig.workerThreads = n
        }
        if let a = o.value("active-workers", env: ["PHOTOWALL_ACTIVE_WORKERS"]) {
            guard let n = Int(a), (1...4096).contains(n) else { throw UsageError(description: "bad --active-workers '\(a)' (1–4096)") }
            httpConfig.activeWorkerThreads = n
        }
        if let l = o.value("local-threads", env: ["PHOTOWALL_LOCAL_THREADS"]) {
            guard let n = Int(l), (1...4096).contains(n) else { throw UsageError(description: "bad --local-threads '\(l)' (1–4096)") }
            httpConfig.localWorkerThreads = n
        }
        if let m = o.value("max-connections", env: ["PHOTOWALL_MAX_CONNECTIONS"]) {
            guard let n = Int(m), (1...Int(Int32.max)).contains(n) else { throw UsageError(description: "bad --max-connections '\(m)'") }
            httpConfig.connectionLimit = n
        }
        if let m = o.value("max-connections-per-ip", env: ["PHOTOWALL_MAX_CONNECTIONS_PER_IP"]) {
            guard let n = Int(m), (0...Int(Int32.max)).contains(n) else { throw UsageError(description: "bad --max-connections-per-ip '\(m)'") }
            httpConfig.perIPConnectionLimit = n
        }
        if let t = o.value("request-head-timeout", env: ["PHOTOWALL_REQUEST_HEAD_TIMEOUT"]) {
            guard let seconds = Double(t), seconds >= 0, seconds <= 86_400 else {
                throw UsageError(description: "bad --request-head-timeout '\(t)' (seconds)")
            }
            httpConfig.requestHeadTimeoutSeconds = seconds
        }

        if mkdir(dataDir, 0o755) != 0 && errno != EEXIST {
            throw UsageError(description: "cannot create data directory \(dataDir): \(String(cString: strerror(errno)))")
        }
        var queryTimeLimit: Duration? = .seconds(10)
        if let t = o.value("query-time-limit", env: ["PHOTOWALL_QUERY_TIME_LIMIT"]) {
            guard let seconds = Double(t), seconds >= 0, seconds <= 86_400 else {
                throw UsageError(description: "bad --query-time-limit '\(t)' (seconds)")
            }
            queryTimeLimit = seconds == 0 ? nil : .nanoseconds(Int64(seconds * 1e9))
        }
        let database = try DatabaseOpener.open(url: o.value("database", env: ["PARSE_SERVER_DATABASE_URI"]), dataDir: dataDir,
                                               timeLimit: queryTimeLimit, rowCacheSeconds: DatabaseOpener.sqliteCacheSeconds, logger: logger)
        let store = try makeFileStore(o, dataDir: dataDir)
        try WallSchema.createClasses(database)

        let stall = o.value("upload-stall-timeout", env: ["PHOTOWALL_UPLOAD_STALL_TIMEOUT"]) ?? "5"
        guard let stallSeconds = Double(stall), stallSeconds > 0 else { throw UsageError(description: "bad --upload-stall-timeout '\(stall)'") }
        let writerStallLimit = Duration.milliseconds(Int64(stallSeconds * 1000))
        // Every error, the engine's refusals included, is answered by the API's one renderer.
        httpConfig.errorRenderer = APIErrorRenderer(mountPath: config.mountPath, uploadStallLimit: writerStallLimit, logger: logger).render

        // The public URL needs the bound port when port 0 was asked for, so bind first; until the routes
        // are set below, every request is answered 503 {"status":"starting"} with Retry-After: 1.
        let publicURLOption = o.value("public-url", env: ["PARSE_PUBLIC_SERVER_URL", "PARSE_SERVER_PUBLIC_SERVER_URL"])
        let server = HTTPServer(configuration: httpConfig, whileStarting: ParseAPI.starting)
        let boundPort = try server.start()
        let shownHost = host == "0.0.0.0" ? "127.0.0.1" : host
        config.publicServerURL = publicURLOption ?? "http://\(shownHost):\(boundPort)\(config.mountPath)"

        let files = FileService(records: database, objects: database, store: store, config: config)
        var sizes = ThumbnailService.Sizes()
        if let t = o.value("thumbnail-size", env: ["PHOTOWALL_THUMBNAIL_SIZE"]) {
            guard let n = Int(t), (16...4096).contains(n) else { throw UsageError(description: "bad --thumbnail-size '\(t)' (16–4096)") }
            sizes.thumbnail = n
        }
        if let d = o.value("display-size", env: ["PHOTOWALL_DISPLAY_SIZE"]) {
            guard let n = Int(d), (16...8192).contains(n) else { throw UsageError(description: "bad --display-size '\(d)' (16–8192)") }
            sizes.display = n
        }
        var thumbnailThreads = ThumbnailService.defaultConcurrency
        if let t = o.value("thumbnail-threads", env: ["PHOTOWALL_THUMBNAIL_THREADS"]) {
            guard let n = Int(t), (1...256).contains(n) else { throw UsageError(description: "bad --thumbnail-threads '\(t)' (1–256)") }
            thumbnailThreads = n
        }
        var renderWaitLimit = ThumbnailService.defaultRenderWaitLimit
        if let w = o.value("render-wait-limit", env: ["PHOTOWALL_RENDER_WAIT_LIMIT"]) {
            guard let seconds = Double(w), seconds >= 0.001, seconds <= 3600 else {
                throw UsageError(description: "bad --render-wait-limit '\(w)' (seconds, 0.001 to 3600)")
            }
            renderWaitLimit = .seconds(seconds)
        }
        var providers: [String: any IdentityProvider] = [:]
        var facebook: FacebookGraphProvider?
        if let graph = o.value("facebook-url", env: ["PHOTOWALL_FACEBOOK_URL"]) {
            let appIds = o.value("facebook-app-id", env: ["PHOTOWALL_FACEBOOK_APP_ID"]).map { $0.split(separator: ",").map(String.init) } ?? []
            let provider = FacebookGraphProvider(baseURL: graph, appIds: appIds,
                                                 appSecret: o.value("facebook-app-secret", env: ["PHOTOWALL_FACEBOOK_APP_SECRET"]))
            providers["facebook"] = provider
            facebook = provider
        }
        var friendTTL: Int64 = 3600
        if let t = o.value("friend-sync-ttl", env: ["PHOTOWALL_FRIEND_SYNC_TTL"]) {
            guard let n = Int64(t), n >= 0 else { throw UsageError(description: "bad --friend-sync-ttl '\(t)' (seconds)") }
            friendTTL = n
        }
        let visibilityText = o.value("wall-visibility", env: ["PHOTOWALL_WALL_VISIBILITY"]) ?? "friends"
        guard let visibility = WallRules.Visibility(rawValue: visibilityText) else {
            throw UsageError(description: "bad --wall-visibility '\(visibilityText)' (friends or public)")
        }
        // nil: the feed store's `suggestedFeedThreshold()` for the images it holds (both adapters). A fixed
        // 300 here used to hide SQLite's: at 500 friends on 1M images the time walk then cost 11 ms of CPU
        // per page where the per-author statement costs 6.5 ms.
        var threshold: Int? = nil
        if let t = o.value("feed-threshold", env: ["PHOTOWALL_FEED_THRESHOLD"]) {
            guard let n = Int(t), n >= 0 else { throw UsageError(description: "bad --feed-threshold '\(t)'") }
            threshold = n
        }
        // Committed saves and deletes, the wall's cascades included, for LiveQuery.
        let events = ObjectEventBus()
        // Several instances on one PostgreSQL: each one's events reach the others' live subscribers
        // through LISTEN/NOTIFY (SQLite is one process: nothing to carry).
        let notifier = (database as? PostgresAdapter)?.changeNotifier()
        if let notifier { ClusterEvents.connect(events, through: notifier, logger: logger) }
        // Resolved sessions, the users `include` and the feed read, and friend lists are cached for 5 s, invalidated
        // at once by every write of a session or user, and every friend sync, in this process; so are the rows read
        // by objectId (opened above), forgotten after every write. Not on PostgreSQL: several instances may share
        // its database, and another instance's logout, user change, sync or write would not reach these caches
        // (see SessionCache, ObjectService.includeTargets, FriendService, CachedRow).
        let cacheSeconds: Double = database is PostgresAdapter ? 0 : DatabaseOpener.sqliteCacheSeconds
        // The photo wall, installed in the object service with one call (its rules, hooks, feed and file access).
        let wall = Wall(database: database, fileRecords: database, feedStore: database, friendGraph: database, providers: providers, files: files,
                        masterKey: config.masterKey,
                        options: Wall.Options(visibility: visibility, thumbnailSizes: sizes, feedThreshold: threshold,
                                              friendSyncTTLSeconds: friendTTL, friendCacheSeconds: cacheSeconds,
                                              thumbnailThreads: thumbnailThreads,
                                              renderWaitLimit: renderWaitLimit),
                        events: events, logger: logger)
        logger.info("feed: per-author probes up to \(wall.feed.perAuthorThreshold) authors"
                    + (threshold == nil ? " (the database's suggestion for the images it holds)" : " (--feed-threshold)"))
        let objects = ObjectService(store: database, fileRecords: database, config: config, installing: wall, events: events,
                                    sessionCacheSeconds: cacheSeconds, userCacheSeconds: cacheSeconds)
        let users = try UserService(objects: objects, providers: providers, logger: logger)
        let expiry = o.value("upload-expiry", env: ["PHOTOWALL_UPLOAD_EXPIRY"]) ?? "86400"
        guard let expirySeconds = Int64(expiry), expirySeconds > 0 else { throw UsageError(description: "bad --upload-expiry '\(expiry)'") }
        let reaper = o.value("upload-reaper-interval", env: ["PHOTOWALL_UPLOAD_REAPER_INTERVAL"]) ?? "60"
        guard let reaperSeconds = Double(reaper), reaperSeconds > 0 else { throw UsageError(description: "bad --upload-reaper-interval '\(reaper)'") }
        let orphanAge = o.value("upload-orphan-age", env: ["PHOTOWALL_UPLOAD_ORPHAN_AGE"]) ?? "86400"
        guard let orphanSeconds = Int64(orphanAge), orphanSeconds > 0 else { throw UsageError(description: "bad --upload-orphan-age '\(orphanAge)'") }
        let uploads = UploadService(records: database, fileRecords: database, parts: try Self.uploadParts(for: store, dataDir: dataDir), files: files,
                                    config: config, expirySeconds: expirySeconds,
                                    writerStallLimit: writerStallLimit, logger: logger)
        // The installed extension's leftovers (the wall: thumbnails of a save that died) go with the uploads'.
        uploads.startReaper(intervalSeconds: reaperSeconds, orphanAgeSeconds: orphanSeconds, otherSweeps: [objects.sweepLeftovers])
        let api = ParseAPI(config: config, objects: objects, users: users, files: files, uploads: uploads,
                           fileAccess: objects.fileAccess, functions: objects.functions,
                           objectReadsAreLocal: !(database is PostgresAdapter), logger: logger)
        var apiRouter = Router()
        // LiveQuery at ws://host/<mount>: a WebSocket hub on the API's port; events per viewer (the wall's
        // posts and comments carry their author as `include=user` would).
        var wsLimits = WebSocketHub.Limits()
        if let m = o.value("live-connections-per-ip", env: ["PHOTOWALL_LIVE_CONNECTIONS_PER_IP"]) {
            guard let n = Int(m), n > 0 else { throw UsageError(description: "bad --live-connections-per-ip '\(m)'") }
            wsLimits.maxConnectionsPerAddress = n
        }
        if let t = o.value("live-ping-interval", env: ["PHOTOWALL_LIVE_PING_INTERVAL"]) {
            guard let n = Int(t), (1...3600).contains(n) else { throw UsageError(description: "bad --live-ping-interval '\(t)' (seconds)") }
            wsLimits.pingIntervalSeconds = n
        }
        let hub = WebSocketHub(limits: wsLimits, logger: logger)
        var liveOptions = LiveQueryServer.Options()
        liveOptions.include = [WallSchema.imageClass: ["user"], WallSchema.commentClass: ["user"]]
        liveOptions.sessionCheckSeconds = wsLimits.pingIntervalSeconds
        let live = LiveQueryServer(objects: objects, users: users, hub: hub, options: liveOptions, logger: logger)
        live.register(on: &apiRouter)
        server.beforeStop { hub.stop(); notifier?.stop() }
        api.register(on: &apiRouter)
        // With presigned downloads, wall images load from the S3 endpoint: the page must allow it.
        let directOrigin = (store as? S3FileStore).flatMap { $0.presignedURLSeconds == nil ? nil : $0.client.configuration.endpoint }
        let web = try webApp(o, config: config, facebook: facebook, imageOrigin: directOrigin)
        web?.register(on: &apiRouter)
        server.route(apiRouter)

        Terminal.write("""
            PhotoWall listening on http://\(shownHost):\(boundPort)\(config.mountPath)
              wall:        \(web.map { "http://\(shownHost):\(boundPort)/ (files from \($0.assets.root))" } ?? "off (web files not found: set --web-root)")
              data:        \(database is PostgresAdapter ? "PostgreSQL" : "\(dataDir)/photowall.sqlite (SQLite)"), files in \(describe(store, dataDir: dataDir))
              app id:      \(config.appId)
              master key:  \(config.masterKey == "photowall-master" ? "photowall-master (development default: set --master-key)" : "(set)")
              upload a file:
                curl -X POST -H 'X-Parse-Application-Id: \(config.appId)' -H 'X-Parse-Master-Key: <master key>' \\
                     -H 'Content-Type: image/jpeg' --data-binary @photo.jpg \(config.publicServerURL)/files/photo.jpg

            """, to: 1)
        if o.flag("stop-on-stdin-eof") { StdinWatch.stopOnEOF(server) }
        server.runUntilSignal()
        logger.notice("stopped")
        return 0
    }
}

extension ServeCommand {
    /// The file store `--files` / `PHOTOWALL_FILES_URL` asks for: the data dir by default, or an S3
    /// bucket, checked before the server starts (reachable, bucket present, credentials accepted).
    /// - Throws: `UsageError` for a bad URL or missing credentials; `ParseError` 100 when the
    ///   bucket can't be used.
    static func makeFileStore(_ o: Options, dataDir: String) throws -> any FileStore {
        guard let url = o.value("files", env: ["PHOTOWALL_FILES_URL"]), !url.isEmpty, url != "file:", url != dataDir else {
            return try FileSystemStore(root: dataDir)
        }
        guard url.hasPrefix("s3://") else {
            throw UsageError(description: "unsupported --files '\(url.prefix(while: { $0 != ":" }))': use s3://BUCKET?endpoint=URL&region=R")
        }
        let parsed: S3StoreURL
        do { parsed = try S3StoreURL(url) } catch { throw UsageError(description: error.message) }
        guard let credentials = S3Credentials.fromEnvironment() else {
            throw UsageError(description: "--files \(url.prefix(while: { $0 != "?" })): set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
        }
        let client = S3Client(S3Configuration(endpoint: parsed.endpoint, region: parsed.region, bucket: parsed.bucket, credentials: credentials))
        let store = try S3FileStore(client: client, keyPrefix: parsed.prefix, cacheDirectory: dataDir + "/s3-cache",
                                    cacheLimitBytes: parsed.cacheLimitBytes, presignedURLSeconds: parsed.presignedURLSeconds)
        try store.checkReachable()
        return store
    }

    /// Where unfinished tus uploads live: S3 multipart uploads beside an S3 file store (so any
    /// instance can take any chunk), else part files in the data folder.
    static func uploadParts(for store: any FileStore, dataDir: String) throws -> any UploadPartStore {
        if let s3 = store as? S3FileStore { return try S3UploadParts(store: s3, spoolDirectory: dataDir + "/uploads") }
        return try FileSystemUploadParts(root: dataDir)
    }

    static func describe(_ store: any FileStore, dataDir: String) -> String {
        guard let s3 = store as? S3FileStore else { return dataDir + "/files" }
        let c = s3.client.configuration
        return "S3 \(c.endpoint)/\(c.bucket)/\(s3.keyPrefix)"
    }

    /// The browser wall, from `--web-root` or the shipped files; nil (with a warning) when neither is there.
    static func webApp(_ o: Options, config: ServerConfig, facebook: FacebookGraphProvider?, imageOrigin: String? = nil) throws -> WebApp? {
        let root: String
        if let r = o.value("web-root", env: ["PHOTOWALL_WEB_ROOT"]) {
            root = r
        } else if let r = WebAssets.defaultRoot() {
            root = r
        } else {
            Terminal.write("photowall serve: the browser wall's files were not found next to the binary; set --web-root\n", to: 2)
            return nil
        }
        let assets: WebAssets
        do { assets = try WebAssets(root: root) } catch {
            throw UsageError(description: "cannot read --web-root \(root): \(error.localizedDescription)")
        }
        guard assets.files["index.html"] != nil else { throw UsageError(description: "no index.html in --web-root \(root)") }
        let dialog = o.value("facebook-dialog-url", env: ["PHOTOWALL_FACEBOOK_DIALOG_URL"]) ?? facebook.map { WebConfig.dialogURL(forGraphBase: $0.baseURL) }
        let webConfig = WebConfig(appId: config.appId, serverPath: config.mountPath, facebookDialogURL: dialog,
                                  facebookAppId: facebook?.appIds.first, maxUploadBytes: config.maxUploadBytes,
                                  facebookGraphURL: facebook?.baseURL)
        // The public URL may name another origin (a proxy, another host name): its images and API must load too.
        var origins: [String] = []
        if let u = URLComponents(string: config.publicServerURL), let scheme = u.scheme, let host = u.host {
            origins.append("\(scheme)://\(host)\(u.port.map { ":\($0)" } ?? "")")
        }
        if let u = imageOrigin.flatMap({ URLComponents(string: $0) }), let scheme = u.scheme, let host = u.host {
            origins.append("\(scheme)://\(host)\(u.port.map { ":\($0)" } ?? "")")
        }
        return WebApp(assets: assets, config: webConfig, facebook: facebook, extraOrigins: origins)
    }
}
