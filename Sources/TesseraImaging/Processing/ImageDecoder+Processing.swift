import Foundation

extension ImageDecoder {
    /// Why ``render(_:processing:limits:)`` failed: the processing (or the source size it met, or the
    /// output it asked for) was refused, or the image could not be probed, decoded or drawn. Kept apart
    /// so that a service can answer the first as the client's mistake and the second as the image's.
    public enum RenderError: Error, Sendable, Equatable, CustomStringConvertible {
        /// ``ImageProcessing/validate(_:)`` or ``ImageProcessing/geometry(for:limits:)`` refused: a
        /// parameter out of range, a source side beyond 1,048,576 pixels (`source`), or a canvas beyond
        /// ``ImageProcessing/Limits/maximumOutputPixels`` (`output`).
        case invalid(ImageProcessing.Invalid)
        /// The decoder's error (unsupported format, limits, damage under the strict policy…) or cairo's.
        case failed(TesseraError)

        /// The wrapped error's description.
        public var description: String {
            switch self {
            case .invalid(let invalid): "invalid processing: \(invalid)"
            case .failed(let error): error.description
            }
        }
    }

    /// Decodes `data` and applies `processing` to it: a new premultiplied ``PixelStyle/bgra32`` bitmap of
    /// ``ImageProcessing/outputSize(of:)`` (the geometry's canvas, turned, padded). The order of operations:
    ///
    /// 1. The processing is validated against `limits`, then the header probed; the
    ///    ``ProcessingGeometry`` is worked out for the display size (EXIF orientation applied), on the region
    ///    ``ImageProcessing/crop`` or ``ImageProcessing/cropBox`` cuts out.
    /// 2. The image is decoded once, through the codec's cheap downscale, at the smallest size it
    ///    supports that still gives the crop at least the placement's size (the display size scaled by
    ///    placement ÷ crop on each axis, never more than the stored size); with ``ImageProcessing/trim``, at
    ///    full size, turned upright.
    /// 3. A crop with ``ImageProcessing/Gravity/smart`` keeps its size and ``SmartCrop`` moves it; then
    ///    ``ImageProcessing/trim`` shrinks the region to what lies inside its border, and the
    ///    geometry is worked out again on the region as it now is.
    /// 4. For ``ImageProcessing/Gravity/smart`` in ``ContentMode/fill`` and ``ContentMode/fillDown``
    ///    (on the whole source: inside a crop or a trim the smart gravity is the centre) the crop keeps its
    ///    size and ``SmartCrop`` chooses its position on the decoded pixels.
    /// 5. The crop of the upright image is drawn into ``ProcessingGeometry/placement`` (cairo, box
    ///    filter); the rest of the canvas (pad's bars) is ``ImageProcessing/background``.
    /// 6. ``ImageProcessing/blur`` blurs the drawn image (not the bars) at output size (``Bitmap/blurred(sigma:)``'s method).
    /// 7. ``ImageProcessing/rotation`` turns and ``ImageProcessing/flip`` mirrors the result
    ///    (``Bitmap/oriented(_:)`` with ``ImageProcessing/outputOrientation``): 90 and 270 swap its sides.
    /// 8. ``ImageProcessing/padding`` surrounds it with ``ImageProcessing/background``.
    /// 9. The effects, on the whole output (padding included), in this order: ``ImageProcessing/sharpen``
    ///    (an unsharp mask), ``ImageProcessing/pixelate``, ``ImageProcessing/grayscale``.
    /// 10. ``ImageProcessing/watermark``, drawn over everything (``render(_:processing:limits:watermark:)``
    ///    gives its pixels; here there are none, so a processing with a watermark is refused).
    ///
    /// The result carries the decode's ``Bitmap/integrity``. Transparent sources stay transparent;
    /// ``Bitmap/flattened(onto:)`` puts them on the background for formats without alpha.
    public func render(_ data: Data, processing: ImageProcessing,
                       limits: ImageProcessing.Limits = .init()) throws(RenderError) -> Bitmap {
        try render(data, processing: processing, limits: limits, watermark: nil)
    }

    /// ``render(_:processing:limits:)`` with the pixels of ``ImageProcessing/watermark`` (any style; drawn
    /// by the rules of ``ImageProcessing/Watermark``). A processing with a watermark and no `watermark`
    /// image, or whose repeated watermark would take more than
    /// ``ImageProcessing/Limits/maximumWatermarkTiles`` tiles, is refused (``ImageProcessing/Parameter/watermark``).
    public func render(_ data: Data, processing: ImageProcessing, limits: ImageProcessing.Limits = .init(),
                       watermark: Bitmap?) throws(RenderError) -> Bitmap {
        let result: Result<Bitmap, RenderError> = data.withUnsafeBytes { bytes in
            do throws(RenderError) { return .success(try render(bytes: bytes, processing: processing, limits: limits, watermark: watermark)) } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// ``render(_:processing:limits:)`` on raw bytes.
    public func render(bytes: UnsafeRawBufferPointer, processing: ImageProcessing,
                       limits: ImageProcessing.Limits = .init()) throws(RenderError) -> Bitmap {
        try render(bytes: bytes, processing: processing, limits: limits, watermark: nil)
    }

    /// ``render(_:processing:limits:watermark:)`` on raw bytes.
    public func render(bytes: UnsafeRawBufferPointer, processing: ImageProcessing, limits: ImageProcessing.Limits = .init(),
                       watermark: Bitmap?) throws(RenderError) -> Bitmap {
        try Self.check(processing, limits: limits, watermark: watermark)
        let (decoder, info) = try Self.failing { () throws(TesseraError) in try probe(bytes: bytes) }
        let display = info.displaySize
        let (geometry, region) = try Self.plan(processing, display: display, limits: limits)
        let crop = geometry.crop, placement = geometry.placement
        let needed = processing.trim != nil ? display : PixelSize(
            width: min(display.width, max(1, Int((Double(display.width) * placement.width / crop.width).rounded(.up)))),
            height: min(display.height, max(1, Int((Double(display.height) * placement.height / crop.height).rounded(.up)))))
        let stored = decoder.decodedSize(for: info, atLeast: info.orientation.swapsAxes ? needed.transposed : needed)
        let raw = try Self.failing { () throws(TesseraError) in
            var integrity = DecodeIntegrity.intact
            var bitmap = try Bitmap(width: stored.width, height: stored.height, style: .bgra32) { (view) throws(TesseraError) in
                integrity = try decoder.decode(bytes, info: info, into: view)
            }
            bitmap.integrity = integrity
            return bitmap
        }
        let settled = try settle(raw, orientation: info.orientation, display: display, region: region, geometry: geometry,
                                 processing: processing, limits: limits)
        return try compose(settled.raw, orientation: settled.orientation, display: display, geometry: settled.geometry,
                           processing: processing, limits: limits, watermark: watermark)
    }

    /// Step 1's checks: `processing` valid under `limits`, and a watermark's pixels given when it asks for one.
    static func check(_ processing: ImageProcessing, limits: ImageProcessing.Limits, watermark: Bitmap?) throws(RenderError) {
        do throws(ImageProcessing.Invalid) { try processing.validate(limits) } catch { throw .invalid(error) }
        if let mark = processing.watermark, watermark == nil {
            throw .invalid(ImageProcessing.Invalid(parameter: .watermark, message: "no image for watermark '\(mark.name)'"))
        }
    }

    /// Step 1's geometry for a source of `display` size, and the region its crop or crop box cuts out.
    static func plan(_ processing: ImageProcessing, display: PixelSize,
                     limits: ImageProcessing.Limits) throws(RenderError) -> (ProcessingGeometry, Rect) {
        do throws(ImageProcessing.Invalid) {
            return (try processing.geometry(for: display, limits: limits), try processing.sourceRegion(in: display))
        } catch {
            throw .invalid(error)
        }
    }

    /// Steps 3 and 4: the smart crop's and the trim's decisions on `raw` (the display image stored turned
    /// by `orientation`), and the geometry worked out again on the region they leave. With a trim, `raw`
    /// (decoded at full size) comes back upright.
    func settle(_ raw: Bitmap, orientation: ImageOrientation, display: PixelSize, region: Rect, geometry: ProcessingGeometry,
                processing: ImageProcessing, limits: ImageProcessing.Limits)
        throws(RenderError) -> (raw: Bitmap, orientation: ImageOrientation, geometry: ProcessingGeometry) {
        var raw = raw, orientation = orientation, region = region, geometry = geometry
        if processing.crop?.gravity == .smart || processing.trim != nil {
            if processing.crop?.gravity == .smart {
                region = try Self.failing { () throws(TesseraError) in
                    try SmartCrop.place(region, in: display, image: raw, orientation: orientation)
                }
                region = Rect(x: region.x.rounded(.down), y: region.y.rounded(.down), width: region.width, height: region.height)
            }
            if let threshold = processing.trim {
                // Decoded at full size (needed = display), so the upright pixels are the display's.
                raw = raw.oriented(orientation)
                orientation = .up
                region = Trim.box(in: raw, region: region, threshold: threshold)
            }
            do throws(ImageProcessing.Invalid) { geometry = try processing.geometry(of: region, limits: limits) } catch {
                throw .invalid(error)
            }
        }
        if processing.gravity == .smart, processing.mode == .fill || processing.mode == .fillDown, region == Rect(size: display) {
            geometry.crop = try Self.failing { () throws(TesseraError) in
                try SmartCrop.place(geometry.crop, in: display, image: raw, orientation: orientation)
            }
        }
        return (raw, orientation, geometry)
    }

    /// Steps 5 to 10 on `raw` with the settled `geometry`: drawn, blurred, turned, padded, the effects, the
    /// watermark. The result carries `raw`'s integrity.
    func compose(_ raw: Bitmap, orientation: ImageOrientation, display: PixelSize, geometry: ProcessingGeometry,
                 processing: ImageProcessing, limits: ImageProcessing.Limits, watermark: Bitmap?) throws(RenderError) -> Bitmap {
        var output = try draw(raw, orientation: orientation, display: display, geometry: geometry, processing: processing)
        output.integrity = raw.integrity
        output = output.oriented(processing.outputOrientation)
        guard processing.padding != nil || processing.hasEffects || processing.watermark != nil else { return output }
        if let mark = processing.watermark, let watermark {
            let tiles = mark.tileCount(of: watermark.layout.size, on: processing.padding?.padded(output.layout.size) ?? output.layout.size)
            guard tiles <= limits.maximumWatermarkTiles else {
                throw .invalid(ImageProcessing.Invalid(parameter: .watermark, message: "\(tiles) tiles are more than \(limits.maximumWatermarkTiles)"))
            }
        }
        return try Self.failing { () throws(TesseraError) in try processing.finished(output, watermark: watermark) }
    }

    /// Step 5 and 6 of ``render(_:processing:limits:)``: the crop of `raw` (the display image, stored
    /// turned by `orientation`, at any scale) drawn into the placement on a canvas of the background, then
    /// blurred.
    private func draw(_ raw: Bitmap, orientation: ImageOrientation, display: PixelSize, geometry: ProcessingGeometry,
                      processing: ImageProcessing) throws(RenderError) -> Bitmap {
        // The crop in the decoded image's upright pixels.
        let decoded = orientation.displaySize(of: raw.layout.size)
        let kx = Double(decoded.width) / Double(display.width), ky = Double(decoded.height) / Double(display.height)
        let source = Rect(x: geometry.crop.x * kx, y: geometry.crop.y * ky,
                          width: geometry.crop.width * kx, height: geometry.crop.height * ky)
        let canvas = geometry.canvas, placement = geometry.placement
        return try Self.failing { () throws(TesseraError) in
            try Bitmap(width: canvas.width, height: canvas.height, style: .bgra32) { (view) throws(TesseraError) in
                let context = try DrawingContext(target: view)
                if placement != Rect(size: canvas) {
                    context.clear(to: processing.background.color)
                    context.withSavedState {
                        context.clip(toRoundedRect: placement, radius: 0)
                        context.clear(to: .clear)
                    }
                }
                try context.draw(raw, from: source, in: placement, orientation: orientation)
                context.flush()
                if let sigma = processing.blur, sigma > 0 {
                    GaussianBlur.apply(sigma: sigma, to: view,
                                       region: (Int(placement.x), Int(placement.y), Int(placement.width), Int(placement.height)))
                }
            }
        }
    }

    /// `body`'s result, its ``/TesseraCore/TesseraError`` wrapped as ``RenderError/failed(_:)``.
    static func failing<R>(_ body: () throws(TesseraError) -> R) throws(RenderError) -> R {
        do throws(TesseraError) { return try body() } catch { throw .failed(error) }
    }
}
