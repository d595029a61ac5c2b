import Foundation

extension ImageDecoder {
    /// Every frame of `data` (an animated GIF or WebP; any other image as one frame) through `processing`
    /// with one geometry: it is worked out on the canvas, and a smart crop or a trim decides on the first
    /// frame, so that no frame moves against the others. Each frame then goes through steps 5 to 10 of
    /// ``render(_:processing:limits:watermark:)`` and keeps its duration; the loop count is the source's.
    ///
    /// Memory: the decoded frames (``animation(_:)``, bounded by ``DecodingLimits/maximumFrameCount`` and
    /// ``DecodingLimits/maximumAnimationPixelCount``), then the output frames, whose pixels (frames ×
    /// output width × height) are held to the same ``DecodingLimits/maximumAnimationPixelCount`` before the
    /// first is drawn.
    public func renderAnimation(_ data: Data, processing: ImageProcessing, limits: ImageProcessing.Limits = .init(),
                                watermark: Bitmap? = nil) throws(RenderError) -> Animation {
        try Self.check(processing, limits: limits, watermark: watermark)
        let source = try Self.failing { () throws(TesseraError) in try animation(data) }
        guard let first = source.frames.first else { throw .failed(TesseraError(.decoding(.empty))) }
        let display = source.canvasSize
        let (geometry, region) = try Self.plan(processing, display: display, limits: limits)
        let settled = try settle(first.image, orientation: .up, display: display, region: region, geometry: geometry,
                                 processing: processing, limits: limits)
        let size = processing.outputSize(of: settled.geometry)
        try Self.failing { () throws(TesseraError) in
            try self.limits.checkAnimation(frames: source.frames.count, width: size.width, height: size.height)
        }
        var frames: [Animation.Frame] = []
        frames.reserveCapacity(source.frames.count)
        for frame in source.frames {
            let image = try compose(frame.image, orientation: .up, display: display, geometry: settled.geometry,
                                    processing: processing, limits: limits, watermark: watermark)
            frames.append(Animation.Frame(image: image, duration: frame.duration))
        }
        return Animation(canvasSize: frames[0].image.layout.size, frames: frames, loopCount: source.loopCount)
    }
}
