extension ImageProcessing {
    /// A parameter of an ``ImageProcessing`` (or of what it meets: the ``source`` size, the ``output``
    /// canvas), as ``Invalid`` names the one at fault. A surface (the service, the command line) maps it to
    /// its own error in one table; the raw value is the name in ``Invalid``'s description.
    public enum Parameter: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// ``ImageProcessing/width``.
        case width
        /// ``ImageProcessing/height``.
        case height
        /// ``ImageProcessing/mode``.
        case mode
        /// ``ImageProcessing/gravity``, a focal point's fractions included when ``validate(_:)`` checks them.
        case gravity
        /// A focal point given apart from the gravity (`/v1/resize`'s `fp=X,Y`).
        case focalPoint
        /// ``ImageProcessing/enlarge``.
        case enlarge
        /// ``ImageProcessing/background``.
        case background
        /// ``ImageProcessing/dpr``.
        case dpr
        /// ``ImageProcessing/blur``.
        case blur
        /// ``ImageProcessing/format``: a format Tessera does not write.
        case format
        /// ``ImageProcessing/quality``.
        case quality
        /// ``ImageProcessing/rotation``: not 0, 90, 180 or 270.
        case rotation
        /// ``ImageProcessing/flip``: not `h`, `v` or `hv`.
        case flip
        /// ``ImageProcessing/crop`` or ``ImageProcessing/cropBox``: a negative or empty region, both at once,
        /// or a box outside the source.
        case crop
        /// ``ImageProcessing/trim``: not 0…255.
        case trim
        /// ``ImageProcessing/padding``: a side not 0…``Limits/maximumDimension``.
        case padding
        /// ``ImageProcessing/sharpen``.
        case sharpen
        /// ``ImageProcessing/pixelate``.
        case pixelate
        /// ``ImageProcessing/grayscale`` (a surface's value that is not a boolean).
        case grayscale
        /// ``ImageProcessing/watermark``: an opacity or scale out of range, an offset beyond
        /// ``Limits/maximumDimension``, no image for its name, or too many tiles.
        case watermark
        /// ``ImageProcessing/metadata``: not `strip`, `copyright` or `keep`.
        case metadata
        /// ``ImageProcessing/frames``: not `all` or `first`.
        case animation
        /// The source's size: not 1…``Limits/sourceSideRange`` pixels on each side.
        case source
        /// The output canvas: more than ``Limits/maximumOutputPixels``.
        case output

        /// The raw value.
        public var description: String { rawValue }
    }
}
