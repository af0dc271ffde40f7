import PhotoWallCore
#if canImport(Glibc)
import Glibc
#endif

/// Files on the local disk under `root`: `files/<ab>/<cd>/<name>` sharded by the first four
/// characters of the name (the random hex prefix), temporaries in `tmp/`.
///
/// A write goes to `tmp/<random>.part`, is fsynced, renamed into place and the directory is
/// fsynced, so a crash leaves either the whole file or nothing visible. Leftover temporaries
/// from a crash are removed when the store opens.
public final class FileSystemStore: FileStore {
    public let root: String
    let filesDir: String
    let tmpDir: String

    /// - Throws: `ParseError` 1 when the folders can't be created.
    public init(root: String) throws(ParseError) {
        self.root = root
        filesDir = root + "/files"
        tmpDir = root + "/tmp"
        for d in [root, filesDir, tmpDir] {
            if mkdir(d, 0o755) != 0 && errno != EEXIST {
                throw ParseError(.internalServerError, "Internal server error.", cause: POSIXFailure(call: "mkdir \(d)", code: errno))
            }
        }
        removeStaleTemporaries()
    }

    func removeStaleTemporaries() {
        for name in directoryEntries(tmpDir) ?? [] where name.hasSuffix(".part") { unlink(tmpDir + "/" + name) }
    }

    /// The shard folder of a name (`ab/cd`); names shorter than 4 characters go to `__`.
    func shard(_ name: String) -> String {
        let u = Array(name.utf8.prefix(4))
        guard u.count == 4 else { return "__" }
        return String(decoding: u[0..<2], as: UTF8.self) + "/" + String(decoding: u[2..<4], as: UTF8.self)
    }

    func path(of name: String) -> String { filesDir + "/" + shard(name) + "/" + name }

    public func makeWriter(for name: String) throws(ParseError) -> any FileWriter {
        let tmp = tmpDir + "/" + ParseIdentifier.hex(byteCount: 12) + ".part"
        let fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw ParseError(.fileSaveError, "Could not store file: \(name).", cause: POSIXFailure(call: "open", code: errno))
        }
        return FileSystemWriter(fd: fd, tmpPath: tmp, finalPath: path(of: name), name: name, store: self)
    }

    public func location(of name: String) throws(ParseError) -> FileLocation? {
        var st = stat()
        guard stat(path(of: name), &st) == 0 else { return nil }
        return FileLocation(path: path(of: name), byteCount: Int64(st.st_size))
    }

    public func read(_ name: String) throws(ParseError) -> [UInt8] {
        let fd = open(path(of: name), O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ParseError.objectNotFound() }
        defer { close(fd) }
        var out: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = buf.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw ParseError(.internalServerError, "Internal server error.", cause: POSIXFailure(call: "read", code: errno)) }
            if n == 0 { break }
            out.append(contentsOf: buf[0..<n])
        }
        return out
    }

    public func delete(_ name: String) throws(ParseError) -> Bool {
        if unlink(path(of: name)) == 0 { return true }
        if errno == ENOENT { return false }
        throw ParseError(.fileDeleteError, "Could not delete file.", cause: POSIXFailure(call: "unlink", code: errno))
    }

    public func importFile(at source: String, as name: String) throws(ParseError) {
        try ensureShard(name)
        let target = path(of: name)
        // A hard link: no copy, and the part stays until the upload is marked complete.
        if link(source, target) != 0 && errno != EEXIST {
            throw ParseError(.fileSaveError, "Could not store file: \(name).", cause: POSIXFailure(call: "link", code: errno))
        }
        AtomicFile.syncDirectory(of: target)
    }

    /// Creates `files/ab/cd` if needed.
    func ensureShard(_ name: String) throws(ParseError) {
        var d = filesDir
        for part in shard(name).split(separator: "/") {
            d += "/" + part
            if mkdir(d, 0o755) != 0 && errno != EEXIST {
                throw ParseError(.fileSaveError, "Could not store file: \(name).", cause: POSIXFailure(call: "mkdir", code: errno))
            }
        }
    }
}

/// `pread` on a descriptor of its own (from the page cache, where bytes just written still are),
/// closed when the reader goes away.
final class FileSystemReader: WrittenBytesReader {
    let fd: Int32
    init(fd: Int32) { self.fd = fd }
    deinit { Glibc.close(fd) }

    /// Opens `path` for reading. - Throws: 130 when it can't be opened.
    static func open(_ path: String, what: String) throws(ParseError) -> FileSystemReader {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ParseError(.fileSaveError, "Could not read \(what).", cause: POSIXFailure(call: "open", code: errno)) }
        return FileSystemReader(fd: fd)
    }

    func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws(ParseError) -> Int {
        let n = preadAll(fd, buffer, at: offset)
        guard n >= 0 else { throw ParseError(.fileSaveError, "Could not read back written bytes.", cause: POSIXFailure(call: "pread", code: errno)) }
        return n
    }
}

final class FileSystemWriter: FileWriter {
    var fd: Int32
    let tmpPath: String
    let finalPath: String
    let name: String
    let store: FileSystemStore
    private(set) var byteCount: Int64 = 0
    var done = false
    /// Starts the disk writes and flushes while the body streams, so `commit`'s fsync waits only for
    /// the last MiBs.
    var writeback = WritebackStarter()

    init(fd: Int32, tmpPath: String, finalPath: String, name: String, store: FileSystemStore) {
        self.fd = fd; self.tmpPath = tmpPath; self.finalPath = finalPath; self.name = name; self.store = store
    }

    deinit { abort() }

    func fail(_ call: String) -> ParseError {
        ParseError(.fileSaveError, "Could not store file: \(name).", cause: POSIXFailure(call: call, code: errno))
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws(ParseError) {
        guard !done else { throw fail("write after close") }
        guard writeAll(fd, bytes) else { throw fail("write") }
        byteCount += Int64(bytes.count)
        writeback.wrote(bytes.count, fd: fd)
    }

    /// The temporary file, through a descriptor of its own (still readable if it is removed meanwhile).
    func openReader() throws(ParseError) -> (any WrittenBytesReader)? {
        try FileSystemReader.open(tmpPath, what: "the file being stored")
    }

    func commit() throws(ParseError) {
        guard !done else { throw fail("commit twice") }
        if let code = writeback.settle() {
            errno = code
            throw fail("fdatasync")
        }
        try store.ensureShard(name)
        let handle = fd
        fd = -1
        do { try AtomicFile.publish(handle, temporary: tmpPath, as: finalPath) } catch {
            throw ParseError(.fileSaveError, "Could not store file: \(name).", cause: error)
        }
        done = true
    }

    func abort() {
        if fd >= 0 {
            writeback.close(fd)  // without waiting for a flush ahead (this may be the engine thread)
            fd = -1
        }
        if !done { unlink(tmpPath); done = true }
    }
}
