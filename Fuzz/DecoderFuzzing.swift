import Foundation

/// One decoder under fuzzing: the codec type on its own (probe, full-size and scaled decodes, for any
/// bytes, magic or not), then the public ``ImageDecoder`` path restricted to that codec (sniffing,
/// orientation, style conversion and resampling into a small target).
///
/// Invariants (a violation traps, which libFuzzer reports as a crash): decoding never crashes or
/// leaks; the size a decoder accepts is within its limits; a successful decode fills exactly the
/// layout it was given (ASan catches anything written outside it).
enum DecoderFuzzing {
    /// Smaller than the library's default (64 MP) so that each input decodes in milliseconds; the
    /// limit checks themselves are the same code.
    static let limits = DecodingLimits(maximumPixelCount: 4_000_000, maximumInputBytes: 1 << 20,
                                       maximumFrameCount: 64, maximumAnimationPixelCount: 16_000_000)

    static func codec(for format: ImageFileFormat) -> any ImageDecoding {
        switch format {
        case .jpeg: JPEGDecoder(limits: limits)
        case .png: PNGDecoder(limits: limits)
        case .webp: WebPDecoder(limits: limits)
        case .gif: GIFDecoder(limits: limits)
        case .heic, .avif: HEIFDecoder(format: format, limits: limits)
        }
    }

    static func run(_ bytes: UnsafeRawBufferPointer, format: ImageFileFormat) {
        let codec = codec(for: format)
        if let info = try? codec.probe(bytes) {
            precondition(info.width > 0 && info.height > 0 && info.width * info.height <= limits.maximumPixelCount,
                         "probe accepted \(info.width)x\(info.height)")
            let full = codec.decodedSize(for: info, atLeast: nil)
            decode(bytes, codec: codec, info: info, size: full, style: .bgra32)
            let small = codec.decodedSize(for: info, atLeast: PixelSize(width: max(1, info.width / 5), height: max(1, info.height / 5)))
            precondition(small.width <= full.width && small.height <= full.height, "scaled size \(small) above \(full)")
            for style in PixelStyle.allCases where style != .bgra32 && codec.supportsDirectDecode(to: style) {
                decode(bytes, codec: codec, info: info, size: small, style: style)
            }
            // The smallest cheap size (JPEG 1/8: the DC-only and progressive scan-skipping paths; PNG: the
            // largest box factor), in BGRA and gray.
            let smallest = codec.decodedSize(for: info, atLeast: PixelSize(width: 1, height: 1))
            decode(bytes, codec: codec, info: info, size: smallest, style: .bgra32)
            if codec.supportsDirectDecode(to: .gray8) { decode(bytes, codec: codec, info: info, size: smallest, style: .gray8) }
        }
        // Every frame of an animation (GIF and WebP): within the frame and pixel limits.
        if let animated = codec as? any AnimatedImageDecoding, let animation = try? animated.decodeAnimation(bytes) {
            let pixels = animation.canvasSize.width * animation.canvasSize.height
            precondition(!animation.frames.isEmpty && animation.frames.count <= limits.maximumFrameCount
                         && pixels * animation.frames.count <= limits.maximumAnimationPixelCount,
                         "animation of \(animation.frames.count) frames of \(animation.canvasSize) accepted")
        }
        // Through the public decoder: a style and mode chosen from the input length (deterministic).
        let decoder = ImageDecoder(limits: limits, decoders: [codec])
        let style = PixelStyle.allCases[bytes.count % PixelStyle.allCases.count]
        let mode: ContentMode = bytes.count & 4 == 0 ? .aspectFill : .aspectFit
        _ = try? Bitmap(width: 23, height: 17, style: style) { (view: MutableBitmapView) throws(TesseraError) in
            try decoder.decode(bytes: bytes, into: view, mode: mode)
        }
    }

    private static func decode(_ bytes: UnsafeRawBufferPointer, codec: any ImageDecoding, info: ImageInfo,
                               size: PixelSize, style: PixelStyle) {
        _ = try? Bitmap(width: size.width, height: size.height, style: style) { (view: MutableBitmapView) throws(TesseraError) in
            try codec.decode(bytes, info: info, into: view)
        }
    }
}
