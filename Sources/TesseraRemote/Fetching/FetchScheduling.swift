import TesseraImaging
import TesseraTables
/// How ``ImageManager`` orders downloads. SPI (`@_spi(Internal)`): the FIFO queue exists only as the baseline
/// `tessera bench fetch` measures the lanes against.
@_spi(Internal) public enum FetchScheduling: String, Sendable, Hashable, Codable {
    /// Two lanes: urgent requests in parallel (``ImageManager/Configuration/maximumConcurrentDownloads``),
    /// prefetches one at a time and only while the urgent lane is idle. The default.
    case prioritized
    /// One first-in-first-out queue of ``ImageManager/Configuration/maximumConcurrentDownloads`` for
    /// every request whatever its priority: the baseline `tessera bench fetch` compares against.
    case fifo
}
