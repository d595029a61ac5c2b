import Foundation

/// One decoder under fuzzing, every input under both decoding policies.
///
/// Lenient (``DecodingLimits``' default policy, what applications get): the codec type on its own
/// (probe, full-size and scaled decodes in every style it decodes directly, the animation decoder),
/// then the public ``ImageDecoder`` path restricted to that codec (sniffing, orientation, style
/// conversion and resampling into a small target).
///
/// Strict (same limits, ``DecodingPolicy/strict``): probe, full-size decode into memory with a tight
/// row stride that is exactly as large as the layout (no alignment slack, so a decoder that ignores
/// the stride it is given writes past the end and ASan reports it), the smallest scaled decode, the
/// animation decoder and the public path.
///
/// Invariants (a violation traps, which libFuzzer reports as a crash): decoding never crashes or
/// leaks; the size a decoder accepts is within its limits; a successful decode fills exactly the
/// layout it was given (ASan catches anything written outside it); a decode under the strict policy
/// never returns ``DecodeIntegrity/truncated`` (strict must throw instead), neither from a codec, nor
/// in an animation's frames, nor from ``ImageDecoder``; and whatever decodes under strict also decodes
/// under lenient (lenient accepts a superset), with the same probed size.
enum DecoderFuzzing {
    /// Smaller than the library's default (64 MP) so that each input decodes in milliseconds; the
    /// limit checks themselves are the same code. The policy is the default one, lenient.
    static let limits = DecodingLimits(maximumPixelCount: 4_000_000, maximumInputBytes: 1 << 20,
                                       maximumFrameCount: 64, maximumAnimationPixelCount: 16_000_000)

    /// ``limits`` with the strict policy.
    static let strictLimits: DecodingLimits = {
        var strict = limits
        strict.policy = .strict
        return strict
    }()

    static func codec(for format: ImageFileFormat, limits: DecodingLimits) -> any ImageDecoding {
        switch format {
        case .jpeg: JPEGDecoder(limits: limits)
        case .png: PNGDecoder(limits: limits)
        case .webp: WebPDecoder(limits: limits)
        case .gif: GIFDecoder(limits: limits)
        case .heic, .avif: HEIFDecoder(format: format, limits: limits)
        }
    }

    /// What the lenient pass decoded, for the strict pass to compare with.
    struct Outcome {
        var info: ImageInfo?
        var fullDecoded = false
        var animationDecoded = false
        var publicDecoded = false
    }

    static func run(_ bytes: UnsafeRawBufferPointer, format: ImageFileFormat) {
        precondition(limits.policy == .lenient, "the lenient pass must use the default policy")
        let lenient = runLenient(bytes, format: format)
        runStrict(bytes, format: format, lenient: lenient)
    }

    // MARK: Lenient (default policy)

    private static func runLenient(_ bytes: UnsafeRawBufferPointer, format: ImageFileFormat) -> Outcome {
        var outcome = Outcome()
        let codec = codec(for: format, limits: limits)
        if let info = try? codec.probe(bytes) {
            outcome.info = info
            checkProbe(info)
            let full = codec.decodedSize(for: info, atLeast: nil)
            outcome.fullDecoded = decode(bytes, codec: codec, info: info, size: full, style: .bgra32) != nil
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
            checkAnimation(animation, strict: false)
            outcome.animationDecoded = true
        }
        // Through the public decoder: a style and mode chosen from the input length (deterministic).
        outcome.publicDecoded = decodePublic(bytes, codec: codec, limits: limits) != nil
        return outcome
    }

    // MARK: Strict

    private static func runStrict(_ bytes: UnsafeRawBufferPointer, format: ImageFileFormat, lenient: Outcome) {
        let codec = codec(for: format, limits: strictLimits)
        if let info = try? codec.probe(bytes) {
            checkProbe(info)
            guard let lenientInfo = lenient.info else { preconditionFailure("strict probe accepted \(info.width)x\(info.height), lenient refused") }
            precondition(lenientInfo.width == info.width && lenientInfo.height == info.height,
                         "strict probe \(info.width)x\(info.height), lenient \(lenientInfo.width)x\(lenientInfo.height)")
            let full = codec.decodedSize(for: info, atLeast: nil)
            if let integrity = decodeTight(bytes, codec: codec, info: info, size: full) {
                checkStrict(integrity, "full-size decode")
                precondition(lenient.fullDecoded, "full-size decode succeeded under strict, failed under lenient")
            }
            let smallest = codec.decodedSize(for: info, atLeast: PixelSize(width: 1, height: 1))
            if let integrity = decode(bytes, codec: codec, info: info, size: smallest, style: .bgra32) {
                checkStrict(integrity, "smallest decode")
            }
        }
        if let animated = codec as? any AnimatedImageDecoding, let animation = try? animated.decodeAnimation(bytes) {
            checkAnimation(animation, strict: true)
            precondition(lenient.animationDecoded, "animation decoded under strict, not under lenient")
        }
        if let integrity = decodePublic(bytes, codec: codec, limits: strictLimits) {
            checkStrict(integrity, "ImageDecoder.decode(bytes:into:mode:)")
            precondition(lenient.publicDecoded, "ImageDecoder decoded under strict, not under lenient")
        }
    }

    // MARK: Checks and decodes

    private static func checkProbe(_ info: ImageInfo) {
        precondition(info.width > 0 && info.height > 0 && info.width * info.height <= limits.maximumPixelCount,
                     "probe accepted \(info.width)x\(info.height)")
    }

    private static func checkStrict(_ integrity: DecodeIntegrity, _ what: String) {
        precondition(integrity != .truncated, "\(what) returned .truncated under the strict policy (it must throw)")
    }

    private static func checkAnimation(_ animation: Animation, strict: Bool) {
        let pixels = animation.canvasSize.width * animation.canvasSize.height
        precondition(!animation.frames.isEmpty && animation.frames.count <= limits.maximumFrameCount
                     && pixels * animation.frames.count <= limits.maximumAnimationPixelCount,
                     "animation of \(animation.frames.count) frames of \(animation.canvasSize) accepted")
        if strict {
            for frame in animation.frames { checkStrict(frame.image.integrity, "animation frame") }
        }
    }

    /// Decodes into a new ``Bitmap``; the integrity the codec returned, nil if it threw.
    @discardableResult
    private static func decode(_ bytes: UnsafeRawBufferPointer, codec: any ImageDecoding, info: ImageInfo,
                               size: PixelSize, style: PixelStyle) -> DecodeIntegrity? {
        var integrity: DecodeIntegrity?
        _ = try? Bitmap(width: size.width, height: size.height, style: style) { (view: MutableBitmapView) throws(TesseraError) in
            integrity = try codec.decode(bytes, info: info, into: view)
        }
        return integrity
    }

    /// Decodes in BGRA into memory with the tightest stride a layout allows (4 bytes a pixel, no row
    /// alignment), allocated to exactly the layout's byte count.
    private static func decodeTight(_ bytes: UnsafeRawBufferPointer, codec: any ImageDecoding, info: ImageInfo,
                                    size: PixelSize) -> DecodeIntegrity? {
        guard let layout = try? BitmapLayout(width: size.width, height: size.height, style: .bgra32,
                                             bytesPerRow: size.width * PixelStyle.bgra32.bytesPerPixel) else { return nil }
        let memory = UnsafeMutableRawPointer.allocate(byteCount: layout.byteCount, alignment: 16)
        defer { memory.deallocate() }
        memory.initializeMemory(as: UInt8.self, repeating: 0, count: layout.byteCount)
        return try? codec.decode(bytes, info: info, into: MutableBitmapView(layout: layout, baseAddress: memory))
    }

    /// Through ``ImageDecoder`` with only `codec`, into a 23×17 target; the integrity, nil if it threw.
    private static func decodePublic(_ bytes: UnsafeRawBufferPointer, codec: any ImageDecoding, limits: DecodingLimits) -> DecodeIntegrity? {
        let decoder = ImageDecoder(limits: limits, decoders: [codec])
        let style = PixelStyle.allCases[bytes.count % PixelStyle.allCases.count]
        let mode: ContentMode = bytes.count & 4 == 0 ? .fill : .fit
        var integrity: DecodeIntegrity?
        _ = try? Bitmap(width: 23, height: 17, style: style) { (view: MutableBitmapView) throws(TesseraError) in
            integrity = try decoder.decode(bytes: bytes, into: view, mode: mode)
        }
        return integrity
    }
}
