import CGIF

/// Decodes GIF with giflib: the first frame for still decoding, on a transparent canvas of the
/// logical screen size, and every frame through ``decodeAnimation(_:)`` (`GIFDecoder+Animation.swift`).
///
/// - The frame is placed at its offset and clipped to the screen; the rest of the canvas is
///   transparent (``PixelStyle/bgra32``) or black (``PixelStyle/bgr32``).
/// - The transparent colour index comes from the graphics control extension before the frame.
/// - Pixel indices beyond the colour map are drawn opaque black.
/// - Interlaced frames are read in the four-pass row order.
/// - Errors: giflib's read failures (data ran out) throw ``DecodingFailure/truncated(_:)``;
///   other giflib errors throw ``DecodingFailure/codec(_:message:)`` with `GifErrorString`.
public struct GIFDecoder: AnimatedImageDecoding {
    /// Limits checked before any pixel memory is allocated.
    public var limits: DecodingLimits

    /// Creates a decoder with `limits`.
    public init(limits: DecodingLimits = .default) { self.limits = limits }

    /// ``ImageFileFormat/gif``.
    public var format: ImageFileFormat { .gif }

    /// Reads the screen descriptor and the records up to the first frame's descriptor.
    public func probe(_ data: UnsafeRawBufferPointer) throws(TesseraError) -> ImageInfo {
        try withGIF(data) { (gif: UnsafeMutablePointer<GifFileType>) throws(TesseraError) -> ImageInfo in
            let frame = try firstFrame(gif)
            let screen = (width: Int(gif.pointee.SWidth), height: Int(gif.pointee.SHeight))
            let d = gif.pointee.Image
            let covers = d.Left <= 0 && d.Top <= 0 && Int(d.Left) + Int(d.Width) >= screen.width
                && Int(d.Top) + Int(d.Height) >= screen.height
            let frames = countFrames(gif)
            return ImageInfo(format: .gif, width: screen.width, height: screen.height,
                             hasAlpha: frame.transparentIndex >= 0 || !covers, frameCount: frames)
        }
    }

    /// Always the full screen size: GIF has no cheap scaled decode.
    public func decodedSize(for info: ImageInfo, atLeast target: PixelSize?) -> PixelSize { info.storedSize }

    /// ``PixelStyle/bgra32`` and ``PixelStyle/bgr32``.
    public func supportsDirectDecode(to style: PixelStyle) -> Bool { style == .bgra32 || style == .bgr32 }

    /// Decodes the first frame into `target`, which must have the screen size.
    @discardableResult
    public func decode(_ data: UnsafeRawBufferPointer, info: ImageInfo, into target: MutableBitmapView) throws(TesseraError) -> DecodeIntegrity {
        try decodePixels(data, info: info, into: target)
        return .intact
    }

    private func decodePixels(_ data: UnsafeRawBufferPointer, info: ImageInfo, into target: MutableBitmapView) throws(TesseraError) {
        try withGIF(data) { (gif: UnsafeMutablePointer<GifFileType>) throws(TesseraError) in
            let layout = target.layout
            guard supportsDirectDecode(to: layout.style), layout.width == Int(gif.pointee.SWidth),
                  layout.height == Int(gif.pointee.SHeight)
            else { throw TesseraError(.invalidLayout(width: layout.width, height: layout.height, bytesPerRow: layout.bytesPerRow)) }
            let frame = try firstFrame(gif)
            let d = gif.pointee.Image
            try limits.checkDimensions(width: Int(d.Width), height: Int(d.Height))
            guard let colorMap = d.ColorMap ?? gif.pointee.SColorMap else {
                throw TesseraError(.decoding(.codec(.gif, message: Self.message(D_GIF_ERR_NO_COLOR_MAP))))
            }
            let opaque = layout.style == .bgr32
            let palette = Self.palette(colorMap.pointee, transparentIndex: frame.transparentIndex, opaque: opaque)
            target.clear()
            if opaque { Self.fill(target, with: palette.background) }
            try Self.drawFrame(gif, palette: palette.colors, into: target)
        }
    }

    /// Reads the image data of the frame whose descriptor was just read and draws it at its offset,
    /// clipped to `target` (the screen); pixels of the transparent index leave `target` as it is.
    static func drawFrame(_ gif: UnsafeMutablePointer<GifFileType>, palette: [UInt32], into target: MutableBitmapView) throws(TesseraError) {
        let layout = target.layout
        let d = gif.pointee.Image
        let frameWidth = Int(d.Width), frameHeight = Int(d.Height)
        let left = Int(d.Left), top = Int(d.Top)
        // The visible columns of the frame, clipped to the screen.
        let firstColumn = max(0, -left), endColumn = min(frameWidth, layout.width - left)
        let line = UnsafeMutablePointer<GifPixelType>.allocate(capacity: frameWidth)
        defer { line.deallocate() }
        let passes: [(start: Int, step: Int)] = d.Interlace ? [(0, 8), (4, 8), (2, 4), (1, 2)] : [(0, 1)]
        for pass in passes {
            var row = pass.start
            while row < frameHeight {
                guard DGifGetLine(gif, line, Int32(frameWidth)) == GIF_OK else { throw Self.failure(gif.pointee.Error) }
                let y = top + row
                if y >= 0, y < layout.height, firstColumn < endColumn {
                    let out = target.row(y).assumingMemoryBound(to: UInt32.self)
                    for x in firstColumn..<endColumn {
                        let value = palette[Int(line[x])]
                        if value != Self.skip { out[left + x] = value }
                    }
                }
                row += pass.step
            }
        }
    }

    /// A palette entry meaning "leave the canvas as it is" (the transparent index).
    static let skip: UInt32 = 0x0000_0001

    /// 256 pixel values (little-endian BGRA words) for the frame's colour indices.
    static func palette(_ map: ColorMapObject, transparentIndex: Int, opaque: Bool) -> (colors: [UInt32], background: UInt32) {
        let black: UInt32 = 0xFF00_0000
        var colors = [UInt32](repeating: black, count: 256)
        if let entries = map.Colors {
            for i in 0..<min(256, max(0, Int(map.ColorCount))) {
                let c = entries[i]
                colors[i] = black | UInt32(c.Red) << 16 | UInt32(c.Green) << 8 | UInt32(c.Blue)
            }
        }
        if (0..<256).contains(transparentIndex) { colors[transparentIndex] = skip }
        return (colors, opaque ? black : 0)
    }

    static func fill(_ target: MutableBitmapView, with value: UInt32) {
        for y in 0..<target.layout.height {
            target.row(y).assumingMemoryBound(to: UInt32.self).update(repeating: value, count: target.layout.width)
        }
    }

    /// Reads records up to the first frame's descriptor (which it reads) and returns its control block.
    func firstFrame(_ gif: UnsafeMutablePointer<GifFileType>) throws(TesseraError) -> FrameControl {
        var loopCount: Int?
        guard let control = try nextFrame(gif, loopCount: &loopCount) else {
            throw TesseraError(.decoding(.codec(.gif, message: "the file has no image")))
        }
        return control
    }

    /// Where the read callback takes its bytes from.
    private struct Cursor {
        let base: UnsafePointer<UInt8>
        let count: Int
        var offset = 0
        /// Set when a read asked for more bytes than were left: the data ended early.
        var ranOut = false
    }

    /// Opens `data` with giflib, checks the screen size, runs `body` and always closes the file.
    func withGIF<R>(_ data: UnsafeRawBufferPointer,
                            _ body: (UnsafeMutablePointer<GifFileType>) throws(TesseraError) -> R) throws(TesseraError) -> R {
        try limits.checkInput(byteCount: data.count)
        guard let base = data.baseAddress?.assumingMemoryBound(to: UInt8.self) else { throw TesseraError(.decoding(.empty)) }
        var cursor = Cursor(base: base, count: data.count)
        return try withUnsafeMutablePointer(to: &cursor) { (cursorPointer) throws(TesseraError) -> R in
            var error: Int32 = 0
            // The callback captures nothing: it finds the cursor through GifFileType.UserData, which
            // stays valid for the whole of this closure, where every giflib call happens.
            // giflib sometimes names a cut-off file by what it failed to find ("no screen
            // descriptor"), so a codec error after a short read is reported as truncation.
            func classify(_ error: TesseraError) -> TesseraError {
                if cursorPointer.pointee.ranOut, case .decoding(.codec(.gif, _)) = error.reason {
                    return TesseraError(.decoding(.truncated(.gif)))
                }
                return error
            }
            guard let gif = DGifOpen(cursorPointer, { gif, buffer, length in GIFDecoder.read(gif, buffer, length) }, &error)
            else { throw classify(Self.failure(error)) }
            defer { var closeError: Int32 = 0; _ = DGifCloseFile(gif, &closeError) }
            do throws(TesseraError) {
                try limits.checkDimensions(width: Int(gif.pointee.SWidth), height: Int(gif.pointee.SHeight))
                return try body(gif)
            } catch {
                throw classify(error)
            }
        }
    }

    /// giflib's input function: copies up to `length` bytes from the cursor in `UserData`.
    private static func read(_ gif: UnsafeMutablePointer<GifFileType>?, _ buffer: UnsafeMutablePointer<GifByteType>?,
                             _ length: Int32) -> Int32 {
        guard let gif, let buffer, length > 0, let user = gif.pointee.UserData else { return 0 }
        let cursor = user.assumingMemoryBound(to: Cursor.self)
        let available = cursor.pointee.count - cursor.pointee.offset
        let n = min(Int(length), available)
        if n < Int(length) { cursor.pointee.ranOut = true }
        guard n > 0 else { return 0 }
        buffer.update(from: cursor.pointee.base + cursor.pointee.offset, count: n)
        cursor.pointee.offset += n
        return Int32(n)
    }

    static func failure(_ code: Int32) -> TesseraError {
        if code == D_GIF_ERR_READ_FAILED || code == D_GIF_ERR_EOF_TOO_SOON {
            return TesseraError(.decoding(.truncated(.gif)))
        }
        return TesseraError(.decoding(.codec(.gif, message: message(code))))
    }

    static func message(_ code: Int32) -> String {
        guard let text = GifErrorString(code) else { return "giflib error \(code)" }
        return String(cString: text)
    }
}
