import CWebP
@_spi(Internal) import TesseraCore

extension WebPEncoder {
    /// Encodes every frame of `animation` as an animated WebP with libwebpmux's `WebPAnimEncoder`, lossy at
    /// ``quality`` or lossless, which stores each frame as the smallest rectangle that changed and picks
    /// each frame's blending and disposal itself. Each frame is shown for its ``Animation/Frame/duration``
    /// (whole milliseconds); the loop count is the animation's stored number (`0` for ever), and 1 (play
    /// once) when it has none.
    ///
    /// Memory: an un-premultiplied copy of one frame (`width × height × 4` bytes) and the encoder's own
    /// buffers, about two canvases.
    public func encode(_ animation: Animation) throws(TesseraError) -> [UInt8] {
        let width = animation.canvasSize.width, height = animation.canvasSize.height
        guard width >= 1, height >= 1, width <= 16_383, height <= 16_383, !animation.frames.isEmpty,
              animation.frames.allSatisfy({ $0.image.width == width && $0.image.height == height }) else {
            throw failure("an animated WebP holds 1…16383 pixels per side and frames of the canvas's size, not \(width)×\(height)")
        }
        var options = WebPAnimEncoderOptions()
        guard WebPAnimEncoderOptionsInit(&options) != 0 else { throw failure("libwebpmux version mismatch") }
        options.anim_params.loop_count = Int32(clamping: animation.loopCount ?? 1)
        var config = WebPConfig()
        guard WebPConfigInit(&config) != 0 else { throw failure("libwebp version mismatch") }
        config.lossless = lossless ? 1 : 0
        config.quality = lossless ? 75 : Float(min(max(quality, 0), 100))
        guard let encoder = WebPAnimEncoderNew(Int32(width), Int32(height), &options) else { throw failure("WebPAnimEncoderNew failed") }
        defer { WebPAnimEncoderDelete(encoder) }
        var timestamp = 0
        for frame in animation.frames {
            var picture = WebPPicture()
            guard WebPPictureInit(&picture) != 0 else { throw failure("libwebp version mismatch") }
            picture.use_argb = 1
            picture.width = Int32(width)
            picture.height = Int32(height)
            let pixels = frame.image.copyPixels(as: ExportedPixelFormat(order: .bgra, premultiplied: false))
            let imported = pixels.withUnsafeBufferPointer { WebPPictureImportBGRA(&picture, $0.baseAddress, Int32(width * 4)) }
            defer { WebPPictureFree(&picture) }
            guard imported != 0 else { throw failure("WebPPictureImportBGRA failed") }
            guard WebPAnimEncoderAdd(encoder, &picture, Int32(clamping: timestamp), &config) != 0 else { throw failure(Self.error(encoder)) }
            timestamp += Self.milliseconds(frame.duration)
        }
        guard WebPAnimEncoderAdd(encoder, nil, Int32(clamping: timestamp), nil) != 0 else { throw failure(Self.error(encoder)) }
        var data = WebPData()
        WebPDataInit(&data)
        defer { WebPDataClear(&data) }
        guard WebPAnimEncoderAssemble(encoder, &data) != 0, let bytes = data.bytes else { throw failure(Self.error(encoder)) }
        return Array(UnsafeBufferPointer(start: bytes, count: data.size))
    }

    /// `duration` in whole milliseconds, rounded, at least 0.
    static func milliseconds(_ duration: Duration) -> Int {
        max(0, Int((duration.timeInterval * 1000).rounded()))
    }

    private static func error(_ encoder: OpaquePointer) -> String {
        WebPAnimEncoderGetError(encoder).map { String(cString: $0) } ?? "WebPAnimEncoder failed"
    }

    private func failure(_ message: String) -> TesseraError { TesseraError(.encoding(format: .webp, message: message)) }
}
