extension ImageProcessing {
    /// Which of the source's descriptive metadata (EXIF, XMP, IPTC) the output carries. The ICC profile is
    /// not metadata here: it follows the colour pipeline (the output is sRGB).
    public enum Metadata: String, Sendable, Hashable, Codable, CaseIterable {
        /// None (the default): smaller files, and no camera serial numbers or GPS positions leave the service.
        case strip
        /// The copyright notice, the artist or creator, and the licence fields only
        /// (``ImageMetadata/keepingCopyright()``).
        case copyright
        /// All of it (EXIF, XMP, IPTC), with the orientation reset to 1 (the pixels are already turned)
        /// (``ImageMetadata/keepingAll()``).
        case keep
    }
}

extension ImageProcessing {
    /// Which frames of an animated source (GIF, WebP) the output keeps.
    public enum Frames: String, Sendable, Hashable, Codable, CaseIterable {
        /// Every frame, each with the same geometry, when the output format animates (GIF, WebP); the first
        /// otherwise. The default.
        case all
        /// The first frame only: a still image in any format.
        case first
    }
}
