import TesseraImaging
import TesseraTables
import Foundation

/// What ``DiskCaching/entry(for:)`` returns: the bytes as downloaded and their freshness.
public struct DiskCacheEntry: Sendable {
    /// The body as downloaded.
    public var data: Data
    /// Validators and freshness.
    public var info: HTTPCacheInfo

    /// Creates an entry.
    public init(data: Data, info: HTTPCacheInfo) {
        self.data = data
        self.info = info
    }
}
