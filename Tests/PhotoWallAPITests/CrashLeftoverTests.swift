import Foundation
import PhotoWallCore
import PhotoWallTesting
import Testing

/// Nothing is orphaned by a crash (issue 11.11, first two bullets): thumbnails of a photo whose
/// save died with the process are swept at the next start, and a completed upload's part storage
/// is released.
@Suite(.serialized) struct CrashLeftoverTests {
    /// Every derived file in the store has a record and is named by a WallImage.
    func unnamedDerivedFiles(_ s: ParseTestServer) async throws -> [String] {
        var out: [String] = []
        for name in try s.storedFileNames() where name.contains("_thumbnail.") || name.contains("_display.") {
            let field = name.contains("_thumbnail.") ? "thumbnail" : "display"
            let q = try await s.request("GET", "/classes/WallImage?count=1&limit=0&where=" + enc([.init(field): ["__type": "File", "name": .string(name)]]),
                                        key: .master(nil))
            if q.json["count"] != 1 { out.append(name) }
        }
        return out
    }

    @Test func killNineWhileThumbnailingLeavesNoUnnamedFiles() async throws {
        let s = try ParseTestServer(extraArgs: ["--upload-orphan-age", "1"])
        let (_, token) = try await s.signUp("thumb_crash")
        let source = TestPaths.corpus?.appendingPathComponent("photos/olympus_e-p3_4032x3024.jpg")
            ?? TestPaths.packageRoot.appendingPathComponent("Samples/photos/landscape_o1.jpg")
        let photo = try Data(contentsOf: source)
        var names: [String] = []
        for i in 0..<6 {
            let up = try await s.request("POST", "/files/crash\(i).jpg", body: photo, key: .session(token), headers: ["Content-Type": "image/jpeg"])
            names.append(try #require(up.json["name"]?.stringValue))
        }
        let saved = AckLog()
        await withTaskGroup(of: Void.self) { group in
            for name in names {
                group.addTask {
                    for _ in 0..<1000 {
                        guard let r = try? await s.request("POST", "/classes/WallImage", json: ["image": ["__type": "File", "name": .string(name)]],
                                                           key: .session(token)), r.status == 201 else { return }
                        saved.addObject(r.json["objectId"]?.stringValue ?? "")
                    }
                }
            }
            group.addTask {
                // Kill in the gap the finding hit: as soon as a save's derived files are stored but its
                // photo isn't (more derived files than twice the saves acknowledged); 60 s at the latest.
                let deadline = Date().addingTimeInterval(60)
                while Date() < deadline {
                    let derived = (try? s.storedFileNames().filter { $0.contains("_thumbnail.") || $0.contains("_display.") }.count) ?? 0
                    if derived > 2 * saved.snapshot().0.count { break }
                    try? await Task.sleep(for: .milliseconds(2))
                }
                s.kill(SIGKILL)
            }
        }
        try await Task.sleep(for: .milliseconds(1100))  // older than --upload-orphan-age
        try s.start()
        // The sweep runs at start, beside the requests: wait for it (at most 30 s), then check.
        let deadline = Date().addingTimeInterval(30)
        var left = try await unnamedDerivedFiles(s)
        while !left.isEmpty && Date() < deadline {
            try await Task.sleep(for: .seconds(1))
            left = try await unnamedDerivedFiles(s)
        }
        #expect(left.isEmpty, "thumbnails no photo names: \(left)")
        // And every acknowledged photo kept its files.
        for id in saved.snapshot().0 {
            let got = try await s.request("GET", "/classes/WallImage/\(id)", key: .master(nil))
            let thumb = try #require(got.json["thumbnail"]?["url"]?.stringValue)
            #expect(try await s.request("GET", thumb, key: .master(nil)).status == 200)
        }
    }

    /// Completes an upload by tus. - Returns: (upload id, file name).
    func completedUpload(_ s: ParseTestServer, token: String) async throws -> (String, String) {
        let bytes = Data((0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let created = try await s.request("POST", "/uploads", body: bytes, key: .session(token), headers: [
            "Tus-Resumable": "1.0.0", "Upload-Length": "\(bytes.count)", "Content-Type": "application/offset+octet-stream",
            "Upload-Metadata": "filename \(Data("blob.bin".utf8).base64EncodedString())",
        ])
        let id = try #require(created.header("Location")?.split(separator: "/").last.map(String.init))
        return (id, try #require(created.header("X-Parse-File-Name")))
    }

    @Test func completedUploadPartsAreReleased() async throws {
        let s = try ParseTestServer(extraArgs: ["--upload-orphan-age", "60"])
        let (_, token) = try await s.signUp("part_leftover")
        let (id, name) = try await completedUpload(s, token: token)
        #expect(try !s.localPartFileExists(id) && s.uploadLeftovers(id).isEmpty)

        // A crash between completing and releasing the part leaves it: a HEAD of the upload releases it.
        try s.plantOrphanedUpload(id)
        let head = try await s.request("HEAD", "/uploads/\(id)", key: .session(token), headers: ["Tus-Resumable": "1.0.0"])
        #expect(head.header("X-Parse-File-Name") == name)
        #expect(!s.localPartFileExists(id))
        #expect(try s.uploadLeftovers(id).isEmpty)

        // Without a HEAD, the sweep at start releases it (the upload has a record, but it is complete).
        try s.plantOrphanedUpload(id)
        let part = s.dataDir.appendingPathComponent("uploads/\(id).part").path
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -3600)], ofItemAtPath: part)
        s.stop()
        try s.start()
        let deadline = Date().addingTimeInterval(30)
        while s.localPartFileExists(id) && Date() < deadline { try await Task.sleep(for: .milliseconds(100)) }
        #expect(!s.localPartFileExists(id))
        // Deleting the file frees its bytes: nothing else links them.
        #expect(try await s.request("DELETE", "/files/\(name)", key: .master(nil)).status == 200)
        #expect(!(try s.storedFileNames()).contains(name))
    }
}
