import CCairo

/// A 2D drawing context over any pixel memory — an owned ``Bitmap`` being built or a slot of a
/// memory-mapped image table — backed by cairo.
///
/// Create one with ``DrawingContext/draw(into:_:)`` (which flushes when the closure returns) or
/// ``init(target:)`` followed by ``flush()``. Drawing is not thread-safe; use one context per thread.
/// For ``PixelStyle/gray8`` targets drawing happens in a temporary 32-bit surface that ``flush()``
/// converts back to luminance.
public final class DrawingContext {
    /// Size, style and stride of the target pixels.
    public let layout: BitmapLayout
    /// The raw `cairo_t *`, for anything this type does not wrap (paths, text, gradients…).
    /// Do not destroy it; call ``flush()`` when done.
    public let cairo: OpaquePointer
    private let target: MutableBitmapView
    private let surface: CairoSurface

    /// Opens a context over `target`. Its current pixels are kept (drawing composites over them).
    public init(target: MutableBitmapView) throws(TesseraError) {
        self.layout = target.layout
        self.target = target
        self.surface = try CairoSurface(pixels: target.baseAddress, layout: target.layout, copyIn: true)
        let cr = cairo_create(surface.surface)!
        let status = cairo_status(cr)
        guard status == CAIRO_STATUS_SUCCESS else {
            cairo_destroy(cr)
            throw TesseraError(.drawing(message: String(cString: cairo_status_to_string(status))))
        }
        cairo = cr
    }

    /// Runs `body` with a context over `target` and flushes the result into `target`'s memory.
    public static func draw<R>(into target: MutableBitmapView, _ body: (DrawingContext) throws -> R) throws -> R {
        let context = try DrawingContext(target: target)
        let result = try body(context)
        context.flush()
        return result
    }

    deinit { cairo_destroy(cairo) }

    /// The size of the target in pixels.
    public var size: PixelSize { layout.size }
    /// The whole target as a rectangle.
    public var bounds: Rect { Rect(size: layout.size) }

    /// Makes every pixel drawn so far visible in the target memory (converting from the temporary
    /// surface for gray8). Call before reading the pixels.
    public func flush() {
        surface.writeBack(to: target.baseAddress, layout: layout)
    }

    /// Runs `body` with the target's memory, for bytes that drawing cannot express (a record of what a
    /// slot holds, say). Everything drawn so far is flushed into the target first, and what `body`
    /// writes is what later drawing composites over (for ``PixelStyle/gray8`` targets the temporary
    /// surface is loaded again from the target).
    public func withTargetPixels<R>(_ body: (MutableBitmapView) throws -> R) rethrows -> R {
        flush()
        defer { surface.reload(from: target.baseAddress, layout: layout) }
        return try body(target)
    }

    /// Sets every pixel (inside the current clip) to `color`, replacing what was there. Styles
    /// without alpha get `color` composited over black (so ``PixelStyle/bgr32`` keeps its unused byte
    /// at 255).
    public func clear(to color: Color = .clear) {
        cairo_save(cairo)
        if layout.style.hasAlpha {
            cairo_set_operator(cairo, CAIRO_OPERATOR_SOURCE)
            setSource(color)
        } else {
            // An opaque colour drawn OVER replaces what is there, and pixman then writes the unused
            // byte as 255 (SOURCE would write it as 0).
            setSource(Color(red: color.red * color.alpha, green: color.green * color.alpha, blue: color.blue * color.alpha))
        }
        cairo_paint(cairo)
        cairo_restore(cairo)
    }

    /// Paints `rect` (or everything inside the clip) with `color`, blending over what is there.
    public func fill(_ rect: Rect? = nil, with color: Color) {
        setSource(color)
        if let rect {
            cairo_rectangle(cairo, rect.x, rect.y, rect.width, rect.height)
            cairo_fill(cairo)
        } else {
            cairo_paint(cairo)
        }
    }

    /// Draws `image` into `rect`, placed by `mode`, turned upright by `orientation`, at `alpha`.
    ///
    /// Downscaling uses cairo's `CAIRO_FILTER_GOOD`, which is a box filter over every covered source
    /// pixel (high quality at any ratio), with `CAIRO_EXTEND_PAD` so that edges do not fade into
    /// transparency. Parts of `image` falling outside `rect` (``ContentMode/fill``) are cropped.
    public func draw(_ image: some BitmapImage, in rect: Rect, mode: ContentMode = .stretch,
                     orientation: ImageOrientation = .up, alpha: Double = 1) throws(TesseraError) {
        let stored = image.layout.size
        let shown = orientation.displaySize(of: stored)
        let placed = mode.placement(of: shown, in: rect)
        let visible = placed.intersection(rect)
        guard visible.width > 0, visible.height > 0 else { return }
        try paint(image, from: Rect(size: shown), in: placed, clip: visible, orientation: orientation, alpha: alpha)
    }

    /// Draws the part `source` of `image` stretched to exactly `rect`. `source` is in the image's upright
    /// coordinates (after `orientation`; fractional values allowed), so a crop worked out on the displayed
    /// image applies unchanged to pixels stored turned.
    ///
    /// Filtering is as in ``draw(_:in:mode:orientation:alpha:)`` (`CAIRO_FILTER_GOOD`, `CAIRO_EXTEND_PAD`):
    /// pixels just outside `source` take part in the filtering at its edges, as they do when cropping a
    /// larger image, and nothing is drawn outside `rect`.
    public func draw(_ image: some BitmapImage, from source: Rect, in rect: Rect,
                     orientation: ImageOrientation = .up, alpha: Double = 1) throws(TesseraError) {
        guard source.width > 0, source.height > 0, rect.width > 0, rect.height > 0 else { return }
        try paint(image, from: source, in: rect, clip: rect, orientation: orientation, alpha: alpha)
    }

    /// The one cairo paint of both `draw`s: `source` (upright coordinates) of `image` stretched to `rect`,
    /// only inside `clip`, with the filter and edge mode they document.
    private func paint(_ image: some BitmapImage, from source: Rect, in rect: Rect, clip: Rect,
                       orientation: ImageOrientation, alpha: Double) throws(TesseraError) {
        let stored = image.layout.size
        try image.withUnsafeBytes { (bytes) throws(TesseraError) in
            // cairo only reads from a source surface; it never writes through this pointer.
            let surface = try CairoSurface(pixels: UnsafeMutableRawPointer(mutating: bytes.baseAddress!),
                                           layout: image.layout, copyIn: true)
            cairo_save(cairo)
            cairo_rectangle(cairo, clip.x, clip.y, clip.width, clip.height)
            cairo_clip(cairo)
            cairo_translate(cairo, rect.x, rect.y)
            cairo_scale(cairo, rect.width / source.width, rect.height / source.height)
            cairo_translate(cairo, -source.x, -source.y)
            let pattern = cairo_pattern_create_for_surface(surface.surface)!
            var matrix = Self.orientationMatrix(orientation, stored: stored)
            cairo_pattern_set_matrix(pattern, &matrix)
            cairo_pattern_set_filter(pattern, CAIRO_FILTER_GOOD)
            cairo_pattern_set_extend(pattern, CAIRO_EXTEND_PAD)
            cairo_set_source(cairo, pattern)
            if alpha >= 1 { cairo_paint(cairo) } else { cairo_paint_with_alpha(cairo, alpha) }
            cairo_pattern_destroy(pattern)
            cairo_restore(cairo)
            withExtendedLifetime(surface) {}
        }
    }

    /// Draws `overlay` (a badge, a frame, a play symbol…) over what is there, placed by `mode`.
    public func drawOverlay(_ overlay: some BitmapImage, in rect: Rect, mode: ContentMode = .fit,
                            alpha: Double = 1) throws(TesseraError) {
        try draw(overlay, in: rect, mode: mode, alpha: alpha)
    }

    /// Limits further drawing to a rounded rectangle (intersected with the current clip).
    public func clip(toRoundedRect rect: Rect, radius: Double) {
        let r = max(0, min(radius, rect.width / 2, rect.height / 2))
        cairo_new_path(cairo)
        if r == 0 {
            cairo_rectangle(cairo, rect.x, rect.y, rect.width, rect.height)
        } else {
            cairo_arc(cairo, rect.maxX - r, rect.y + r, r, -Double.pi / 2, 0)
            cairo_arc(cairo, rect.maxX - r, rect.maxY - r, r, 0, Double.pi / 2)
            cairo_arc(cairo, rect.x + r, rect.maxY - r, r, Double.pi / 2, Double.pi)
            cairo_arc(cairo, rect.x + r, rect.y + r, r, Double.pi, 3 * Double.pi / 2)
            cairo_close_path(cairo)
        }
        cairo_clip(cairo)
    }

    /// Limits further drawing to the ellipse inscribed in `rect` (a circle when `rect` is square).
    public func clip(toEllipseIn rect: Rect) {
        cairo_new_path(cairo)
        cairo_save(cairo)
        cairo_translate(cairo, rect.x + rect.width / 2, rect.y + rect.height / 2)
        cairo_scale(cairo, rect.width / 2, rect.height / 2)
        cairo_arc(cairo, 0, 0, 1, 0, 2 * Double.pi)
        cairo_restore(cairo)
        cairo_clip(cairo)
    }

    /// Removes every clip.
    public func resetClip() { cairo_reset_clip(cairo) }

    /// Runs `body` and then restores the clip, transform and source in effect before it.
    public func withSavedState<R>(_ body: () throws -> R) rethrows -> R {
        cairo_save(cairo)
        defer { cairo_restore(cairo) }
        return try body()
    }

    private func setSource(_ color: Color) {
        cairo_set_source_rgba(cairo, color.red, color.green, color.blue, color.alpha)
    }

    /// The pattern matrix mapping displayed (upright) coordinates to stored pixel coordinates.
    static func orientationMatrix(_ orientation: ImageOrientation, stored: PixelSize) -> cairo_matrix_t {
        let w = Double(stored.width), h = Double(stored.height)
        var m = cairo_matrix_t()
        // cairo_matrix_init(m, xx, yx, xy, yy, x0, y0): sx = xx·x + xy·y + x0, sy = yx·x + yy·y + y0.
        switch orientation {
        case .up: cairo_matrix_init(&m, 1, 0, 0, 1, 0, 0)
        case .upMirrored: cairo_matrix_init(&m, -1, 0, 0, 1, w, 0)
        case .down: cairo_matrix_init(&m, -1, 0, 0, -1, w, h)
        case .downMirrored: cairo_matrix_init(&m, 1, 0, 0, -1, 0, h)
        case .leftMirrored: cairo_matrix_init(&m, 0, 1, 1, 0, 0, 0)
        case .right: cairo_matrix_init(&m, 0, -1, 1, 0, 0, h)
        case .rightMirrored: cairo_matrix_init(&m, 0, -1, -1, 0, w, h)
        case .left: cairo_matrix_init(&m, 0, 1, -1, 0, w, 0)
        }
        return m
    }
}
