import CWebP

extension WebPDecoder {
    /// Every frame, composited on the canvas by libwebpdemux's `WebPAnimDecoder` (premultiplied
    /// BGRA), with durations from the frame timestamps and the file's loop count (0 = forever). A
    /// still WebP gives one frame. The canvas size, the frame count and the pixels over all frames
    /// are checked before the decoder allocates its canvas.
    public func decodeAnimation(_ data: UnsafeRawBufferPointer) throws(TesseraError) -> Animation {
        let features = try readFeatures(data)
        let width = Int(features.width), height = Int(features.height)
        let frameTotal = features.has_animation != 0 ? try frameCount(data) : 1
        try limits.checkAnimation(frames: frameTotal, width: width, height: height)
        return try withAnimationDecoder(data) { (decoder) throws(TesseraError) -> Animation in
            var info = WebPAnimInfo()
            guard WebPAnimDecoderGetInfo(decoder, &info) != 0 else { throw codecError("cannot read the animation header") }
            guard Int(info.canvas_width) == width, Int(info.canvas_height) == height, Int(info.frame_count) == frameTotal else {
                throw codecError("the animation header disagrees with the file's chunks")
            }
            let layout = BitmapLayout(width: width, height: height, style: .bgra32)
            var frames: [Animation.Frame] = []
            var previous: Int32 = 0
            while WebPAnimDecoderHasMoreFrames(decoder) != 0 {
                var canvas: UnsafeMutablePointer<UInt8>? = nil
                var timestamp: Int32 = 0
                guard WebPAnimDecoderGetNext(decoder, &canvas, &timestamp) != 0, let canvas else {
                    throw frames.isEmpty ? codecError("the first frame cannot be decoded") : codecError("frame \(frames.count + 1) cannot be decoded")
                }
                let image = Bitmap(layout: layout) { Self.copy(canvas, width: width, height: height, into: $0) }
                frames.append(Animation.Frame(image: image, duration: .milliseconds(Int(max(0, timestamp - previous)))))
                previous = timestamp
            }
            guard !frames.isEmpty else { throw codecError("the animation has no frames") }
            return Animation(canvasSize: PixelSize(width: width, height: height), frames: frames, loopCount: Int(info.loop_count))
        }
    }

    /// The number of frames, from the file's chunks (no pixels decoded).
    func frameCount(_ data: UnsafeRawBufferPointer) throws(TesseraError) -> Int {
        guard let base = data.baseAddress?.assumingMemoryBound(to: UInt8.self) else { throw TesseraError(.decoding(.empty)) }
        var webp = WebPData(bytes: base, size: data.count)
        guard let demuxer = WebPDemux(&webp) else { throw codecError("the container cannot be parsed") }
        defer { WebPDemuxDelete(demuxer) }
        return Int(WebPDemuxGetI(demuxer, WEBP_FF_FRAME_COUNT))
    }

    /// The first frame of an animated file into `target` (canvas size; `bgra32` or `bgr32`);
    /// `features` are the file's, as `readFeatures` returned them.
    func decodeFirstFrame(_ data: UnsafeRawBufferPointer, features: WebPBitstreamFeatures, into target: MutableBitmapView) throws(TesseraError) {
        let layout = target.layout
        guard supportsDirectDecode(to: layout.style), layout.width == Int(features.width), layout.height == Int(features.height) else {
            throw TesseraError(.invalidLayout(width: layout.width, height: layout.height, bytesPerRow: layout.bytesPerRow))
        }
        try withAnimationDecoder(data) { (decoder) throws(TesseraError) in
            var canvas: UnsafeMutablePointer<UInt8>? = nil
            var timestamp: Int32 = 0
            guard WebPAnimDecoderGetNext(decoder, &canvas, &timestamp) != 0, let canvas else {
                throw codecError("the first frame cannot be decoded")
            }
            Self.copy(canvas, width: layout.width, height: layout.height, into: target)
        }
        target.setOpaqueAfterPremultipliedDecode()
    }

    /// Runs `body` with a `WebPAnimDecoder` (premultiplied BGRA, no threads) over `data`, always deleted.
    private func withAnimationDecoder<R>(_ data: UnsafeRawBufferPointer,
                                         _ body: (OpaquePointer) throws(TesseraError) -> R) throws(TesseraError) -> R {
        guard let base = data.baseAddress?.assumingMemoryBound(to: UInt8.self) else { throw TesseraError(.decoding(.empty)) }
        var webp = WebPData(bytes: base, size: data.count)
        var options = WebPAnimDecoderOptions()
        guard WebPAnimDecoderOptionsInit(&options) != 0 else { throw codecError("libwebpdemux version mismatch") }
        options.color_mode = MODE_bgrA
        options.use_threads = 0
        guard let decoder = WebPAnimDecoderNew(&webp, &options) else { throw codecError("the animation cannot be decoded") }
        defer { WebPAnimDecoderDelete(decoder) }
        return try body(decoder)
    }

    /// Copies a packed `width × 4`-byte-per-row canvas into `target`'s rows.
    private static func copy(_ canvas: UnsafeMutablePointer<UInt8>, width: Int, height: Int, into target: MutableBitmapView) {
        for y in 0..<height {
            target.row(y).copyMemory(from: canvas + y * width * 4, byteCount: width * 4)
        }
    }

    private func codecError(_ message: String) -> TesseraError { TesseraError(.decoding(.codec(.webp, message: message))) }
}
