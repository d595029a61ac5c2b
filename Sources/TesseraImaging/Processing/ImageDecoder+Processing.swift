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
    /// the geometry's ``ProcessingGeometry/canvas``.
    ///
    /// 1. The processing is validated against `limits`, then the header probed; the
    ///    ``ProcessingGeometry`` is worked out for the display size (EXIF orientation applied).
    /// 2. The image is decoded once, through the codec's cheap downscale, at the smallest size it
    ///    supports that still gives the crop at least the placement's size (the display size scaled by
    ///    placement ÷ crop on each axis, never more than the stored size).
    /// 3. For ``ImageProcessing/Gravity/smart`` in ``ContentMode/fill`` and
    ///    ``ContentMode/fillDown`` the crop keeps its size and ``SmartCrop`` chooses its position
    ///    on the decoded pixels.
    /// 4. The crop of the upright image is drawn into ``ProcessingGeometry/placement`` (cairo, box
    ///    filter); the rest of the canvas (pad's bars) is ``ImageProcessing/background``.
    /// 5. ``ImageProcessing/blur`` blurs the drawn image (not the bars) at output size (``Bitmap/blurred(sigma:)``'s method).
    /// 6. ``ImageProcessing/rotation`` turns and ``ImageProcessing/flip`` mirrors the result
    ///    (``Bitmap/oriented(_:)`` with ``ImageProcessing/outputOrientation``): 90 and 270 swap its sides.
    ///
    /// The result carries the decode's ``Bitmap/integrity``. Transparent sources stay transparent;
    /// ``Bitmap/flattened(onto:)`` puts them on the background for formats without alpha.
    public func render(_ data: Data, processing: ImageProcessing,
                       limits: ImageProcessing.Limits = .init()) throws(RenderError) -> Bitmap {
        let result: Result<Bitmap, RenderError> = data.withUnsafeBytes { bytes in
            do throws(RenderError) { return .success(try render(bytes: bytes, processing: processing, limits: limits)) } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// ``render(_:processing:limits:)`` on raw bytes.
    public func render(bytes: UnsafeRawBufferPointer, processing: ImageProcessing,
                       limits: ImageProcessing.Limits = .init()) throws(RenderError) -> Bitmap {
        do throws(ImageProcessing.Invalid) { try processing.validate(limits) } catch { throw .invalid(error) }
        let (decoder, info) = try Self.failing { () throws(TesseraError) in try probe(bytes: bytes) }
        let display = info.displaySize
        var geometry: ProcessingGeometry
        do throws(ImageProcessing.Invalid) { geometry = try processing.geometry(for: display, limits: limits) } catch {
            throw .invalid(error)
        }
        let crop = geometry.crop, placement = geometry.placement
        let needed = PixelSize(
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
        if processing.gravity == .smart, processing.mode == .fill || processing.mode == .fillDown {
            geometry.crop = try Self.failing { () throws(TesseraError) in
                try SmartCrop.place(crop, in: display, image: raw, orientation: info.orientation)
            }
        }
        // The crop in the decoded image's upright pixels.
        let decoded = info.orientation.displaySize(of: stored)
        let kx = Double(decoded.width) / Double(display.width), ky = Double(decoded.height) / Double(display.height)
        let source = Rect(x: geometry.crop.x * kx, y: geometry.crop.y * ky,
                          width: geometry.crop.width * kx, height: geometry.crop.height * ky)
        let canvas = geometry.canvas
        var output = try Self.failing { () throws(TesseraError) in
            try Bitmap(width: canvas.width, height: canvas.height, style: .bgra32) { (view) throws(TesseraError) in
                let context = try DrawingContext(target: view)
                if placement != Rect(size: canvas) {
                    context.clear(to: processing.background.color)
                    context.withSavedState {
                        context.clip(toRoundedRect: placement, radius: 0)
                        context.clear(to: .clear)
                    }
                }
                try context.draw(raw, from: source, in: placement, orientation: info.orientation)
                context.flush()
                if let sigma = processing.blur, sigma > 0 {
                    GaussianBlur.apply(sigma: sigma, to: view,
                                       region: (Int(placement.x), Int(placement.y), Int(placement.width), Int(placement.height)))
                }
            }
        }
        output.integrity = raw.integrity
        return output.oriented(processing.outputOrientation)
    }

    /// `body`'s result, its ``/TesseraCore/TesseraError`` wrapped as ``RenderError/failed(_:)``.
    private static func failing<R>(_ body: () throws(TesseraError) -> R) throws(RenderError) -> R {
        do throws(TesseraError) { return try body() } catch { throw .failed(error) }
    }
}
