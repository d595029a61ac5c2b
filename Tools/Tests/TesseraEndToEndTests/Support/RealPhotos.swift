import Foundation
import Testing
import Tessera

/// Real photographs for the end-to-end suites: Debian's `mate-backgrounds` wallpapers (JPEG and PNG
/// photographs and artwork up to 2560 px), which `scripts/setup` installs. `TESSERA_TEST_PHOTOS` may
/// name another directory of JPEGs and PNGs.
enum RealPhotos {
    static let directory = URL(fileURLWithPath: ProcessInfo.processInfo.environment["TESSERA_TEST_PHOTOS"]
        ?? "/usr/share/backgrounds/mate")

    /// Every JPEG and PNG below ``directory``, sorted by path.
    static func all() throws -> [URL] {
        let enumerator = try #require(FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil),
                                      "photographs at \(directory.path) (scripts/setup installs mate-backgrounds)")
        var found: [URL] = []
        for case let url as URL in enumerator where ["jpg", "jpeg", "png"].contains(url.pathExtension.lowercased()) {
            found.append(url)
        }
        return found.sorted { $0.path < $1.path }
    }

    /// The `count` smallest files with extension `ext` (`"jpg"` or `"png"`), to keep runs short.
    static func smallest(_ count: Int, ext: String) throws -> [URL] {
        let files = try all().filter { $0.pathExtension.lowercased() == ext }
        let sized = try files.map { ($0, try FileManager.default.attributesOfItem(atPath: $0.path)[.size] as? Int ?? 0) }
        let chosen = sized.sorted { $0.1 < $1.1 }.prefix(count).map(\.0)
        try #require(chosen.count == count, "\(count) .\(ext) photographs under \(directory.path)")
        return chosen
    }

    /// Width and height of an image file, from its header.
    static func size(of path: String) throws -> PixelSize {
        let info = try ImageDecoder().probe(try Data(contentsOf: URL(fileURLWithPath: path)))
        return PixelSize(width: info.width, height: info.height)
    }
}
