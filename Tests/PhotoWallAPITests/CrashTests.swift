import Foundation
import PhotoWallTesting
import Testing
import PhotoWallCore

/// `kill -9` while objects and files are being written; after a restart the database opens,
/// every acknowledged write is there, and no half-written file is visible.
@Suite(.serialized) struct CrashTests {
    @Test func killNineDuringWrites() async throws {
        let s = try ParseTestServer()
        let (_, token) = try await s.signUp("crash_user")
        let acknowledged = AckLog()
        let photo = Data((0..<400_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })

        // Writers run until the server dies under them.
        await withTaskGroup(of: Void.self) { group in
            for w in 0..<4 {
                group.addTask {
                    for i in 0..<10_000 {
                        do {
                            if i % 3 == 0 {
                                let r = try await s.request("POST", "/files/p\(w)_\(i).jpg", body: photo, key: .session(token), headers: ["Content-Type": "image/jpeg"])
                                if r.status == 201, let n = r.json["name"]?.stringValue { acknowledged.addFile(n) } else { return }
                            } else {
                                let r = try await s.request("POST", "/classes/WallImage", json: ["caption": .string("w\(w)-\(i)")], key: .session(token))
                                if r.status == 201, let id = r.json["objectId"]?.stringValue { acknowledged.addObject(id) } else { return }
                            }
                        } catch { return }
                    }
                }
            }
            group.addTask {
                // Kill once the writers have made real progress (not after a fixed time, which a
                // loaded machine could spend on the first requests), or after 30 s at the latest.
                for _ in 0..<300 {
                    let (o, f) = acknowledged.snapshot()
                    if o.count >= 20 && f.count >= 3 { break }
                    try? await Task.sleep(for: .milliseconds(100))
                }
                try? await Task.sleep(for: .milliseconds(100))
                s.kill(SIGKILL)
            }
        }
        let (objects, files) = acknowledged.snapshot()
        #expect(objects.count > 10, "writers made progress before the kill")
        #expect(files.count > 2)

        try s.start()
        let found = try await s.request("GET", "/classes/WallImage?limit=10000&keys=objectId", key: .master(nil))
        #expect(found.status == 200)
        let ids = Set(found.json["results"]?.arrayValue?.compactMap { $0["objectId"]?.stringValue } ?? [])
        #expect(objects.isSubset(of: ids), "every acknowledged object survived")
        for name in files {
            let r = try await s.request("GET", "\(s.baseURL)/files/\(s.appId)/\(name)", key: .none)
            #expect(r.status == 200 && r.body == photo, "acknowledged file \(name) is whole")
        }
        // Every visible file is whole: nothing half-written is served.
        for name in try s.storedFileNames() {
            let r = try await s.request("GET", "\(s.baseURL)/files/\(s.appId)/\(name)", key: .none)
            if r.status == 200 { #expect(r.body == photo, "\(name) is complete") }
        }
        let tmp = try s.localTemporaryFiles()
        #expect(tmp.isEmpty, "temporaries were cleaned at start: \(tmp)")
        #expect(try await s.request("POST", "/login", json: ["username": "crash_user", "password": "secret-pw"]).status == 200)
    }
}

/// Acknowledged writes, recorded from several tasks.
final class AckLog: Sendable {
    private let state = Mutex<(Set<String>, Set<String>)>(([], []))
    func addObject(_ id: String) { _ = state.withLock { $0.0.insert(id) } }
    func addFile(_ n: String) { _ = state.withLock { $0.1.insert(n) } }
    func snapshot() -> (Set<String>, Set<String>) { state.withLock { $0 } }
}

import Synchronization
