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
        /// Longest a listing spends making the ThumbHashes its images lack (a low-resolution fill each; hashes
        /// already in the tables cost no decode and are always included). Past it the rest are `null`, and the
        /// next listing finds those the page's thumbnails filled meanwhile. 2 seconds by default.
        public var thumbHashSeconds: Double = 2

        /// Directory levels below the listed directory that the walk enters.
        public static let maximumDepth = 16

        /// The defaults: on, at most 20,000 images per listing.
        public init() {}

        /// Decodes the `gallery` object of a config file through the settings' declaration; absent fields keep their defaults.
        public init(from decoder: any Decoder) throws {
            self = try ServeSettingsReader.section("gallery", of: decoder, \.gallery)
        }
    }
}
#endif
