#if Serving
import Foundation
import Tessera

/// The images under one directory of the root, for the gallery: relative paths (as `/v1/{preset}/…`
/// takes them, not yet percent-encoded) in path order, walked depth first with names sorted.
///
/// What is listed: regular files whose extension is one the decoders read (`jpg`, `jpeg`, `png`, `webp`,
/// `gif`) **and** whose first bytes are that of an image (`ImageFileFormat(sniffing:)`), so a
/// `broken.jpg` holding text is left out rather than shown as a failed cell. Symlinks to files are listed
/// when their real path stays inside the root (the same rule as `/v1/…`); symlinks to directories are
/// not followed (no cycles, no escapes). Hidden names (`.…`) and names that `/v1/…` refuses (`%`, `\`)
/// are skipped.
///
/// Bounded: at most `maximumImages` paths; at most 4 × `maximumImages` directory entries looked at; at
/// most ``ServerConfiguration/Gallery/maximumDepth`` levels. Hitting a bound sets ``truncated``.
struct GalleryListing: Sendable, Encodable {
    /// The listed directory, relative to the root (`""`: the root).
    var directory: String
    /// The images' paths relative to the root.
    var images: [String]
    /// Whether a bound stopped the walk before it saw everything.
    var truncated: Bool

    /// File-name extensions of the formats the decoders read.
    static let extensions: Set<String> = Set(ImageFileFormat.allCases.map(\.fileExtension) + ["jpeg"])

    /// Walks `directory` (relative to the root, percent-decoded; `""` for the root itself). A directory
    /// that escapes the root is refused exactly as a `/v1/…` path is (`RootDirectory.resolve`).
    static func make(root: RootDirectory, directory: String, maximumImages: Int) throws(ServiceError) -> GalleryListing {
        let start = directory.isEmpty ? root.realPath : try root.resolve(directory)
        var info = stat()
        guard stat(start, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
            throw ServiceError(.notFound, "no such directory")
        }
        var walker = Walker(root: root, maximumImages: maximumImages, maximumEntries: maximumImages.multipliedReportingOverflow(by: 4).partialValue)
        walker.walk(real: start, relative: directory.isEmpty ? "" : directory + "/", depth: 0)
        return GalleryListing(directory: directory, images: walker.images, truncated: walker.truncated)
    }

    private struct Walker {
        let root: RootDirectory
        let maximumImages: Int
        let maximumEntries: Int
        var images: [String] = []
        var entries = 0
        var truncated = false

        /// Lists `real` (a real directory path); returns `false` once a bound is hit.
        @discardableResult
        mutating func walk(real: String, relative: String, depth: Int) -> Bool {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: real) else { return true }
            for name in names.sorted() where !name.hasPrefix(".") && !name.contains("%") && !name.contains("\\") {
                entries += 1
                guard entries <= maximumEntries else { truncated = true; return false }
                let path = real + "/" + name
                var info = stat()
                guard lstat(path, &info) == 0 else { continue }
                switch info.st_mode & S_IFMT {
                case S_IFDIR:
                    if depth < ServerConfiguration.Gallery.maximumDepth {
                        guard walk(real: path, relative: relative + name + "/", depth: depth + 1) else { return false }
                    } else {
                        truncated = true
                    }
                case S_IFREG where Self.hasImageExtension(name) && Self.sniffsAsImage(path):
                    guard add(relative + name) else { return false }
                case S_IFLNK where Self.hasImageExtension(name):
                    guard let target = RootDirectory.realPath(path), root.isInside(target),
                          stat(target, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, Self.sniffsAsImage(target) else { continue }
                    guard add(relative + name) else { return false }
                default:
                    continue
                }
            }
            return true
        }

        private mutating func add(_ path: String) -> Bool {
            guard images.count < maximumImages else { truncated = true; return false }
            images.append(path)
            return true
        }

        static func hasImageExtension(_ name: String) -> Bool {
            guard let dot = name.lastIndex(of: ".") else { return false }
            return GalleryListing.extensions.contains(name[name.index(after: dot)...].lowercased())
        }

        /// Reads the first 16 bytes and asks `ImageFileFormat(sniffing:)`.
        static func sniffsAsImage(_ path: String) -> Bool {
            let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
            guard fd >= 0 else { return false }
            defer { close(fd) }
            var bytes = [UInt8](repeating: 0, count: 16)
            let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { return false }
            return bytes.withUnsafeBytes { ImageFileFormat(sniffing: UnsafeRawBufferPointer(rebasing: $0[..<count])) } != nil
        }
    }
}
#endif
