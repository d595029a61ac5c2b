import Foundation
import Tessera
import TesseraHTTP

/// A test entity: a user with an avatar URL; its ids are hashes of the name and the URL.
public struct User: ImageEntity {
    /// The user's id (a hash of the name).
    public let entityID: UUID
    /// The avatar's id (a hash of the URL).
    public let sourceImageID: UUID
    /// Where the avatar is.
    public let url: URL
    /// The user `name` with the avatar at `url`.
    public init(_ name: String, url: URL) {
        entityID = UUID(hashing: "user:" + name)
        sourceImageID = UUID(hashing: url.absoluteString)
        self.url = url
    }
    /// The avatar's URL, for every format.
    public func sourceImageURL(for format: ImageFormat) -> URL? { url }
}

/// A real codec wrapped to count how many times it decodes pixels.
public struct CountingDecoder: ImageDecoding {
    /// The codec that does the work.
    public let base: any ImageDecoding
    /// Incremented once per decode.
    public let decodes: Counter
    /// `base`, counting its decodes in `decodes`.
    public init(base: any ImageDecoding, decodes: Counter) {
        self.base = base
        self.decodes = decodes
    }
    /// The base codec's format.
    public var format: ImageFileFormat { base.format }
    /// The base codec's probe.
    public func probe(_ data: UnsafeRawBufferPointer) throws(TesseraError) -> ImageInfo { try base.probe(data) }
    /// The base codec's decoded size.
    public func decodedSize(for info: ImageInfo, atLeast target: PixelSize?) -> PixelSize { base.decodedSize(for: info, atLeast: target) }
    /// Whether the base codec decodes straight into `style`.
    public func supportsDirectDecode(to style: PixelStyle) -> Bool { base.supportsDirectDecode(to: style) }
    /// Counts, then decodes with the base codec.
    public func decode(_ data: UnsafeRawBufferPointer, info: ImageInfo, into target: MutableBitmapView) throws(TesseraError) -> DecodeIntegrity {
        decodes.increment()
        return try base.decode(data, info: info, into: target)
    }
}

/// An `ImageDecoder` whose standard codecs count their decodes in `decodes`.
public func countingDecoder(_ decodes: Counter) -> ImageDecoder {
    ImageDecoder(decoders: ImageDecoder.standardDecoders(limits: .default).map { CountingDecoder(base: $0, decodes: decodes) })
}

/// Fetches source images over HTTP with the project's AsyncHTTPClient loader, counting fetches and
/// cancels. The load task is cancelled by `ImageCache` when the last requester goes; the loader
/// cancels the HTTP request with it.
public struct HTTPSourceProvider: SourceImageProviding {
    /// One per `sourceImage(at:for:format:)` call.
    public let fetches = Counter()
    /// One per `cancelSourceImage(at:)` call.
    public let cancels = Counter()
    /// What `shouldProcessAllFormats(inFamily:for:)` answers.
    public var processFamilies = true

    /// A provider that processes whole families.
    public init() {}

    /// Loads `url` with the shared HTTP loader.
    public func sourceImage(at url: URL, for entity: any ImageEntity, format: ImageFormat) async throws -> SourceImage {
        fetches.increment()
        let response = try await HTTPDataLoader.shared.load(LoadRequest(url: url), progress: { _ in })
        return .encoded(response.data)
    }

    /// Counts the cancel.
    public func cancelSourceImage(at url: URL) { cancels.increment() }

    /// ``processFamilies``.
    public func shouldProcessAllFormats(inFamily family: String, for entity: any ImageEntity) -> Bool { processFamilies }
}
