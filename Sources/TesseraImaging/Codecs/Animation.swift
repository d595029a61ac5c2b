import Foundation

/// Every frame of an animated image, composited as a browser shows it: each ``Frame/image`` is the
/// whole canvas (``PixelStyle/bgra32``, premultiplied) after that frame was drawn over what the
/// previous frames left, following each frame's disposal and blending.
///
/// ```swift
/// let animation = try ImageDecoder().animation(gifData)
/// for frame in animation.frames { show(frame.image, for: frame.duration) }
/// ```
///
/// Memory: all frames are decoded at once, `width × height × 4` bytes each, bounded by
/// ``DecodingLimits/maximumFrameCount`` and ``DecodingLimits/maximumAnimationPixelCount`` before each
/// allocation. Image tables store one frame (the first, as ``ImageDecoder/decode(_:style:minimumSize:)``
/// returns it).
public struct Animation: Sendable {
    /// One composited frame and how long it stays on screen.
    public struct Frame: Sendable {
        /// The canvas after this frame.
        public var image: Bitmap
        /// The file's display time for the frame. GIF stores hundredths of a second; browsers show
        /// frames stored as 0 or 10 ms for 100 ms instead, which is left to the player.
        public var duration: Duration

        /// A frame of `image` shown for `duration`.
        public init(image: Bitmap, duration: Duration) {
            self.image = image
            self.duration = duration
        }
    }

    /// The canvas size (GIF's logical screen, WebP's canvas).
    public var canvasSize: PixelSize
    /// The frames in display order; a still image has one, with duration zero.
    public var frames: [Frame]
    /// How many times the file asks to play the animation: `0` forever, `nil` when it does not say
    /// (GIF without a NETSCAPE2.0 loop extension: play once). For GIF this is the stored repeat count.
    public var loopCount: Int?

    /// An animation of `frames` on a canvas of `canvasSize` (each frame that size, for the encoders), played
    /// `loopCount` times (`0` for ever; `nil`: once).
    public init(canvasSize: PixelSize, frames: [Frame], loopCount: Int?) {
        self.canvasSize = canvasSize
        self.frames = frames
        self.loopCount = loopCount
    }
}

/// A decoder that also decodes every frame of an animation.
public protocol AnimatedImageDecoding: ImageDecoding {
    /// Every frame of `data`, composited on the canvas (see ``Animation``).
    /// - Throws: ``/TesseraCore/DecodingFailure/tooManyFrames(limit:)`` or
    ///   ``/TesseraCore/DecodingFailure/animationTooLarge(frames:width:height:limit:)`` before allocating a frame over
    ///   the limits, and the decoder's usual errors.
    func decodeAnimation(_ data: UnsafeRawBufferPointer) throws(TesseraError) -> Animation
}

extension ImageDecoder {
    /// Every frame of an animated GIF or WebP; a still image (any format) as one frame. Orientation
    /// is not applied (animated formats carry none).
    public func animation(_ data: Data) throws(TesseraError) -> Animation {
        try Self.withBytes(of: data) { (bytes) throws(TesseraError) -> Animation in
            let (decoder, info) = try probe(bytes: bytes)
            // The probe counted the frames (a GIF up to the limit + 1): refuse a bomb before any frame exists.
            try limits.checkAnimation(frames: info.frameCount, width: info.width, height: info.height)
            if let animated = decoder as? any AnimatedImageDecoding { return try animated.decodeAnimation(bytes) }
            let image = try decode(data)
            return Animation(canvasSize: PixelSize(width: image.width, height: image.height),
                             frames: [Animation.Frame(image: image, duration: .zero)], loopCount: nil)
        }
    }
}
