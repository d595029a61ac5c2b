import TesseraImaging
import Foundation

/// A source-image provider for `file://` URLs: reads the file (bounded by the decoder's input limit)
/// and lets the cache decode it.
public struct FileSourceImageProvider: SourceImageProviding {
    /// Largest file accepted, in bytes.
    public var maximumBytes: Int

    /// Creates a provider.
    public init(maximumBytes: Int = DecodingLimits.default.maximumInputBytes) {
        self.maximumBytes = maximumBytes
    }

    /// Reads the file at `url`.
    public func sourceImage(at url: URL, for entity: any ImageEntity, format: ImageFormat) async throws -> SourceImage {
        guard url.isFileURL else { throw TesseraError(.cache(.sourceUnavailable(url: url.absoluteString, message: "not a file URL"))) }
        let file = try ImageFile(path: url.path)
        if file.size > maximumBytes { throw TesseraError(.decoding(.inputTooLarge(bytes: file.size, limit: maximumBytes))) }
        try Task.checkCancellation()
        return .encoded(try file.contents())
    }
}
