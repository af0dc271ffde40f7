// swift-tools-version:6.0
// PhotoWall: a self-hosted, Parse-compatible backend for social photo walls.
// No remote packages: everything outside the toolchain comes from Debian via pkg-config.
import PackageDescription

let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]

/// The pixel loops (decode, colour, Lanczos resampling, encode) are optimised in debug builds too: at `-Onone`
/// a 2000x1500 photo's display image took 2.9 s instead of 0.13 s, so a test server fed photos by parallel
/// suites queued its renders behind each other for over 30 s, a wait no production build sees.
let optimizedInDebug: [SwiftSetting] = strict + [.unsafeFlags(["-O"], .when(configuration: .debug))]

let package = Package(
    name: "PhotoWall",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "photowall", targets: ["photowall"]),
        // The thumbnail tool on its own (`photowall thumbnail` executes it): only PhotoWallImaging and the image libraries.
        .executable(name: "photowall-thumbnail", targets: ["photowall-thumbnail"]),
    ],
    targets: [
        // MARK: C libraries from Debian (module maps only)
        .systemLibrary(name: "CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CJPEG", pkgConfig: "libjpeg", providers: [.apt(["libjpeg62-turbo-dev"])]),
        .systemLibrary(name: "CTurboJPEG", pkgConfig: "libturbojpeg", providers: [.apt(["libturbojpeg0-dev"])]),
        .systemLibrary(name: "CPNG", pkgConfig: "libpng", providers: [.apt(["libpng-dev"])]),
        .systemLibrary(name: "CLCMS2", pkgConfig: "lcms2", providers: [.apt(["liblcms2-dev"])]),
        // HEIC/HEIF (libde265) and AVIF (dav1d) through libheif; WebP through libwebp's simple + demux APIs.
        .systemLibrary(name: "CHeif", pkgConfig: "libheif", providers: [.apt(["libheif-dev"])]),
        .systemLibrary(name: "CWebP", pkgConfig: "libwebpdemux", providers: [.apt(["libwebp-dev"])]),
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CXCrypt", pkgConfig: "libxcrypt", providers: [.apt(["libcrypt-dev"])]),
        // RFC 6455 framing (no I/O of its own); Debian's libwslay-dev ships no .pc file, so no pkgConfig here.
        .systemLibrary(name: "CWslay", providers: [.apt(["libwslay-dev"])]),

        // MARK: thin C shims (variadic calls, setjmp error paths)
        .target(name: "CMHDShim", dependencies: ["CMicroHTTPD"]),
        .target(name: "CCurlShim", dependencies: ["CCurl"]),
        .target(name: "CImageShim", dependencies: ["CJPEG", "CPNG", "CLCMS2"]),

        // MARK: Swift modules, one concern each (engine → routes → services → adapters)
        .target(name: "PhotoWallCore", swiftSettings: strict),
        .target(name: "PhotoWallCrypto", dependencies: ["CCrypto", "CXCrypt", "PhotoWallCore"], swiftSettings: strict),
        .target(name: "PhotoWallHTTP", dependencies: ["CMicroHTTPD", "CMHDShim", "PhotoWallCore"], swiftSettings: strict),
        // WebSocket on the engine's upgraded sockets: handshake, wslay framing, one poll loop thread.
        .target(name: "PhotoWallWebSocket", dependencies: ["CWslay", "PhotoWallHTTP", "PhotoWallCrypto", "PhotoWallCore"], swiftSettings: strict),
        .target(name: "PhotoWallSQL", dependencies: ["CSQLite", "PhotoWallCore"], swiftSettings: strict),
        .target(name: "PhotoWallImaging", dependencies: ["CImageShim", "CJPEG", "CTurboJPEG", "CPNG", "CLCMS2", "CHeif", "CWebP"], swiftSettings: optimizedInDebug),
        // Storage: the store protocols (PhotoWallStorage) and one adapter target per database, app-blind.
        .target(name: "PhotoWallStorage", dependencies: ["PhotoWallCore", "PhotoWallCrypto"], swiftSettings: strict),
        .target(name: "PhotoWallSQLite", dependencies: ["CSQLite", "PhotoWallCore", "PhotoWallSQL", "PhotoWallStorage"], swiftSettings: strict),
        .target(name: "PhotoWallPostgres", dependencies: ["CLibPQ", "PhotoWallCore", "PhotoWallStorage"], swiftSettings: strict),
        .target(name: "PhotoWallServices", dependencies: ["PhotoWallCore", "PhotoWallStorage", "PhotoWallCrypto", "PhotoWallImaging", "PhotoWallCurl"], swiftSettings: strict),
        // The photo wall: its classes, rules, thumbnails, feed and file access, installed in ObjectService as one extension.
        .target(name: "PhotoWallWall", dependencies: ["PhotoWallCore", "PhotoWallStorage", "PhotoWallCrypto", "PhotoWallImaging", "PhotoWallServices"], swiftSettings: strict),
        // Parse LiveQuery over WebSocket at the API's mount: events checked per viewer by ObjectService's read rules.
        .target(name: "PhotoWallLive", dependencies: ["PhotoWallCore", "PhotoWallHTTP", "PhotoWallWebSocket", "PhotoWallServices", "PhotoWallStorage", "PhotoWallCrypto"], swiftSettings: strict),
        .target(name: "PhotoWallREST", dependencies: ["PhotoWallCore", "PhotoWallHTTP", "PhotoWallServices"], swiftSettings: strict),
        // The browser wall: plain HTML/CSS/JS under Sources/PhotoWallWeb/Web, shipped as a resource bundle (no build step).
        .target(name: "PhotoWallWeb", dependencies: ["PhotoWallCore", "PhotoWallHTTP", "PhotoWallServices", "PhotoWallCrypto"],
                resources: [.copy("Web")], swiftSettings: strict),
        .target(name: "PhotoWallMockFacebook", dependencies: ["PhotoWallCore", "PhotoWallHTTP", "PhotoWallCrypto"], swiftSettings: strict),
        .target(name: "PhotoWallCurl", dependencies: ["CCurl", "CCurlShim", "PhotoWallCore"], swiftSettings: strict),
        .target(name: "PhotoWallClient", dependencies: ["PhotoWallCurl", "PhotoWallCore", "PhotoWallCrypto"], swiftSettings: strict),
        .target(name: "PhotoWallS3", dependencies: ["PhotoWallCurl", "PhotoWallCore", "PhotoWallCrypto", "PhotoWallStorage"], swiftSettings: strict),
        .executableTarget(name: "photowall-thumbnail", dependencies: ["PhotoWallImaging"], swiftSettings: strict),
        .executableTarget(name: "photowall", dependencies: ["PhotoWallREST", "PhotoWallHTTP", "PhotoWallServices", "PhotoWallStorage", "PhotoWallImaging", "PhotoWallCore", "PhotoWallMockFacebook", "PhotoWallClient", "PhotoWallSQLite", "PhotoWallPostgres", "PhotoWallS3", "PhotoWallWeb", "PhotoWallWall", "PhotoWallLive", "PhotoWallWebSocket"], swiftSettings: strict),

        // MARK: tests
        // posix_spawn with glibc's closefrom action (a GNU extension Swift's Glibc module does not import), for `Child`.
        .target(name: "CTestSpawn", path: "Tests/CTestSpawn"),
        .target(name: "PhotoWallTesting", dependencies: ["CTestSpawn", "PhotoWallCore", "PhotoWallStorage", "PhotoWallS3"], path: "Tests/PhotoWallTesting", swiftSettings: strict),
        .testTarget(name: "PhotoWallCoreTests", dependencies: ["PhotoWallCore", "PhotoWallCrypto"], swiftSettings: strict),
        .testTarget(name: "PhotoWallHTTPTests", dependencies: ["PhotoWallHTTP", "PhotoWallTesting"], swiftSettings: strict),
        .testTarget(name: "PhotoWallImagingTests", dependencies: ["PhotoWallImaging", "PhotoWallCore", "PhotoWallTesting", "CHeif"], swiftSettings: strict),
        .testTarget(name: "PhotoWallStorageTests", dependencies: ["PhotoWallStorage", "PhotoWallSQLite", "PhotoWallPostgres", "PhotoWallSQL", "PhotoWallCore", "PhotoWallTesting"], swiftSettings: strict),
        .testTarget(name: "PhotoWallSQLiteTests", dependencies: ["PhotoWallSQLite", "PhotoWallStorage", "PhotoWallSQL", "PhotoWallCore", "PhotoWallTesting", "CSQLite"], swiftSettings: strict),
        .testTarget(name: "PhotoWallMockFacebookTests", dependencies: ["PhotoWallMockFacebook", "PhotoWallTesting", "PhotoWallCore"], swiftSettings: strict),
        .testTarget(name: "PhotoWallPostgresTests", dependencies: ["PhotoWallPostgres", "PhotoWallSQLite", "PhotoWallStorage", "PhotoWallCore", "PhotoWallTesting"], swiftSettings: strict),
        .testTarget(name: "PhotoWallS3Tests", dependencies: ["PhotoWallS3", "PhotoWallStorage", "PhotoWallCore", "PhotoWallTesting"], swiftSettings: strict),
        .testTarget(name: "PhotoWallServicesTests", dependencies: ["PhotoWallServices", "PhotoWallSQLite", "PhotoWallStorage", "PhotoWallCrypto", "PhotoWallCore", "PhotoWallTesting"], swiftSettings: strict),
        .testTarget(name: "PhotoWallWallTests", dependencies: ["PhotoWallWall", "PhotoWallServices", "PhotoWallStorage", "PhotoWallSQLite", "PhotoWallCore", "PhotoWallTesting"], swiftSettings: strict),
        .testTarget(name: "PhotoWallAPITests", dependencies: ["PhotoWallTesting", "PhotoWallCore", "PhotoWallCrypto"], swiftSettings: strict),
        .testTarget(name: "PhotoWallWebTests", dependencies: ["PhotoWallWeb", "PhotoWallHTTP"], swiftSettings: strict),
        .testTarget(name: "PhotoWallUploadTests", dependencies: ["PhotoWallClient", "PhotoWallCore", "PhotoWallCrypto", "PhotoWallTesting"], swiftSettings: strict),
    ]
)
