import Foundation

/// Size and allocation of a file, from `stat`.
enum FileFacts {
    static func size(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue
    }

    /// Bytes the file system allocated for the file (`st_blocks × 512`).
    static func allocatedBytes(_ path: String) -> Int? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return Int(status.st_blocks) * 512
    }

    /// Copies `files` into `directory` (keeping their names) and returns the copies.
    static func copy(_ files: [URL], into directory: ScratchDirectory) throws -> [URL] {
        try files.map { file in
            let copy = directory.url.appendingPathComponent(file.lastPathComponent)
            try FileManager.default.copyItem(at: file, to: copy)
            return copy
        }
    }
}
