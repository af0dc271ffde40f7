import PhotoWallCore
#if canImport(Glibc)
import Glibc
#endif

/// Upload parts as files `<root>/uploads/<id>.part`, on the same filesystem as the file store so
/// a finished part becomes a Parse file by a rename, without copying. Keeps no `partState`: the
/// committed offset says how much of the file counts, and opening cuts the rest off.
/// Several instances can share it only through a shared filesystem; use `S3UploadParts` otherwise.
public final class FileSystemUploadParts: UploadPartStore {
    public let directory: String

    /// - Throws: 1 when the folder can't be created.
    public init(root: String) throws(ParseError) {
        directory = root + "/uploads"
        if mkdir(directory, 0o755) != 0 && errno != EEXIST {
            throw ParseError(.internalServerError, "Internal server error.", cause: POSIXFailure(call: "mkdir \(directory)", code: errno))
        }
    }

    public func path(of id: String) -> String { directory + "/" + id + ".part" }

    /// Each writer has its own descriptor positioned at its offset.
    public var supportsPipelinedAppends: Bool { true }

    public func create(_ id: String, finalName: String) throws(ParseError) -> String {
        let fd = open(path(of: id), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw ParseError(.fileSaveError, "Could not create the upload.", cause: POSIXFailure(call: "open", code: errno)) }
        _ = syncFile(fd)
        close(fd)
        AtomicFile.syncDirectory(of: path(of: id))
        return ""
    }

    public func openForAppend(_ id: String, at offset: Int64, state: String) throws(ParseError) -> any UploadPartWriter {
        let fd = open(path(of: id), O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ParseError(.fileSaveError, "Could not open the upload.", cause: POSIXFailure(call: "open", code: errno)) }
        guard ftruncate(fd, off_t(offset)) == 0, lseek(fd, off_t(offset), SEEK_SET) == off_t(offset) else {
            let e = errno
            close(fd)
            throw ParseError(.fileSaveError, "Could not open the upload.", cause: POSIXFailure(call: "ftruncate", code: e))
        }
        return FileSystemPartWriter(fd: fd, openedAt: offset)
    }

    /// Reads the part file through its own descriptor (`pread`: from the page cache, where the bytes
    /// just written still are).
    public func openForReading(_ id: String, state: String) throws(ParseError) -> (any WrittenBytesReader)? {
        try FileSystemReader.open(path(of: id), what: "the upload")
    }

    public func complete(_ id: String, length: Int64, state: String, as name: String, into store: any FileStore) throws(ParseError) {
        try store.importFile(at: path(of: id), as: name)
    }

    /// Bytes in the part, or nil when it doesn't exist.
    public func size(of id: String) -> Int64? {
        var st = stat()
        guard stat(path(of: id), &st) == 0 else { return nil }
        return Int64(st.st_size)
    }

    public func remove(_ id: String, state: String) { unlink(path(of: id)) }

    /// Unlinks `<id>.part` files older than `cutoff` (modification time) whose upload has no record.
    public func removeOrphans(before cutoff: ParseDate, isLive: (String) throws -> Bool) throws -> Int {
        try Self.removePartFiles(in: directory, before: cutoff) { id in try !isLive(id) }
    }

    /// Unlinks the `<id>.part` files in `directory` last modified before `cutoff` for which `shouldRemove`
    /// is true. - Returns: how many. - Throws: 130 when the folder can't be read, or what `shouldRemove` throws.
    public static func removePartFiles(in directory: String, before cutoff: ParseDate,
                                       where shouldRemove: (String) throws -> Bool) throws -> Int {
        guard let names = directoryEntries(directory) else {
            throw ParseError(.fileSaveError, "Could not list the uploads.", cause: POSIXFailure(call: "opendir \(directory)", code: errno))
        }
        var removed = 0
        for name in names where name.hasSuffix(".part") {
            guard let id = uploadID(prefixing: name[...]), name == id + ".part" else { continue }
            var st = stat()
            guard stat(directory + "/" + name, &st) == 0,
                  Int64(st.st_mtim.tv_sec) * 1000 < cutoff.millisecondsSince1970, try shouldRemove(id) else { continue }
            if unlink(directory + "/" + name) == 0 { removed += 1 }
        }
        return removed
    }
}

final class FileSystemPartWriter: UploadPartWriter {
    var fd: Int32
    let openedAt: Int64
    /// Flushes ahead only (`fdatasync` every 16 MiB on `FlushAhead.pool`), so a large chunk's sync waits
    /// for its last MiBs only. No writeback started from the engine thread: a pipelined PATCH streams
    /// in while the one before syncs, so that sync is off the critical path, and `sync_file_range` on
    /// the engine thread made it wait on the disk queue (4 MiB chunks: 94–128 against 114–143 MB/s
    /// without, same runs).
    var writeback: WritebackStarter
    init(fd: Int32, openedAt: Int64) {
        self.fd = fd; self.openedAt = openedAt
        writeback = WritebackStarter(offset: openedAt, stepBytes: nil)
    }
    deinit { close() }

    func fail(_ call: String) -> ParseError {
        ParseError(.fileSaveError, "Could not store the upload.", cause: POSIXFailure(call: call, code: errno))
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws(ParseError) {
        guard writeAll(fd, bytes) else { throw fail("write") }
        writeback.wrote(bytes.count, fd: fd)
    }

    /// Waits for a flush ahead; throws when one failed (its error is not reported again).
    private func settle() throws(ParseError) {
        if let code = writeback.settle() {
            errno = code
            throw fail("fdatasync")
        }
    }

    /// `fdatasync`: the bytes and the file's size (what reading them back needs), not its times.
    func sync() throws(ParseError) -> (size: Int64, state: String) {
        try settle()
        guard syncFileData(fd) == 0 else { throw fail("fdatasync") }
        let end = lseek(fd, 0, SEEK_CUR)
        guard end >= 0 else { throw fail("lseek") }
        return (Int64(end), "")
    }

    /// `fdatasync` too: a sync before the lease check only makes this writer's own bytes durable.
    func syncAhead() throws(ParseError) {
        try settle()
        guard syncFileData(fd) == 0 else { throw fail("fdatasync") }
    }

    func discard() throws(ParseError) {
        _ = writeback.settle()  // the bytes are dropped: a failed flush of them does not matter
        guard ftruncate(fd, off_t(openedAt)) == 0, lseek(fd, off_t(openedAt), SEEK_SET) >= 0, syncFileData(fd) == 0 else { throw fail("ftruncate") }
    }

    func close() {
        guard fd >= 0 else { return }
        writeback.close(fd)  // without waiting for a flush ahead (this may be the engine thread)
        fd = -1
    }
}
