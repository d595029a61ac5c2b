#if Serving
import Foundation

/// The directory `/v1/…` serves, and the one place that turns a request path into a file under it.
///
/// A path is refused (400) when, after percent-decoding once, it is empty, absolute, contains a NUL
/// byte, a backslash, a `..` or `.` component, or still contains `%` (a double-encoded escape). It is
/// refused (403) when its real path (symlinks resolved) is outside the root's real path.
struct RootDirectory: Sendable {
    /// The real path of the root, without a trailing slash.
    let realPath: String

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
    }

    /// Decodes `raw` (percent-encoded, as in the URL) once and checks it (see the type).
    static func decode(_ raw: String) throws(ServiceError) -> String {
        guard let decoded = raw.removingPercentEncoding else { throw ServiceError(400, "bad_path", "the path is not valid percent-encoding") }
        return decoded
    }

    /// The file at `relative` (already percent-decoded once).
    func file(_ relative: String) throws(ServiceError) -> File {
        let real = try resolve(relative)
        var info = stat()
        guard stat(real, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { throw ServiceError(404, "not_found", "no such image") }
        #if os(Linux)
        let modified = info.st_mtim
        #else
        let modified = info.st_mtimespec
        #endif
        let nanoseconds = Int64(modified.tv_sec) * 1_000_000_000 + Int64(modified.tv_nsec)
        return File(relativePath: relative, realPath: real, version: "\(info.st_size)-\(nanoseconds)-\(info.st_ino)", size: Int(info.st_size))
    }

    /// The real path of `relative` (already percent-decoded once) after the checks of the type: every
    /// route that names something under the root (`/v1/…`, the gallery's `dir`) goes through here.
    func resolve(_ relative: String) throws(ServiceError) -> String {
        guard !relative.isEmpty else { throw ServiceError(400, "bad_path", "no path") }
        guard !relative.utf8.contains(0) else { throw ServiceError(400, "path_escape", "the path contains a NUL byte") }
        guard !relative.hasPrefix("/"), !relative.hasPrefix("~") else { throw ServiceError(400, "path_escape", "absolute paths are refused") }
        guard !relative.contains("\\"), !relative.contains("%") else {
            throw ServiceError(400, "path_escape", "backslashes and double-encoded characters are refused")
        }
        let components = relative.split(separator: "/", omittingEmptySubsequences: false)
        guard !components.contains(where: { $0 == ".." || $0 == "." || $0.isEmpty }) else {
            throw ServiceError(400, "path_escape", "'..', '.' and empty path components are refused")
        }
        let joined = realPath + "/" + relative
        guard let real = Self.realPath(joined) else { throw ServiceError(404, "not_found", "no such image") }
        guard isInside(real) else { throw ServiceError(403, "path_escape", "the path leads outside the root") }
        return real
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
#endif
