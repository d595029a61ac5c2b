import CGIF
@_spi(Internal) import TesseraCore

/// Encodes GIF with giflib: a still image as one frame, an ``Animation`` frame by frame
/// (`encode(_:)` given an ``Animation``).
///
/// - Colours: each frame gets its own palette from giflib's median-cut quantizer (`GifQuantizeBuffer`,
///   on the un-premultiplied colours): 256 colours for an opaque frame, 255 and a transparent index 255
///   for a frame with transparent pixels; each entry is then the mean of the pixels mapped to it (giflib
///   works in 5 bits per channel), so an image of few colours keeps them exactly. GIF has one bit of alpha: a pixel under half opacity is
///   transparent, any other opaque.
/// - Frames are whole canvases (``Animation`` composites them), so each is written at (0, 0) at the
///   canvas's size. When any frame has transparent pixels every frame is disposed to the background
///   (transparent) before the next, so a transparent pixel shows what lies under the image, not the
///   previous frame; otherwise each frame is left in place.
/// - Durations are written in hundredths of a second (rounded; at most 655.35 s); the loop count as a
///   `NETSCAPE2.0` application extension when the animation has one (its stored number, `0` for ever).
///
/// Memory: an un-premultiplied copy of every frame (`width × height × 4` bytes each), and the channel and
/// index planes of one frame (`width × height × 4` bytes) besides the output.
public struct GIFEncoder: ImageEncoding {
    /// Creates an encoder.
    public init() {}

    /// ``/TesseraCore/ImageFileFormat/gif``.
    public var format: ImageFileFormat { .gif }

    /// Encodes `image` as a one-frame GIF.
    public func encode(_ image: some BitmapImage) throws(TesseraError) -> [UInt8] {
        try write(width: image.width, height: image.height,
                  frames: [(image.copyPixels(as: ExportedPixelFormat(order: .rgba, premultiplied: false)), 0)], loopCount: nil)
    }

    /// Encodes every frame of `animation` (each at the canvas's size) with its duration and the loop count.
    public func encode(_ animation: Animation) throws(TesseraError) -> [UInt8] {
        let size = animation.canvasSize
        guard animation.frames.allSatisfy({ $0.image.width == size.width && $0.image.height == size.height }) else {
            throw failure("every frame must have the canvas's size, \(size.width)×\(size.height)")
        }
        let frames = animation.frames.map {
            ($0.image.copyPixels(as: ExportedPixelFormat(order: .rgba, premultiplied: false)), Self.hundredths($0.duration))
        }
        return try write(width: size.width, height: size.height, frames: frames, loopCount: animation.loopCount)
    }

    /// The file of `frames` (un-premultiplied RGBA of `width` × `height`, and a delay in hundredths of a second).
    private func write(width: Int, height: Int, frames: [(rgba: [UInt8], delay: Int)], loopCount: Int?) throws(TesseraError) -> [UInt8] {
        guard width >= 1, height >= 1, width <= 65_535, height <= 65_535, !frames.isEmpty else {
            throw failure("GIF holds 1…65535 pixels per side and at least one frame, not \(width)×\(height)")
        }
        let sink = GIFSink()
        var status: Int32 = 0
        guard let file = EGifOpen(Unmanaged.passUnretained(sink).toOpaque(), { file, data, length in
            guard let file, let data, let user = file.pointee.UserData else { return 0 }
            Unmanaged<GIFSink>.fromOpaque(user).takeUnretainedValue().bytes.append(contentsOf: UnsafeBufferPointer(start: data, count: Int(length)))
            return length
        }, &status) else { throw failure("EGifOpen failed (\(status))") }
        var open: UnsafeMutablePointer<GifFileType>? = file
        defer { if let open { EGifCloseFile(open, &status) } }
        EGifSetGifVersion(file, true)
        try check(EGifPutScreenDesc(file, Int32(width), Int32(height), 8, 0, nil), file)
        if let loops = loopCount, frames.count > 1 {
            let count = UInt16(clamping: loops)
            try check(EGifPutExtensionLeader(file, APPLICATION_EXT_FUNC_CODE), file)
            try check(Array("NETSCAPE2.0".utf8).withUnsafeBytes { EGifPutExtensionBlock(file, 11, $0.baseAddress) }, file)
            try check([UInt8(1), UInt8(count & 0xFF), UInt8(count >> 8)].withUnsafeBytes { EGifPutExtensionBlock(file, 3, $0.baseAddress) }, file)
            try check(EGifPutExtensionTrailer(file), file)
        }
        let transparent = frames.contains { frame in stride(from: 3, to: frame.rgba.count, by: 4).contains { frame.rgba[$0] < 128 } }
        for frame in frames {
            try put(frame.rgba, width: width, height: height, delay: frame.delay, transparent: transparent, file: file)
        }
        let closed = EGifCloseFile(file, &status)
        open = nil
        guard closed == GIF_OK else { throw failure("EGifCloseFile failed (\(Self.message(status)))") }
        withExtendedLifetime(sink) {}
        return sink.bytes
    }

    /// One frame: its graphic control extension, then its quantized pixels with a local colour map.
    private func put(_ rgba: [UInt8], width: Int, height: Int, delay: Int, transparent: Bool,
                     file: UnsafeMutablePointer<GifFileType>) throws(TesseraError) {
        let count = width * height
        var red = [UInt8](repeating: 0, count: count), green = red, blue = red, indices = red
        for i in 0..<count { red[i] = rgba[4 * i]; green[i] = rgba[4 * i + 1]; blue[i] = rgba[4 * i + 2] }
        guard let map = GifMakeMapObject(256, nil) else { throw failure("cannot allocate a colour map") }
        defer { GifFreeMapObject(map) }
        var colours: Int32 = transparent ? 255 : 256
        let quantized = GifQuantizeBuffer(UInt32(width), UInt32(height), &colours, &red, &green, &blue, &indices, map.pointee.Colors)
        guard quantized == GIF_OK else { throw failure("GifQuantizeBuffer failed") }
        // giflib's palette is built from 5 bits per channel (white comes out 248, 248, 248): each entry
        // becomes the mean of the 8-bit colours of the pixels mapped to it.
        var sums = [Int](repeating: 0, count: 256 * 4)
        for i in 0..<count where !transparent || rgba[4 * i + 3] >= 128 {
            let entry = Int(indices[i]) * 4
            sums[entry] += Int(red[i]); sums[entry + 1] += Int(green[i]); sums[entry + 2] += Int(blue[i]); sums[entry + 3] += 1
        }
        for entry in 0..<256 where sums[entry * 4 + 3] > 0 {
            let n = sums[entry * 4 + 3]
            map.pointee.Colors[entry] = GifColorType(Red: UInt8((sums[entry * 4] + n / 2) / n), Green: UInt8((sums[entry * 4 + 1] + n / 2) / n),
                                                     Blue: UInt8((sums[entry * 4 + 2] + n / 2) / n))
        }
        if transparent {
            for i in 0..<count where rgba[4 * i + 3] < 128 { indices[i] = 255 }
        }
        var control = GraphicsControlBlock(DisposalMode: transparent ? DISPOSE_BACKGROUND : DISPOSE_DO_NOT, UserInputFlag: false,
                                           DelayTime: Int32(delay), TransparentColor: transparent ? 255 : NO_TRANSPARENT_COLOR)
        var extensionBytes = [UInt8](repeating: 0, count: 4)
        let length = EGifGCBToExtension(&control, &extensionBytes)
        try check(EGifPutExtension(file, GRAPHICS_EXT_FUNC_CODE, Int32(length), extensionBytes), file)
        try check(EGifPutImageDesc(file, 0, 0, Int32(width), Int32(height), false, map), file)
        try indices.withUnsafeMutableBufferPointer { (buffer) throws(TesseraError) in
            for y in 0..<height { try check(EGifPutLine(file, buffer.baseAddress! + y * width, Int32(width)), file) }
        }
    }

    /// `duration` in hundredths of a second, rounded, within GIF's 16 bits.
    static func hundredths(_ duration: Duration) -> Int {
        Int(min(max((duration.timeInterval * 100).rounded(), 0), 65_535))
    }

    private func check(_ result: Int32, _ file: UnsafeMutablePointer<GifFileType>) throws(TesseraError) {
        guard result == GIF_OK else { throw failure("giflib: \(Self.message(file.pointee.Error))") }
    }

    private static func message(_ code: Int32) -> String { GifErrorString(code).map { String(cString: $0) } ?? "error \(code)" }

    private func failure(_ message: String) -> TesseraError { TesseraError(.encoding(format: .gif, message: message)) }
}

/// The bytes giflib writes, appended by its output function.
private final class GIFSink {
    var bytes: [UInt8] = []
}
