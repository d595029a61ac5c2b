import CGIF

extension GIFDecoder {
    /// Every frame on the logical screen: each drawn over what the previous frame's disposal left
    /// (`0`/`1` keep it, `2` clears the frame's rectangle to transparent, as browsers do rather than
    /// painting the background colour, `3` restores the canvas from before the frame), with its delay
    /// and the NETSCAPE2.0 repeat count. The frame count and the pixels over all frames are checked
    /// against the limits before each frame is allocated. A frame without a colour table draws every
    /// index opaque black (the transparent index transparent), as Chromium does, under
    /// ``DecodingPolicy/lenient``; under ``DecodingPolicy/strict`` it throws ``/TesseraCore/DecodingFailure/codec(_:message:)``.
    /// Data that ends before the trailer throws ``/TesseraCore/DecodingFailure/truncated(_:)`` under either policy.
    public func decodeAnimation(_ data: UnsafeRawBufferPointer) throws(TesseraError) -> Animation {
        try withGIF(data) { (gif: UnsafeMutablePointer<GifFileType>) throws(TesseraError) -> Animation in
            let width = Int(gif.pointee.SWidth), height = Int(gif.pointee.SHeight)
            let layout = BitmapLayout(width: width, height: height, style: .bgra32)
            let canvasMemory = UnsafeMutableRawPointer.allocate(byteCount: layout.byteCount, alignment: 64)
            defer { canvasMemory.deallocate() }
            let canvas = MutableBitmapView(layout: layout, baseAddress: canvasMemory)
            canvas.clear()
            var saved: [UInt8] = []
            var frames: [Animation.Frame] = []
            var loopCount: Int?
            while let control = try nextFrame(gif, loopCount: &loopCount) {
                try limits.checkAnimation(frames: frames.count + 1, width: width, height: height)
                let d = gif.pointee.Image
                try limits.checkDimensions(width: Int(d.Width), height: Int(d.Height))
                let colorMap = d.ColorMap ?? gif.pointee.SColorMap
                if colorMap == nil { _ = try limits.acceptDamage(Self.message(D_GIF_ERR_NO_COLOR_MAP), format: .gif) }
                if control.disposal == DISPOSE_PREVIOUS {
                    saved = [UInt8](UnsafeRawBufferPointer(start: canvasMemory, count: layout.byteCount))
                }
                let palette = Self.palette(colorMap?.pointee, transparentIndex: control.transparentIndex, opaque: false)
                var rowsRead = 0
                try Self.drawFrame(gif, palette: palette.colors, into: canvas, rowsRead: &rowsRead)
                let image = Bitmap(layout: layout) { $0.baseAddress.copyMemory(from: canvasMemory, byteCount: layout.byteCount) }
                frames.append(Animation.Frame(image: image, duration: .milliseconds(10 * control.delay)))
                switch control.disposal {
                case DISPOSE_BACKGROUND: Self.clear(frameOf: d, in: canvas)
                case DISPOSE_PREVIOUS: saved.withUnsafeBytes { canvasMemory.copyMemory(from: $0.baseAddress!, byteCount: layout.byteCount) }
                default: break
                }
            }
            guard !frames.isEmpty else { throw TesseraError(.decoding(.codec(.gif, message: "the file has no image"))) }
            return Animation(canvasSize: PixelSize(width: width, height: height), frames: frames, loopCount: loopCount)
        }
    }

    /// What the graphics control extension says about the next frame.
    struct FrameControl {
        var transparentIndex = Int(NO_TRANSPARENT_COLOR)
        var disposal = Int32(DISPOSAL_UNSPECIFIED)
        /// Hundredths of a second.
        var delay = 0
    }

    /// Reads records up to and including the next image descriptor and returns its control block, or
    /// `nil` at the trailer. Notes the NETSCAPE2.0 repeat count in `loopCount`.
    func nextFrame(_ gif: UnsafeMutablePointer<GifFileType>, loopCount: inout Int?) throws(TesseraError) -> FrameControl? {
        var control = FrameControl()
        while true {
            var type = UNDEFINED_RECORD_TYPE
            guard DGifGetRecordType(gif, &type) == GIF_OK else { throw Self.failure(gif.pointee.Error) }
            switch type {
            case IMAGE_DESC_RECORD_TYPE:
                guard DGifGetImageDesc(gif) == GIF_OK else { throw Self.failure(gif.pointee.Error) }
                let d = gif.pointee.Image
                guard d.Width > 0, d.Height > 0 else {
                    throw TesseraError(.decoding(.invalidDimensions(width: Int(d.Width), height: Int(d.Height))))
                }
                return control
            case EXTENSION_RECORD_TYPE:
                var code: Int32 = 0
                var block: UnsafeMutablePointer<GifByteType>? = nil
                guard DGifGetExtension(gif, &code, &block) == GIF_OK else { throw Self.failure(gif.pointee.Error) }
                var index = 0, netscape = false
                while let current = block {
                    // current[0] is the sub-block's length, its bytes follow.
                    let length = Int(current[0])
                    if index == 0, code == GRAPHICS_EXT_FUNC_CODE {
                        var gcb = GraphicsControlBlock()
                        if DGifExtensionToGCB(length, current + 1, &gcb) == GIF_OK {
                            control = FrameControl(transparentIndex: Int(gcb.TransparentColor), disposal: gcb.DisposalMode,
                                                   delay: Int(gcb.DelayTime))
                        }
                    } else if index == 0, code == APPLICATION_EXT_FUNC_CODE, length == 11 {
                        netscape = Array(UnsafeBufferPointer(start: current + 1, count: 11)) == Array("NETSCAPE2.0".utf8)
                    } else if index == 1, netscape, length >= 3, current[1] == 1 {
                        loopCount = Int(current[2]) | Int(current[3]) << 8
                    }
                    index += 1
                    guard DGifGetExtensionNext(gif, &block) == GIF_OK else { throw Self.failure(gif.pointee.Error) }
                }
            case TERMINATE_RECORD_TYPE:
                return nil
            default:
                throw TesseraError(.decoding(.codec(.gif, message: Self.message(D_GIF_ERR_WRONG_RECORD))))
            }
        }
    }

    /// Where ``countFrames(_:)`` stopped.
    enum FrameWalkEnd {
        /// At the trailer.
        case trailer
        /// After ``DecodingLimits/maximumFrameCount`` + 1 frames.
        case limit
        /// At a damaged record or the end of the data.
        case failure
    }

    /// Frames in the file, counted from the descriptor just read by skipping each frame's compressed
    /// data without decoding it; stops after ``DecodingLimits/maximumFrameCount`` + 1 and at the first
    /// damaged record (a probe reports what a viewer could show), and says where it stopped.
    func countFrames(_ gif: UnsafeMutablePointer<GifFileType>) -> (count: Int, end: FrameWalkEnd) {
        var count = 1
        var loopCount: Int?
        while count <= limits.maximumFrameCount {
            guard skipImageData(gif) else { return (count, .failure) }
            do throws(TesseraError) {
                guard try nextFrame(gif, loopCount: &loopCount) != nil else { return (count, .trailer) }
            } catch {
                return (count, .failure)
            }
            count += 1
        }
        return (count, .limit)
    }

    /// Skips the compressed data of the frame whose descriptor was just read.
    private func skipImageData(_ gif: UnsafeMutablePointer<GifFileType>) -> Bool {
        var size: Int32 = 0
        var block: UnsafeMutablePointer<GifByteType>? = nil
        guard DGifGetCode(gif, &size, &block) == GIF_OK else { return false }
        while block != nil {
            guard DGifGetCodeNext(gif, &block) == GIF_OK else { return false }
        }
        return true
    }

    /// Clears the frame's rectangle, clipped to the canvas, to transparent.
    static func clear(frameOf d: GifImageDesc, in canvas: MutableBitmapView) {
        let layout = canvas.layout
        let x0 = max(0, Int(d.Left)), x1 = min(layout.width, Int(d.Left) + Int(d.Width))
        let y0 = max(0, Int(d.Top)), y1 = min(layout.height, Int(d.Top) + Int(d.Height))
        guard x0 < x1, y0 < y1 else { return }
        for y in y0..<y1 { (canvas.row(y) + x0 * 4).initializeMemory(as: UInt8.self, repeating: 0, count: (x1 - x0) * 4) }
    }
}
