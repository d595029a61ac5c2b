#if Serving
import Foundation
@_spi(Internal) import TesseraImaging

/// The directory `/v1/…` serves, and the one place that turns a request path into a file under it.
///
/// A path is refused (400) when, after percent-decoding once, it is empty, absolute, contains a NUL
/// byte, a backslash, a `..` or `.` component, or still contains `%` (a double-encoded escape). It is
/// refused (403) when its real path (symlinks resolved) is outside the root's real path.
///
/// `realpath(3)` costs a `readlink` per path component, so a checked path's real path is remembered with
/// the device and inode it led to. The next request for that path costs one `stat` of the joined path
/// (which follows symlinks): the same device and inode mean the same file, already checked to lie inside
/// the root, whatever the links in between became; anything else is resolved and checked again.
struct RootDirectory: Sendable {
    /// The real path of the root, without a trailing slash.
    let realPath: String
    private let checked = CheckedPaths()

    init(_ path: String) throws(ServerConfigurationError) {
        guard let real = Self.realPath(path) else { throw ServerConfigurationError("--root '\(path)' does not exist") }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: real, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ServerConfigurationError("--root '\(path)' is not a directory")
        }
        realPath = real.count > 1 && real.hasSuffix("/") ? String(real.dropLast()) : real
    }

    /// A file under the root: its relative path (as requested, decoded), real path and version.
    struct File: Sendable {
        let relativePath: String
        let realPath: String
        /// Changes when the file does: size, modification time (ns) and inode.
        let version: String
        let size: Int

        init(_ relative: String, realPath: String, _ info: stat) {
            #if os(Linux)
            let modified = info.st_mtim
            #else
            let modified = info.st_mtimespec
            #endif
            let nanoseconds = Int64(modified.tv_sec) * 1_000_000_000 + Int64(modified.tv_nsec)
            self.init(relativePath: relative, realPath: realPath, version: "\(info.st_size)-\(nanoseconds)-\(info.st_ino)", size: Int(info.st_size))
        }

        init(relativePath: String, realPath: String, version: String, size: Int) {
            self.relativePath = relativePath
            self.realPath = realPath
            self.version = version
            self.size = size
        }
    }

    /// Decodes `raw` (percent-encoded, as in the URL) once and checks it (see the type).
    static func decode(_ raw: String) throws(ServiceError) -> String {
        guard raw.utf8.contains(UInt8(ascii: "%")) else { return raw }
        guard let decoded = raw.removingPercentEncoding else { throw ServiceError(400, "bad_path", "the path is not valid percent-encoding") }
        return decoded
    }

    /// The file at `relative` (already percent-decoded once).
    func file(_ relative: String) throws(ServiceError) -> File {
        try checkSyntax(relative)
        var info = stat()
        if let known = checked.get(relative), stat(realPath + "/" + relative, &info) == 0,
           UInt64(info.st_dev) == known.device, UInt64(info.st_ino) == known.inode, (info.st_mode & S_IFMT) == S_IFREG {
            return File(relative, realPath: known.realPath, info)
        }
        let real = try resolveChecked(relative)
        guard stat(real, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { throw ServiceError(404, "not_found", "no such image") }
        checked.set(relative, CheckedPaths.Entry(realPath: real, device: UInt64(info.st_dev), inode: UInt64(info.st_ino)))
        return File(relative, realPath: real, info)
    }

    /// The real path of `relative` (already percent-decoded once) after the checks of the type: every
    /// route that names something under the root (`/v1/…`, the gallery's `dir`) goes through here.
    func resolve(_ relative: String) throws(ServiceError) -> String {
        try checkSyntax(relative)
        return try resolveChecked(relative)
    }

    /// `resolve` for a path whose text is already checked.
    private func resolveChecked(_ relative: String) throws(ServiceError) -> String {
        let joined = realPath + "/" + relative
        guard let real = Self.realPath(joined) else { throw ServiceError(404, "not_found", "no such image") }
        guard isInside(real) else { throw ServiceError(403, "path_escape", "the path leads outside the root") }
        return real
    }

    /// The checks on the text of `relative` (see the type), in one pass over its bytes (every request
    /// makes them, hits included).
    private func checkSyntax(_ relative: String) throws(ServiceError) {
        let bytes = relative.utf8
        guard let first = bytes.first else { throw ServiceError(400, "bad_path", "no path") }
        var nul = false, escape = false, badComponent = false
        var length = 0, dots = 0   // of the component being read
        /// Ends the component being read: empty, `.` and `..` are refused.
        func endComponent() {
            if length == 0 || (dots == length && length <= 2) { badComponent = true }
            length = 0
            dots = 0
        }
        for byte in bytes {
            switch byte {
            case 0: nul = true
            case UInt8(ascii: "\\"), UInt8(ascii: "%"): escape = true
            case UInt8(ascii: "/"):
                endComponent()
                continue
            case UInt8(ascii: "."): dots += 1
            default: break
            }
            length += 1
        }
        endComponent()
        guard !nul else { throw ServiceError(400, "path_escape", "the path contains a NUL byte") }
        guard first != UInt8(ascii: "/"), first != UInt8(ascii: "~") else { throw ServiceError(400, "path_escape", "absolute paths are refused") }
        guard !escape else { throw ServiceError(400, "path_escape", "backslashes and double-encoded characters are refused") }
        guard !badComponent else { throw ServiceError(400, "path_escape", "'..', '.' and empty path components are refused") }
    }

    /// Whether a real path lies strictly below the root.
    func isInside(_ real: String) -> Bool { real.hasPrefix(realPath + "/") }

    /// `realpath(3)` of `path` (symlinks resolved), or `nil` when it does not exist.
    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}

/// Real paths already checked to lie inside the root, by relative path, with the file they led to.
/// Bounded: when full it starts again empty (a later request resolves again, correct but slower).
final class CheckedPaths: Sendable {
    struct Entry: Sendable {
        let realPath: String
        let device: UInt64
        let inode: UInt64
    }

    static let capacity = 65_536
    private let entries = LockedValue([String: Entry]())

    func get(_ relative: String) -> Entry? { entries.withLock { $0[relative] } }

    func set(_ relative: String, _ entry: Entry) {
        entries.withLock { entries in
            if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
            entries[relative] = entry
        }
    }
}
#endif
