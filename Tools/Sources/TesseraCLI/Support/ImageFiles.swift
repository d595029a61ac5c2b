import Foundation
import Tessera

/// Finding and reading image files for the commands.
enum ImageFiles {
    /// The image files directly in `directory` (by extension), sorted by name.
    static func list(in directory: String) throws -> [String] {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory)
        let extensions: Set<String> = ["jpg", "jpeg", "png", "webp", "gif", "heic", "heif", "avif"]
        return names.filter { extensions.contains(($0 as NSString).pathExtension.lowercased()) }
            .sorted().map { (directory as NSString).appendingPathComponent($0) }
    }

    /// Reads a file, refusing files larger than `limit` bytes before reading them.
    static func read(_ path: String, limit: Int = DecodingLimits.default.maximumInputBytes) throws -> Data {
        try ImageFile.contents(of: path, limit: limit)
    }

    /// The file name without directory and extension.
    static func stem(_ path: String) -> String {
        ((path as NSString).lastPathComponent as NSString).deletingPathExtension
    }
}
