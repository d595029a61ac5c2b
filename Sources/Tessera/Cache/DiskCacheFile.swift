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

    static func encode(_ data: Data, info: HTTPCacheInfo) throws -> Data {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        let header = try encoder.encode(info)
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

    /// Writes `contents` to `path` atomically with the given times (modification = stored, access = used).
    static func writeAtomically(_ contents: Data, to path: String, directory: String, stored: Date, accessed: Date) throws {
        let temporary = directory + "/" + temporaryPrefix + UUID().uuidString
        guard FileManager.default.createFile(atPath: temporary, contents: contents) else {
            throw TesseraError(.io(operation: "write", path: temporary, errno: errno == 0 ? EIO : errno))
        }
        setTimes(path: temporary, accessed: accessed, modified: stored)
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw TesseraError(.io(operation: "rename", path: path, errno: code))
        }
    }

    /// Sets the access time and, when given, the modification time.
    static func setTimes(path: String, accessed: Date, modified: Date?) {
        var times = [makeTimespec(accessed), modified.map(makeTimespec) ?? timespec(tv_sec: 0, tv_nsec: utimeOmit)]
        _ = utimensat(AT_FDCWD, path, &times, 0)
    }

    /// Size, modification and access times of `path`, or `nil` when it is not a regular file.
    static func status(path: String) -> (size: Int, modified: Date, accessed: Date)? {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return (Int(info.st_size), date(info.st_mtim), date(info.st_atim))
    }

    static func remove(path: String) { unlink(path) }

    private static func makeTimespec(_ date: Date) -> timespec {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        return timespec(tv_sec: Int(seconds), tv_nsec: Int((date.timeIntervalSince1970 - seconds) * 1e9))
    }

    private static func date(_ time: timespec) -> Date {
        Date(timeIntervalSince1970: Double(time.tv_sec) + Double(time.tv_nsec) / 1e9)
    }
}
