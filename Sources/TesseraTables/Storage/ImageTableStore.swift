import TesseraImaging
import Foundation
import Synchronization

/// Several image tables in one directory, one per format, opened on first use; formats are grouped
/// by ``ImageFormat/family``. A thin layer for an image cache to build on.
public final class ImageTableStore: Sendable {
    /// The directory holding every table file.
    public let directory: URL
    /// The registered formats, by name.
    public let formats: [String: ImageFormat]
    private let tables = LockedValue<[String: ImageTable]>([:])

    /// Registers `formats` (names must be unique) in `directory`. Nothing is opened yet.
    /// - Throws: `.storage(.invalidFormat)` for an invalid or duplicate format.
    public init(directory: URL, formats: [ImageFormat]) throws(TesseraError) {
        var byName: [String: ImageFormat] = [:]
        for format in formats {
            try format.validate()
            guard byName.updateValue(format, forKey: format.name) == nil else {
                throw TesseraError(.storage(.invalidFormat(name: format.name, reason: "registered twice")))
            }
        }
        self.directory = directory
        self.formats = byName
    }

    /// The formats of `family`, smallest entry first.
    public func formats(inFamily family: String) -> [ImageFormat] {
        formats.values.filter { $0.family == family }
            .sorted { ($0.size.pixelCount, $0.name) < ($1.size.pixelCount, $1.name) }
    }

    /// The table for the format named `name`, opening it on first use; `nil` for an unknown name.
    /// - Throws: what ``ImageTable/init(format:directory:)`` throws.
    public func table(named name: String) throws(TesseraError) -> ImageTable? {
        guard let format = formats[name] else { return nil }
        return try tables.withLock { open throws(TesseraError) -> ImageTable in
            if let table = open[name] { return table }
            let table = try ImageTable(format: format, directory: directory)
            open[name] = table
            return table
        }
    }
}
