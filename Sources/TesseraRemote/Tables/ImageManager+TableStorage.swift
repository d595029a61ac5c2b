import TesseraImaging
import TesseraTables
import Foundation

extension ImageManager {
    /// Where and how big the image tables of an ``ImageManager`` are (``Configuration/tables``): URL requests
    /// of a fixed output size are stored in one table per size and style and answered from it later, in this
    /// process and after a restart, without decoding and without copying.
    ///
    /// ```swift
    /// var configuration = ImageManager.Configuration(disk: .init(directory: cacheDirectory))
    /// configuration.tables = ImageManager.TableStorage(directory: tableDirectory, maximumCount: 2000)
    /// ```
    ///
    /// A request qualifies when every answer to it has the same size: a `size` with aspect fill or fill, or a
    /// ``/TesseraImaging/ImageProcessing`` with a width, a height and the mode fill, fill-down, force or pad. Each
    /// distinct size, processing (its output format and quality aside) and processors list gets a table file
    /// of its own, `url-<32 hex digits>.tesseratable`, in ``directory``; the manager opens them as requests
    /// need them and keeps them open.
    public struct TableStorage: Sendable, Hashable {
        /// The directory of the table files (created with mode `0o700`). Give each manager a directory of its
        /// own: a table file is open in one place at a time (another process's manager over the same
        /// directory stores nothing in the tables it cannot open).
        public var directory: URL
        /// The most entries each table keeps; storing more replaces the least recently used entry that no
        /// live image holds. Changing it starts the tables afresh (their files are reset on opening).
        public var maximumCount: Int
        /// The most tables (distinct sizes and styles) the manager opens; the variants after them are not
        /// stored.
        public var maximumTables: Int
        /// The pixel style of every entry: premultiplied BGRA by default, what the decoder makes, so storing
        /// is a copy. Another style converts when storing.
        public var style: PixelStyle

        /// Creates table settings: by default 1,000 entries in each of at most 32 tables, in premultiplied BGRA.
        public init(directory: URL, maximumCount: Int = 1000, maximumTables: Int = 32, style: PixelStyle = .bgra32) {
            self.directory = directory
            self.maximumCount = maximumCount
            self.maximumTables = maximumTables
            self.style = style
        }

        /// `$XDG_CACHE_HOME/tessera/url-tables`, or `~/.cache/tessera/url-tables`.
        public static var defaultDirectory: URL {
            Configuration.defaultDiskDirectory.deletingLastPathComponent().appendingPathComponent("url-tables", isDirectory: true)
        }
    }
}
