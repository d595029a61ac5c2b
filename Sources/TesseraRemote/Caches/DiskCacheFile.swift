import TesseraImaging
import TesseraTables
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The file format and file-system calls of ``DiskCache``.
///
/// One file per URL, named by the SHA-256 of the URL in hex (64 characters, so no URL can name a path
/// outside the directory), laid out as: `TSC1`, the length of the JSON-encoded ``HTTPCacheInfo`` as a
/// 32-bit little-endian integer, that JSON, then the body. Files are written to a temporary name and
/// renamed into place, so a reader sees the old file or the new one, never half of one. The file's
/// modification time is when the body was stored (its age) and its access time is set explicitly on
/// every use (recency), so the index can be rebuilt from `stat` alone.
enum DiskCacheFile {
    static let magic: [UInt8] = Array("TSC1".utf8)
    static let temporaryPrefix = ".tmp-"
    /// Linux's `UTIME_OMIT` (a macro Swift does not import): leave this time unchanged.
    private static let utimeOmit = (1 << 30) - 2

    /// The file name for `url`.
    static func name(for url: URL) -> String { SHA256.hex(url.absoluteString) }

    /// Whether `name` looks like a cache file.
    static func isEntryName(_ name: String) -> Bool {
        name.utf8.count == 64 && name.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    static func encode(_ data: Data, info: HTTPCacheInfo) throws(TesseraError) -> Data {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        let header: Data
        do { header = try encoder.encode(info) } catch {
            // Only a date JSON cannot hold (not finite) gets here: an invalid argument, not an I/O failure.
            throw TesseraError(.io(operation: "encode the cache information of", path: info.url, errno: EINVAL), underlying: error)
        }
        var file = Data(magic)
        withUnsafeBytes(of: UInt32(header.count).littleEndian) { file.append(contentsOf: $0) }
        file.append(header)
        file.append(data)
        return file
    }

    /// Splits a file into body and information; `nil` when it is not a valid cache file.
    static func decode(_ file: Data) -> DiskCacheEntry? {
        guard file.count >= 8, Array(file.prefix(4)) == magic else { return nil }
        let length = file.dropFirst(4).prefix(4).reversed().reduce(0) { $0 << 8 | Int($1) }
        let start = file.startIndex + 8
        guard length > 0, file.count - 8 >= length else { return nil }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        guard let info = try? decoder.decode(HTTPCacheInfo.self, from: file[start..<(start + length)]) else { return nil }
        return DiskCacheEntry(data: Data(file[(start + length)...]), info: info)
    }

    /// Writes `contents` with the given times (modification = stored, access = used) to a fresh
    /// temporary file in `directory` (created exclusively, never through a symbolic link) and returns its
    /// path; ``commit(_:to:)`` renames it into place. On failure the temporary file is removed.
    ///
    /// Not Foundation's atomic write: it names its temporary files `.dat.nosync…`, which a crash would leave
    /// behind where ``DiskCache`` cannot tell them from foreign files.
    /// - Throws: ``/TesseraCore/TesseraError`` `.io` with the failing call's errno (`ENOSPC` on a full disk, `EFBIG`
    ///   past `RLIMIT_FSIZE` when `SIGXFSZ` is ignored, `EACCES` in a read-only directory).
    static func writeTemporary(_ contents: Data, directory: String, stored: Date, accessed: Date) throws(TesseraError) -> String {
        let temporary = directory + "/" + temporaryPrefix + UUID().uuidString
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw TesseraError(.io(operation: "open", path: temporary, errno: errno)) }
        var failure: (operation: String, code: Int32)?
        contents.withUnsafeBytes { bytes in
            var done = 0
            while done < bytes.count {
                let n = write(fd, bytes.baseAddress! + done, bytes.count - done)
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { failure = ("write", n < 0 ? errno : EIO); return }
                done += n
            }
        }
        if failure == nil {
            var times = [makeTimespec(accessed), makeTimespec(stored)]
            _ = futimens(fd, &times)
        }
        if close(fd) != 0, failure == nil { failure = ("close", errno) }
        if let failure {
            unlink(temporary)
            throw TesseraError(.io(operation: failure.operation, path: temporary, errno: failure.code))
        }
        return temporary
    }

    /// Renames a complete temporary file into place at `path`, replacing the old entry in one step; on
    /// failure the temporary file is removed and the old entry, if any, stays as it was.
    static func commit(_ temporary: String, to path: String) throws(TesseraError) {
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw TesseraError(.io(operation: "rename", path: path, errno: code))
        }
    }

    /// The bytes of the cache file at `path`, or `nil` when it is missing, unreadable, larger than
    /// `limit`, or not a regular file. A symbolic link planted in its place is not followed and a FIFO
    /// does not block (`O_NOFOLLOW | O_NONBLOCK`, then `fstat` of what was opened).
    static func read(path: String, limit: Int) -> Data? {
        try? ImageFile(path: path, followingLinks: false).contents(limit: limit)
    }

    /// Sets the access time and, when given, the modification time.
    static func setTimes(path: String, accessed: Date, modified: Date?) {
        var times = [makeTimespec(accessed), modified.map(makeTimespec) ?? timespec(tv_sec: 0, tv_nsec: utimeOmit)]
        _ = utimensat(AT_FDCWD, path, &times, 0)
    }

    /// Size, modification and access times of `path`, or `nil` when it is not a regular file (a symbolic
    /// link is not followed: `lstat`).
    static func status(path: String) -> (size: Int, modified: Date, accessed: Date)? {
        var info = stat()
        guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        #if os(Linux)
        return (Int(info.st_size), date(info.st_mtim), date(info.st_atim))
        #else
        return (Int(info.st_size), date(info.st_mtimespec), date(info.st_atimespec))
        #endif
    }

    static func remove(path: String) { unlink(path) }

    /// `date` as a `timespec`, clamped to ±2⁶² seconds (a date read from a hostile file must not trap).
    private static func makeTimespec(_ date: Date) -> timespec {
        let time = date.timeIntervalSince1970
        guard time.isFinite else { return timespec(tv_sec: time > 0 ? 1 << 62 : 0, tv_nsec: 0) }
        let clamped = min(max(time, -0x1p62), 0x1p62)
        let seconds = clamped.rounded(.down)
        return timespec(tv_sec: Int(seconds), tv_nsec: min(999_999_999, max(0, Int((clamped - seconds) * 1e9))))
    }

    private static func date(_ time: timespec) -> Date {
        Date(timeIntervalSince1970: Double(time.tv_sec) + Double(time.tv_nsec) / 1e9)
    }
}
