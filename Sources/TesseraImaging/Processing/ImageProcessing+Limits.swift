extension ImageProcessing {
    /// The bounds ``ImageProcessing/validate(_:)`` and ``ImageProcessing/geometry(for:limits:)`` hold a value
    /// to, and the one place each parameter's range is declared (the `…Range` properties): the service's
    /// parsers and messages read them from here.
    public struct Limits: Sendable, Hashable {
        /// The largest ``ImageProcessing/width`` and ``ImageProcessing/height`` (before ``ImageProcessing/dpr``); 8192.
        public var maximumDimension: Int
        /// The largest ``ImageProcessing/dpr``; 4 (the smallest is always 1).
        public var maximumDPR: Double
        /// The largest ``ImageProcessing/blur`` sigma; 100.
        public var maximumBlur: Double
        /// The largest ``ImageProcessing/sharpen`` sigma; 10.
        public var maximumSharpen: Double
        /// The largest ``ImageProcessing/pixelate`` block side; 256.
        public var maximumPixelate: Int
        /// The most pixels an output canvas may have (after ``ImageProcessing/dpr``); 4,000,000 by default,
        /// as `tessera serve`'s default.
        public var maximumOutputPixels: Int

        /// Creates limits; the defaults are the ones documented on each property.
        public init(maximumDimension: Int = 8192, maximumDPR: Double = 4, maximumBlur: Double = 100,
                    maximumOutputPixels: Int = 4_000_000, maximumSharpen: Double = 10, maximumPixelate: Int = 256) {
            self.maximumDimension = maximumDimension
            self.maximumDPR = maximumDPR
            self.maximumBlur = maximumBlur
            self.maximumOutputPixels = maximumOutputPixels
            self.maximumSharpen = maximumSharpen
            self.maximumPixelate = maximumPixelate
        }

        /// ``ImageProcessing/width`` and ``ImageProcessing/height``: 1…``maximumDimension``.
        public var dimensionRange: Bounds<Int> { Bounds(1, maximumDimension) }
        /// ``ImageProcessing/dpr``: 1…``maximumDPR``.
        public var dprRange: Bounds<Double> { Bounds(1, maximumDPR) }
        /// ``ImageProcessing/blur``: 0…``maximumBlur``.
        public var blurRange: Bounds<Double> { Bounds(0, maximumBlur) }
        /// ``ImageProcessing/sharpen``: 0…``maximumSharpen``.
        public var sharpenRange: Bounds<Double> { Bounds(0, maximumSharpen) }
        /// ``ImageProcessing/pixelate``: 1…``maximumPixelate``.
        public var pixelateRange: Bounds<Int> { Bounds(1, maximumPixelate) }
        /// The most tiles a ``ImageProcessing/Watermark/Position/repeat`` watermark may be drawn as; 10,000,
        /// whatever the limits (each tile is one paint).
        public var maximumWatermarkTiles: Int { 10_000 }
        /// Each side of ``ImageProcessing/padding``: 0…``maximumDimension``.
        public var paddingRange: Bounds<Int> { Bounds(0, maximumDimension) }
        /// ``ImageProcessing/trim``'s colour distance: 0…255, whatever the limits.
        public var trimRange: Bounds<Int> { Bounds(0, 255) }
        /// Each side of a ``ImageProcessing/Crop`` (pixels, or a fraction below 1, or 0 for the whole side):
        /// 0…1,048,576, whatever the limits.
        public var cropSideRange: Bounds<Double> { Bounds(0, Double(1 << 20)) }
        /// ``ImageProcessing/quality``: 1…100, whatever the limits.
        public var qualityRange: Bounds<Int> { Bounds(1, 100) }
        /// Each fraction of a ``Gravity/focalPoint(x:y:)``: 0…1, whatever the limits.
        public var focalPointRange: Bounds<Double> { Bounds(0, 1) }
        /// Each side of a source ``ImageProcessing/geometry(for:limits:)`` accepts: 1…1,048,576, whatever the limits.
        public var sourceSideRange: Bounds<Int> { Bounds(1, 1 << 20) }
    }
}
