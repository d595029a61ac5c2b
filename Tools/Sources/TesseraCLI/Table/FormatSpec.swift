import ArgumentParser
import Foundation
import Tessera

/// A `NAME:WxH:STYLE:MAX` format on the command line, e.g. `thumb:100x100:bgra32:500`.
struct FormatSpec: ExpressibleByArgument {
    let format: ImageFormat

    init?(argument: String) {
        let parts = argument.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 4, !parts[0].isEmpty, let size = PixelSize(parsing: parts[1]),
              let style = PixelStyle(rawValue: String(parts[2])), let max = Int(parts[3]), max > 0
        else { return nil }
        format = ImageFormat(name: String(parts[0]), family: "ingest", style: style, size: size, maximumCount: max)
    }

    static var defaultCompletionKind: CompletionKind { .default }
}

/// How the commands derive ids from files, identically for `ingest` and `get --file`.
enum FileIdentity {
    /// The entity id: a hash of the file's absolute, standardised path.
    static func entityID(of path: String) -> UUID {
        UUID(hashing: "file:" + URL(fileURLWithPath: path).standardizedFileURL.path)
    }

    /// The source-image id: a hash of the file's size and modification time (so a changed file
    /// becomes a miss without reading it).
    static func sourceID(of path: String) throws -> UUID {
        sourceID(of: try ImageFile(path: path))
    }

    /// ``sourceID(of:)-(String)`` of a file already open (the same value: `ImageFile.modificationDate`
    /// is `FileManager`'s modification date to the bit).
    static func sourceID(of file: borrowing ImageFile) -> UUID {
        UUID(hashing: "source:\(file.size):\(file.modificationDate.timeIntervalSince1970)")
    }
}

/// Opening the tables of a directory whose formats are read from the files themselves.
enum TableDirectory {
    static func open(_ directory: String, only name: String? = nil) throws -> [ImageTable] {
        let url = URL(fileURLWithPath: directory)
        let formats = ImageTable.existingFormats(in: url).filter { name == nil || $0.name == name }
        if formats.isEmpty {
            throw ValidationError(name.map { "no table named \($0) in \(directory)" } ?? "no image tables in \(directory)")
        }
        return try formats.map { try ImageTable(format: $0, directory: url) }
    }
}
