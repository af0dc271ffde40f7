import PhotoWallCore
import PhotoWallCrypto
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The `Upload-Checksum` of the next chunk, computed on another thread while the current chunk is
/// being sent, so the hashing (about 0.6 s per GiB for SHA-256) overlaps the transfer instead of
/// adding to it.
///
/// `@unchecked Sendable`: `file` is only read with `pread` (no shared file position) and outlives
/// the helper thread (`value()` waits for it before the upload returns); the result is guarded
/// by `state`.
final class ChecksumPrefetch: @unchecked Sendable {
    let offset: Int64
    let length: Int64
    private let file: SourceFile
    private let algorithm: ChecksumAlgorithm
    private let state = Mutex<Result<String, ClientError>?>(nil)
    private let done = Semaphore()

    /// Starts hashing `length` bytes at `offset` on a new thread.
    init(file: SourceFile, offset: Int64, length: Int64, algorithm: ChecksumAlgorithm) {
        self.file = file; self.offset = offset; self.length = length; self.algorithm = algorithm
        BlockingThread.start(name: "tus-checksum") { [self] in
            var buffer = [UInt8](repeating: 0, count: 1 << 20)
            let result = Result { () throws(ClientError) -> String in
                try ChecksumPrefetch.header(algorithm, file: self.file, offset: offset, length: length, buffer: &buffer) ?? ""
            }
            state.withLock { $0 = result }
            done.signal()
        }
    }

    /// Waits for the hash. - Returns: the header value. - Throws: the read error, if any.
    func value() throws(ClientError) -> String {
        done.wait()
        return try state.withLock { $0! }.get()
    }

    /// `<algorithm> <base64 digest>` for the chunk, or nil for `.none`.
    static func header(_ algorithm: ChecksumAlgorithm, file: SourceFile, offset: Int64, length: Int64,
                       buffer: inout [UInt8]) throws(ClientError) -> String? {
        switch algorithm {
        case .sha256: return "sha256 " + Base64.encode(try file.digest(.sha256, offset: offset, length: length, buffer: &buffer))
        case .sha1: return "sha1 " + Base64.encode(try file.digest(.sha1, offset: offset, length: length, buffer: &buffer))
        case .none: return nil
        }
    }
}

/// A counting semaphore on a pthread mutex and condition (no Dispatch needed).
final class Semaphore: @unchecked Sendable {
    // @unchecked Sendable: `count` is only touched with `mutex` held.
    private var mutex = pthread_mutex_t()
    private var condition = pthread_cond_t()
    private var count = 0

    init() {
        pthread_mutex_init(&mutex, nil)
        pthread_cond_init(&condition, nil)
    }

    deinit {
        pthread_cond_destroy(&condition)
        pthread_mutex_destroy(&mutex)
    }

    func signal() {
        pthread_mutex_lock(&mutex)
        count += 1
        pthread_cond_signal(&condition)
        pthread_mutex_unlock(&mutex)
    }

    func wait() {
        pthread_mutex_lock(&mutex)
        while count == 0 { pthread_cond_wait(&condition, &mutex) }
        count -= 1
        pthread_mutex_unlock(&mutex)
    }

    /// `wait()`, giving up after `timeoutSeconds`. - Returns: false on timeout.
    @discardableResult
    func wait(timeoutSeconds: Double) -> Bool {
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        let nanoseconds = Int(deadline.tv_nsec) + Int(timeoutSeconds * 1e9)
        deadline.tv_sec += nanoseconds / 1_000_000_000
        deadline.tv_nsec = nanoseconds % 1_000_000_000
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        while count == 0 {
            if pthread_cond_timedwait(&condition, &mutex, &deadline) == ETIMEDOUT, count == 0 { return false }
        }
        count -= 1
        return true
    }
}
