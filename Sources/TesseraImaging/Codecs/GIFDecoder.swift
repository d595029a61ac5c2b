import CGIF

/// Decodes GIF with giflib: the first frame for still decoding, on a transparent canvas of the
/// logical screen size, and every frame through ``decodeAnimation(_:)`` (`GIFDecoder+Animation.swift`).
///
/// - The frame is placed at its offset and clipped to the screen; the rest of the canvas is
///   transparent (``PixelStyle/bgra32``) or black (``PixelStyle/bgr32``).
/// - The transparent colour index comes from the graphics control extension before the frame.
/// - Pixel indices beyond the colour map are drawn opaque black.
/// - A frame without a colour table (no local one, no global one) draws as Chromium draws it: every
///   index opaque black, the transparent index transparent. Under ``DecodingPolicy/lenient`` the
///   decode returns ``DecodeIntegrity/damaged``; under ``DecodingPolicy/strict`` it throws
///   ``/TesseraCore/DecodingFailure/codec(_:message:)`` with giflib's "no color map" message.
/// - Interlaced frames are read in the four-pass row order.
/// - Truncated files: a still decode needs only the first frame, so a file cut after it decodes
///   ``DecodeIntegrity/intact`` (``probe(_:)`` reports ``DecodeIntegrity/truncated`` for it). When the data
///   ends inside the first frame, under ``DecodingPolicy/lenient`` the rows read so far (`DGifGetLine`,
///   row by row; giflib reads whole data sub-blocks of up to 255 bytes, so the rows of a cut sub-block
///   are lost) are kept; for an interlaced frame each row read also stands for the rows below it up
///   to the next row read (8, 4, 2 rows for the first three passes), so "arrived" means every row of the
///   frame once its first pass is complete, otherwise 8 rows per first-pass row. The rest of the frame
///   stays as the canvas is outside it: transparent (black in ``PixelStyle/bgr32``). The decode returns
///   ``DecodeIntegrity/truncated``, or throws ``/TesseraCore/DecodingFailure/truncated(_:)`` when fewer rows than
///   ``DecodingLimits/minimumDecodedFraction`` of the frame's height arrived. Under
///   ``DecodingPolicy/strict`` it throws ``/TesseraCore/DecodingFailure/truncated(_:)``.
/// - Errors: giflib's read failures (data ran out) throw ``/TesseraCore/DecodingFailure/truncated(_:)``;
///   other giflib errors throw ``/TesseraCore/DecodingFailure/codec(_:message:)`` with `GifErrorString`.
public struct GIFDecoder: AnimatedImageDecoding {
    /// Limits checked before any pixel memory is allocated.
    public var limits: DecodingLimits

    /// Creates a decoder with `limits`.
    public init(limits: DecodingLimits = .default) { self.limits = limits }

    /// ``/TesseraCore/ImageFileFormat/gif``.
    public var format: ImageFileFormat { .gif }

    /// Reads the screen descriptor and the records up to the first frame's descriptor, then skips the
    /// compressed data of every frame (no pixels decoded) to count them. ``ImageInfo/integrity`` is
    /// ``DecodeIntegrity/truncated`` when the walk runs out of data before the trailer (0x3B), or stops at
    /// the frame-count limit in a file whose last byte is not the trailer.
    public func probe(_ data: UnsafeRawBufferPointer) throws(TesseraError) -> ImageInfo {
        try withGIF(data) { (gif: UnsafeMutablePointer<GifFileType>) throws(TesseraError) -> ImageInfo in
            let frame = try firstFrame(gif)
            let screen = (width: Int(gif.pointee.SWidth), height: Int(gif.pointee.SHeight))
            let d = gif.pointee.Image
            let covers = d.Left <= 0 && d.Top <= 0 && Int(d.Left) + Int(d.Width) >= screen.width
                && Int(d.Top) + Int(d.Height) >= screen.height
            let frames = countFrames(gif)
            let integrity: DecodeIntegrity = switch frames.end {
            case .trailer: .intact
            case .limit: data.last == 0x3B ? .intact : .truncated
            case .failure: Self.ranOut(gif) ? .truncated : .intact
            }
            return ImageInfo(format: .gif, width: screen.width, height: screen.height,
                             hasAlpha: frame.transparentIndex >= 0 || !covers, frameCount: frames.count, integrity: integrity)
        }
    }

    /// Always the full screen size: GIF has no cheap scaled decode.
    public func decodedSize(for info: ImageInfo, atLeast target: PixelSize?) -> PixelSize { info.storedSize }

    /// ``PixelStyle/bgra32`` and ``PixelStyle/bgr32``.
    public func supportsDirectDecode(to style: PixelStyle) -> Bool { style == .bgra32 || style == .bgr32 }

    /// Decodes the first frame into `target`, which must have the screen size. Returns
    /// ``DecodeIntegrity/damaged`` for a frame without a colour table and ``DecodeIntegrity/truncated`` for
    /// one whose data ends early (under ``DecodingPolicy/lenient``; see the type's notes).
    @discardableResult
    public func decode(_ data: UnsafeRawBufferPointer, info: ImageInfo, into target: MutableBitmapView) throws(TesseraError) -> DecodeIntegrity {
        try withGIF(data) { (gif: UnsafeMutablePointer<GifFileType>) throws(TesseraError) -> DecodeIntegrity in
            let layout = target.layout
            guard supportsDirectDecode(to: layout.style), layout.width == Int(gif.pointee.SWidth),
                  layout.height == Int(gif.pointee.SHeight)
            else { throw TesseraError(.invalidLayout(width: layout.width, height: layout.height, bytesPerRow: layout.bytesPerRow)) }
            let frame = try firstFrame(gif)
            let d = gif.pointee.Image
            try limits.checkDimensions(width: Int(d.Width), height: Int(d.Height))
            var integrity = DecodeIntegrity.intact
            let colorMap = d.ColorMap ?? gif.pointee.SColorMap
            if colorMap == nil { integrity = try limits.acceptDamage(Self.message(D_GIF_ERR_NO_COLOR_MAP), format: .gif) }
            let opaque = layout.style == .bgr32
            let palette = Self.palette(colorMap?.pointee, transparentIndex: frame.transparentIndex, opaque: opaque)
            target.clear()
            if opaque { Self.fill(target, with: palette.background) }
            var rowsRead = 0
            do throws(TesseraError) {
                try Self.drawFrame(gif, palette: palette.colors, into: target, rowsRead: &rowsRead)
            } catch {
                let truncated: Bool
                if case .decoding(.truncated(.gif)) = error.reason { truncated = true } else { truncated = Self.ranOut(gif) }
                guard truncated, limits.policy == .lenient else { throw error }
                let arrived = Self.completeRows(gif, rowsRead: rowsRead, in: target)
                _ = try limits.acceptTruncation(decodedRows: arrived, of: Int(d.Height), format: .gif)
                integrity = .truncated
            }
            return integrity
        }
    }

    /// After the data of the frame just described ran out when `rowsRead` rows had been read: for an
    /// interlaced frame, copies each row read (its visible part, on the canvas) down over the rows of the
    /// later passes below it that did not arrive, until the next row read. Returns the frame rows that
    /// have pixels: those read (plain frame), or 8 per first-pass row read until that pass is complete and
    /// then every row (interlaced).
    static func completeRows(_ gif: UnsafeMutablePointer<GifFileType>, rowsRead: Int, in target: MutableBitmapView) -> Int {
        let d = gif.pointee.Image
        let height = Int(d.Height)
        guard d.Interlace else { return min(rowsRead, height) }
        var arrived = [Bool](repeating: false, count: height)
        var left = rowsRead, firstPass = 0
        let passes: [(start: Int, step: Int)] = [(0, 8), (4, 8), (2, 4), (1, 2)]
        for (index, pass) in passes.enumerated() {
            var row = pass.start
            while row < height, left > 0 {
                arrived[row] = true
                if index == 0 { firstPass += 1 }
                row += pass.step; left -= 1
            }
        }
        let layout = target.layout
        let left0 = max(0, Int(d.Left)), right = min(layout.width, Int(d.Left) + Int(d.Width))
        var source: Int?
        for row in 0..<height {
            if arrived[row] { source = row; continue }
            let y = Int(d.Top) + row
            guard let from = source, left0 < right, y >= 0, y < layout.height else { continue }
            let sourceY = Int(d.Top) + from
            guard sourceY >= 0 else { continue }
            (target.row(y) + left0 * 4).copyMemory(from: target.row(sourceY) + left0 * 4, byteCount: (right - left0) * 4)
        }
        return firstPass >= (height + 7) / 8 ? height : min(height, firstPass * 8)
    }

    /// Whether giflib asked for more bytes than `data` had (set by the read callback).
    static func ranOut(_ gif: UnsafeMutablePointer<GifFileType>) -> Bool {
        guard let user = gif.pointee.UserData else { return false }
        return user.assumingMemoryBound(to: Cursor.self).pointee.ranOut
    }

    /// Reads the image data of the frame whose descriptor was just read and draws it at its offset,
    /// clipped to `target` (the screen); pixels of the transparent index leave `target` as it is.
    /// `rowsRead` counts the rows read, in the file's order, so that a caller knows how far a failed read got.
    static func drawFrame(_ gif: UnsafeMutablePointer<GifFileType>, palette: [UInt32], into target: MutableBitmapView,
                          rowsRead: inout Int) throws(TesseraError) {
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
                rowsRead += 1
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

    /// 256 pixel values (little-endian BGRA words) for the frame's colour indices: the map's colours,
    /// opaque black for indices beyond it and for every index when there is no map (what Chromium draws),
    /// and ``skip`` for the transparent index.
    static func palette(_ map: ColorMapObject?, transparentIndex: Int, opaque: Bool) -> (colors: [UInt32], background: UInt32) {
        let black: UInt32 = 0xFF00_0000
        var colors = [UInt32](repeating: black, count: 256)
        if let map, let entries = map.Colors {
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
