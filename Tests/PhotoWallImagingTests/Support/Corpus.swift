import Testing
@testable import PhotoWallImaging

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The shared image corpus (`MANIFEST.tsv` + files), found through
/// `PHOTOWALL_CORPUS` or at `../shared/imagecorpus` beside the package root.
enum Corpus {
    /// Directory of the corpus, or nil when it is not on this machine.
    static let directory: String? = {
        var candidates: [String] = []
        if let env = getenv("PHOTOWALL_CORPUS") { candidates.append(String(cString: env)) }
        // #filePath = <root>/Tests/PhotoWallImagingTests/Support/Corpus.swift
        var root = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
        root.removeLast(4)
        candidates.append(root.joined(separator: "/") + "/../shared/imagecorpus")
        return candidates.first { access($0 + "/MANIFEST.tsv", R_OK) == 0 }
    }()

    /// Whether the corpus tests can run; says so once, plainly, when they cannot.
    static let isAvailable: Bool = {
        if directory == nil {
            print("PhotoWallImagingTests: image corpus not found (set PHOTOWALL_CORPUS or put it at ../shared/imagecorpus); corpus tests are SKIPPED")
        }
        return directory != nil
    }()

    /// One row per corpus file; empty when the corpus is missing.
    static let rows: [ManifestRow] = {
        guard let directory, let text = try? FileInput.load(directory + "/MANIFEST.tsv", maxBytes: 16 << 20) else {
            return []
        }
        let lines = String(decoding: text, as: UTF8.self).split(separator: "\n").dropFirst()
        return lines.compactMap { line in
            let f = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard f.count >= 9 else { return nil }
            return ManifestRow(path: f[0], exercises: unquote(f[4]), expected: unquote(f[5]), structure: f[8])
        }
    }()

    /// Fields holding quotes are written CSV-style: "text with ""quotes""".
    static func unquote(_ field: String) -> String {
        guard field.count >= 2, field.hasPrefix("\""), field.hasSuffix("\"") else { return field }
        return String(field.dropFirst().dropLast()).split(separator: "\"\"", omittingEmptySubsequences: false)
            .joined(separator: "\"")
    }

    static func bytes(_ path: String) throws -> [UInt8] {
        guard let directory else { throw CorpusMissing() }
        return try FileInput.load(directory + "/" + path, maxBytes: 64 << 20)
    }

    struct CorpusMissing: Error {}
}

/// A `MANIFEST.tsv` row: the file and what a correct thumbnailer must do with it.
struct ManifestRow: Sendable, CustomTestStringConvertible {
    var path: String
    var exercises: String
    var expected: String
    var structure: String

    var testDescription: String { path }
}
