#if Serving
import Foundation

extension ServerConfiguration {
    /// The gallery page: `GET /gallery` and its listing `GET /gallery/list` (docs/SERVING.md, "Gallery").
    /// What an application adds to it (a script, routes) is a ``GalleryRoutes/Addition``, not configuration.
    public struct Gallery: Sendable, Codable, Hashable {
        /// Whether the gallery routes exist (`--no-gallery` turns them off). They never exist while
        /// ``ServerConfiguration/signingKeys`` is set: the page would have to publish a signature for every
        /// image under the root.
        public var enabled = true
        /// Most images one listing returns, the first in path order; past it the listing says `truncated`.
        /// The walk also stops after looking at 4 × this many directory entries, and goes at most
        /// ``maximumDepth`` directories deep, so a listing's cost is bounded whatever the root holds.
        public var maximumImages = 20_000

        /// Directory levels below the listed directory that the walk enters.
        public static let maximumDepth = 16

        /// The defaults: on, at most 20,000 images per listing.
        public init() {}

        private enum CodingKeys: String, CodingKey { case enabled, maximumImages }

        /// Decodes the `gallery` object of a config file; absent fields keep their defaults, unknown ones are ignored.
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            let d = Gallery()
            enabled = try c.decodeIfPresent(Bool.self, forKey: .enabled) ?? d.enabled
            maximumImages = try c.decodeIfPresent(Int.self, forKey: .maximumImages) ?? d.maximumImages
        }
    }
}
#endif
