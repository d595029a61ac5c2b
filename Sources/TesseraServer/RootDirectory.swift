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
/// the device and inode it led to and the file's version. The next request for that path costs one `stat`
/// of the joined path (which follows symlinks): the same device and inode mean the same file, already
/// checked to lie inside the root, whatever the links in between became; anything else is resolved and
/// checked again.
///
/// With a recheck interval (`sourceCheckIntervalSeconds`), a caller that only answers from memory may
/// skip even that `stat` while the last one is younger than the interval (``file(_:trustingRecentCheck:)``);
/// nginx's `open_file_cache_valid` is the same trade. Such a `File` says so (`verified` false), and
/// whoever goes on to read the source checks it again (``File/rechecked(in:)``).
struct RootDirectory: Sendable {
    /// The real path of the root, without a trailing slash.
    let realPath: String
    /// How long a `stat` is trusted for callers that allow it; zero: never trusted.
    let recheck: Duration
    private let checked = CheckedPaths()

    /// The root at `path`, whose sources' checks are trusted for `recheckSeconds` (0: never).
    init(_ path: String, recheckSeconds: Double) throws(ServerConfigurationError) {
        recheck = recheckSeconds > 0 ? .seconds(min(recheckSeconds, 1e9)) : .zero
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
        /// What names the file in response keys and table entries: ``relativePath`` under `--root`,
        /// `@NAME/` and the relative path in a named directory source (``named(_:)``).
        private(set) var identity: String
        /// Whether this request checked the file (`stat`); `false` when a check younger than the recheck
        /// interval was reused.
        let verified: Bool
        /// The path a check `stat`s: the root's real path, `/` and ``relativePath``.
        private let joinedPath: String
        /// The check this answer rests on.
        private let entry: CheckedPaths.Entry

        var realPath: String { entry.realPath }
        /// Changes when the file does: size, modification time (ns) and inode.
        var version: String { entry.version }
        var size: Int { entry.size }
        /// The modification time in nanoseconds since 1970.
        var modified: Int64 { entry.modified }
        /// When the check this answer rests on was made.
        var checkedAt: ContinuousClock.Instant { entry.checkedAt }

        init(_ relative: String, joined: String, _ entry: CheckedPaths.Entry, verified: Bool) {
            relativePath = relative
            identity = relative
            joinedPath = joined
            self.entry = entry
            self.verified = verified
        }

        /// Whether the path still leads to this file as it was: one `stat` of the joined path, the same
        /// file (so already found inside the root) at the same size and modification time, as
        /// ``RootDirectory/file(_:trustingRecentCheck:)`` judges them. ``rechecked(in:)`` without its text
        /// checks, lookups and new strings, for a caller that only needs to know whether an answer stands;
        /// it records nothing.
        func isUnchangedNow() -> Bool {
            var info = stat()
            return stat(joinedPath, &info) == 0 && entry.isSameFile(info) && entry.matches(info)
        }

        /// This file checked again now, through `directory` (the one it was found in): a `stat` of the same
        /// path, never trusting a recent check; the same ``identity``.
        func rechecked(in directory: RootDirectory) throws(ServiceError) -> File {
            var file = try directory.file(relativePath)
            file.identity = identity
            return file
        }

        /// This file as one of the named source `name`: its ``identity`` is `@name/` and its relative path.
        func named(_ name: String) -> File {
            var file = self
            file.identity = ImageService.namedIdentity(source: name, key: relativePath)
            return file
        }
    }

    /// Decodes `raw` (percent-encoded, as in the URL) once and checks it (see the type).
    static func decode(_ raw: String) throws(ServiceError) -> String {
        guard raw.utf8.contains(UInt8(ascii: "%")) else { return raw }
        guard let decoded = raw.removingPercentEncoding else { throw ServiceError(.badPath, "the path is not valid percent-encoding") }
        return decoded
    }

    /// The file at `relative` (already percent-decoded once). With `trustingRecentCheck`, a check of the
    /// same path younger than the recheck interval is returned without a `stat` (`verified` false).
    func file(_ relative: String, trustingRecentCheck: Bool = false) throws(ServiceError) -> File {
        try Self.checkSyntax(relative)
        let known = checked.get(relative)
        let now = ContinuousClock.now
        let joined = realPath + "/" + relative
        if let known, trustingRecentCheck, recheck > .zero, now - known.checkedAt < recheck {
            return File(relative, joined: joined, known, verified: false)
        }
        var info = stat()
        if let known, stat(joined, &info) == 0, known.isSameFile(info) {
            if known.matches(info) {
                let entry = known.checked(at: now)
                if recheck > .zero { checked.set(relative, entry) }
                return File(relative, joined: joined, entry, verified: true)
            }
            let entry = CheckedPaths.Entry(realPath: known.realPath, info, checkedAt: now)
            checked.set(relative, entry)
            return File(relative, joined: joined, entry, verified: true)
        }
        let real = try resolveChecked(joined)
        guard stat(real, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { throw ServiceError(.notFound, "no such image") }
        let entry = CheckedPaths.Entry(realPath: real, info, checkedAt: now)
        checked.set(relative, entry)
        return File(relative, joined: joined, entry, verified: true)
    }

    /// The real path of `relative` (already percent-decoded once) after the checks of the type: every
    /// route that names something under the root (`/v1/…`, the gallery's `dir`) goes through here.
    func resolve(_ relative: String) throws(ServiceError) -> String {
        try Self.checkSyntax(relative)
        return try resolveChecked(realPath + "/" + relative)
    }

    /// `resolve` of the root's real path joined with a relative path whose text is already checked.
    private func resolveChecked(_ joined: String) throws(ServiceError) -> String {
        guard let real = Self.realPath(joined) else { throw ServiceError(.notFound, "no such image") }
        guard isInside(real) else { throw ServiceError(.pathOutsideRoot, "the path leads outside the root") }
        return real
    }

    /// The checks on the text of `relative` (see the type), in one pass over its bytes (every request
    /// makes them, hits included).
    static func checkSyntax(_ relative: String) throws(ServiceError) {
        let bytes = relative.utf8
        guard let first = bytes.first else { throw ServiceError(.badPath, "no path") }
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
        guard !nul else { throw ServiceError(.pathEscape, "the path contains a NUL byte") }
        guard first != UInt8(ascii: "/"), first != UInt8(ascii: "~") else { throw ServiceError(.pathEscape, "absolute paths are refused") }
        guard !escape else { throw ServiceError(.pathEscape, "backslashes and double-encoded characters are refused") }
        guard !badComponent else { throw ServiceError(.pathEscape, "'..', '.' and empty path components are refused") }
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
        let size: Int
        /// The modification time in nanoseconds since 1970.
        let modified: Int64
        /// `SIZE-MTIME_NS-INODE`: changes when the file does.
        let version: String
        /// When the file was last checked.
        private(set) var checkedAt: ContinuousClock.Instant

        init(realPath: String, _ info: stat, checkedAt: ContinuousClock.Instant) {
            self.realPath = realPath
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
            size = Int(info.st_size)
            modified = Self.modified(info)
            version = "\(size)-\(modified)-\(inode)"
            self.checkedAt = checkedAt
        }

        /// Whether `info` is of this entry's file: the same device and inode, still a regular file.
        func isSameFile(_ info: stat) -> Bool {
            UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode && (info.st_mode & S_IFMT) == S_IFREG
        }

        /// Whether `info` (of the same device and inode) has this entry's size and modification time.
        func matches(_ info: stat) -> Bool {
            Int(info.st_size) == size && Self.modified(info) == modified
        }

        /// `info`'s modification time in nanoseconds since 1970.
        private static func modified(_ info: stat) -> Int64 {
            #if os(Linux)
            let time = info.st_mtim
            #else
            let time = info.st_mtimespec
            #endif
            return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
        }

        /// This entry, checked again at `time`.
        func checked(at time: ContinuousClock.Instant) -> Entry {
            var entry = self
            entry.checkedAt = time
            return entry
        }
    }

    /// Paths kept at most.
    static let capacity = 65_536
    private let entries = SourceChecks<Entry>(capacity: capacity)

    func get(_ relative: String) -> Entry? { entries.get(relative) }

    func set(_ relative: String, _ entry: Entry) { entries.record(relative, entry) }
}
#endif
