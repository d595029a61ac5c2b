import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An image file opened once: what one `fstat` says about it, and its bytes read through the same
/// descriptor only when they are wanted.
///
/// A caller that keys work by a file's size and modification time (a table's source id, say) learns
/// both and reads the bytes with one `open`, one `fstat` and as many `read`s as the file needs, instead
/// of a path lookup for each. Only regular files open: a directory, a device or a FIFO is an `.io`
/// error with `EINVAL`, and a FIFO does not block the caller (`O_NONBLOCK`). The descriptor closes when
/// the value goes away.
public struct ImageFile: ~Copyable {
    private let descriptor: Int32
    /// The path it was opened by.
    public let path: String
    /// Its size in bytes when it was opened.
    public let size: Int
    /// Its modification time, as `fstat` gives it.
    public let modified: timespec

    /// Opens `path` for reading. With `followingLinks` false a symbolic link in its place is refused
    /// (`ELOOP`) rather than followed.
    public init(path: String, followingLinks: Bool = true) throws(TesseraError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | (followingLinks ? 0 : O_NOFOLLOW))
        guard fd >= 0 else { throw TesseraError(.io(operation: "open", path: path, errno: errno)) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            close(fd)
            throw TesseraError(.io(operation: "fstat", path: path, errno: code))
        }
        guard (info.st_mode & S_IFMT) == S_IFREG, info.st_size >= 0 else {
            close(fd)
            throw TesseraError(.io(operation: "open", path: path, errno: EINVAL))
        }
        self.descriptor = fd
        self.path = path
        self.size = Int(info.st_size)
        self.modified = info.st_mtim
    }

    deinit { close(descriptor) }

    /// The modification time as Foundation's `FileManager` reports it (`.modificationDate`), to the last
    /// bit of the `Double`: seconds from the reference date, then the nanoseconds.
    public var modificationDate: Date {
        Date(timeIntervalSinceReferenceDate: Double(modified.tv_sec) - Date.timeIntervalBetween1970AndReferenceDate
             + Double(modified.tv_nsec) / 1_000_000_000)
    }

    /// Every byte of the file, or a `.decoding(.inputTooLarge)` error when it was larger than `limit`
    /// when opened. A file that shrank since gives the bytes that are left (decoding then decides); one
    /// that grew gives the size it had when opened.
    public func contents(limit: Int = .max) throws(TesseraError) -> Data {
        if size > limit { throw TesseraError(.decoding(.inputTooLarge(bytes: size, limit: limit))) }
        // Read into memory of its own (not `Data(count:)`, which would zero it first) that the Data then owns.
        guard let buffer = malloc(max(size, 1)) else { throw TesseraError(.io(operation: "read", path: path, errno: ENOMEM)) }
        var done = 0
        while done < size {
            let n = pread(descriptor, buffer + done, size - done, off_t(done))
            if n < 0 && errno == EINTR { continue }
            if n < 0 {
                let code = errno
                free(buffer)
                throw TesseraError(.io(operation: "read", path: path, errno: code))
            }
            if n == 0 { break }
            done += n
        }
        return Data(bytesNoCopy: buffer, count: done, deallocator: .free)
    }

    /// The bytes of the file at `path` (``init(path:followingLinks:)`` and ``contents(limit:)``).
    public static func contents(of path: String, limit: Int = .max) throws(TesseraError) -> Data {
        try ImageFile(path: path).contents(limit: limit)
    }
}
