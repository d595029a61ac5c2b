import CCairo

/// A cairo image surface over pixels Tessera describes with a ``BitmapLayout``.
///
/// Styles cairo can address directly (``PixelStyle/bgra32`` = `ARGB32`, ``PixelStyle/bgr32`` = `RGB24`,
/// ``PixelStyle/bgr565`` = `RGB16_565`) are wrapped without a copy. ``PixelStyle/gray8`` has no cairo
/// equivalent, so it goes through a temporary `ARGB32` buffer (`scratch`).
final class CairoSurface {
    let surface: OpaquePointer
    /// Owned ARGB32 buffer standing in for gray8 pixels, or `nil` when cairo uses the pixels directly.
    let scratch: UnsafeMutableRawPointer?
    let scratchLayout: BitmapLayout?

    /// Wraps `pixels`. With `copyIn` a gray8 source is converted into the scratch buffer first.
    init(pixels: UnsafeMutableRawPointer, layout: BitmapLayout, copyIn: Bool) throws(TesseraError) {
        let format: cairo_format_t
        var base = pixels
        var stride = layout.bytesPerRow
        switch layout.style {
        case .bgra32: format = CAIRO_FORMAT_ARGB32
        case .bgr32: format = CAIRO_FORMAT_RGB24
        case .bgr565: format = CAIRO_FORMAT_RGB16_565
        case .gray8: format = CAIRO_FORMAT_ARGB32
        }
        if layout.style == .gray8 {
            let wide = BitmapLayout(width: layout.width, height: layout.height, style: .bgra32)
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: wide.byteCount, alignment: PixelStyle.rowAlignment)
            if copyIn {
                for y in 0..<layout.height {
                    PixelConversion.toBGRA(pixels + y * layout.bytesPerRow, style: .gray8,
                                           to: buffer + y * wide.bytesPerRow, width: layout.width)
                }
            } else {
                buffer.initializeMemory(as: UInt8.self, repeating: 0, count: wide.byteCount)
            }
            scratch = buffer
            scratchLayout = wide
            base = buffer
            stride = wide.bytesPerRow
        } else {
            scratch = nil
            scratchLayout = nil
        }
        let s = cairo_image_surface_create_for_data(base.assumingMemoryBound(to: UInt8.self), format,
                                                     Int32(layout.width), Int32(layout.height), Int32(stride))!
        let status = cairo_surface_status(s)
        guard status == CAIRO_STATUS_SUCCESS else {
            cairo_surface_destroy(s)
            scratch?.deallocate()
            throw TesseraError(.drawing(message: String(cString: cairo_status_to_string(status))))
        }
        surface = s
    }

    /// Writes the scratch buffer back to gray8 `pixels` (Rec. 601 luma of the composited colour).
    func writeBack(to pixels: UnsafeMutableRawPointer, layout: BitmapLayout) {
        cairo_surface_flush(surface)
        guard let scratch, let wide = scratchLayout else { return }
        for y in 0..<layout.height {
            PixelConversion.fromBGRA(scratch + y * wide.bytesPerRow, to: pixels + y * layout.bytesPerRow,
                                     style: .gray8, width: layout.width)
        }
    }

    /// Tells cairo that `pixels` changed behind its back (converting them into the scratch buffer again
    /// for gray8), so that later drawing composites over them.
    func reload(from pixels: UnsafeMutableRawPointer, layout: BitmapLayout) {
        if let scratch, let wide = scratchLayout {
            for y in 0..<layout.height {
                PixelConversion.toBGRA(pixels + y * layout.bytesPerRow, style: .gray8,
                                       to: scratch + y * wide.bytesPerRow, width: layout.width)
            }
        }
        cairo_surface_mark_dirty(surface)
    }

    deinit {
        cairo_surface_destroy(surface)
        scratch?.deallocate()
    }
}
