#if Serving
import Foundation
import Tessera

extension ServerConfiguration {
    /// The quality each lossy format is encoded at when a request has no `q` (`q` overrides all of them).
    /// The defaults follow what each codec needs for a thumbnail that looks like its JPEG: AVIF 60, WebP 80,
    /// JPEG 82. In the config file: `"quality": {"avif": 55, "webp": 75, "jpeg": 80}` (absent ones keep
    /// their defaults).
    public struct Quality: Sendable, Codable, Hashable {
        /// JPEG quality, 1…100. Default 82.
        public var jpeg: Int = 82
        /// Lossy WebP quality, 1…100. Default 80.
        public var webp: Int = 80
        /// AVIF quality, 1…100. Default 60.
        public var avif: Int = 60

        /// The defaults.
        public init() {}

        /// Decodes `{"jpeg":…, "webp":…, "avif":…}` through the settings' declaration; absent fields keep their defaults.
        public init(from decoder: any Decoder) throws {
            self = try ServeSettingsReader.section("quality", of: decoder, \.quality)
        }

        /// The quality of WebP written in AVIF's place (``ServerConfiguration/avifMinPixels``): ``avif`` + 15, at
        /// most 100. `tessera serve`'s WebP at q75 with ``webpEffortInPlaceOfAVIF`` scores what its AVIF at q60
        /// and speed 9 scores on 200×200 thumbnails (SSIMULACRA2, `scripts/webp-avif-quality`; docs/PERFORMANCE.md,
        /// "WebP in AVIF's place").
        var webpInPlaceOfAVIF: Int { min(100, avif + 15) }
        /// How libwebp writes WebP in AVIF's place: ``TesseraImaging/WebPEncoder/Effort/thumbnail`` (method 2,
        /// one segment, no noise shaping), about a third of the time of libwebp's default effort.
        static let webpEffortInPlaceOfAVIF = WebPEncoder.Effort.thumbnail

        /// The quality of `format` (PNG and GIF take none, and HEIC is not written: their value is unused).
        func value(for format: ImageFileFormat) -> Int {
            switch format {
            case .jpeg: jpeg
            case .webp: webp
            case .avif: avif
            case .png, .gif, .heic: 100
            }
        }
    }

    /// An image served instead of an error when a request's source is missing or cannot be decoded: drawn
    /// like the request (its preset or size, its format), with its own status, `X-Tessera-Fallback: 1` and a
    /// short `Cache-Control`, so that a CDN does not keep a placeholder for a year. Every other error stays
    /// a JSON error.
    public struct Fallback: Sendable, Codable, Hashable {
        /// The image file (any format the decoder reads), read once when the server starts.
        public var image: String
        /// The status of a fallback answer. Default 404.
        public var status: Int = 404
        /// `Cache-Control` `max-age` of a fallback answer, in seconds. Default 60.
        public var maxAgeSeconds: Int = 60

        /// A fallback of `image` with the default status and `max-age`.
        public init(image: String) { self.image = image }

        /// Decodes `{"image":…, "status":…, "maxAgeSeconds":…}` through the settings' declaration; `image` is required.
        public init(from decoder: any Decoder) throws {
            guard let fallback = try ServeSettingsReader.section("fallback", of: decoder, \.fallback) else {
                throw ServeSettingError(setting: "fallback", value: "", reason: "needs an image")
            }
            self = fallback
        }
    }

    /// Checks the quality values, the AVIF speed and minimum pixels, and the fallback's status.
    func validateOutput() throws(ServerConfigurationError) {
        for (name, value) in [("jpeg", quality.jpeg), ("webp", quality.webp), ("avif", quality.avif)] where !(1...100).contains(value) {
            throw ServerConfigurationError("quality.\(name) must be 1…100")
        }
        guard (0...9).contains(avifSpeed) else { throw ServerConfigurationError("the AVIF speed must be 0…9") }
        guard avifMinPixels >= 0 else { throw ServerConfigurationError("the AVIF minimum pixels must be 0 or more") }
        if let fallback {
            guard (200...599).contains(fallback.status) else { throw ServerConfigurationError("the fallback status must be 200…599") }
            guard fallback.maxAgeSeconds >= 0 else { throw ServerConfigurationError("the fallback max-age must be 0 or more") }
        }
    }
}
#endif
