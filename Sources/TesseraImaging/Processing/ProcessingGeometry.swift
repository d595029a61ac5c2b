/// Where an ``ImageProcessing`` takes a source's pixels from and puts them: the output ``canvas``, the
/// ``crop`` of the source that is used, and the ``placement`` it is scaled into. Pure arithmetic on sizes, in
/// the source's display orientation (after EXIF rotation). Rendering is: fill the canvas with the
/// background where ``placement`` does not cover it, then draw ``crop`` scaled into ``placement``.
///
/// The rules, with a 4000×3000 photo unless said otherwise (sizes are rounded half up and at least 1):
/// - ``ImageProcessing/dpr`` multiplies width and height first: `w=300, dpr=2` is a 600-pixel width.
/// - Width or height alone keeps the source's aspect ratio in every mode: `w=300` gives 300×225,
///   `h=100` gives 133×100 (4000 × 100/3000 = 133.3). Neither gives the source's size (times the DPR).
/// - ``ContentMode/fit``: the largest size with the source's aspect ratio inside the box:
///   300×300 gives 300×225 (scale min(300/4000, 300/3000) = 0.075).
/// - ``ContentMode/fill``: the box exactly; the crop is the box's aspect ratio at the covering
///   scale: 300×300 scales by max(0.075, 0.1) = 0.1, so the crop is 3000×3000, at x = (4000 − 3000) × ½ = 500
///   for the centre, 0 for west, 1000 for east (y is 0: the crop spans the source's height).
/// - ``ContentMode/fillDown``: ``ContentMode/fill`` into a box that, when the source is
///   smaller than it on either side, is first shrunk by min(W/w, H/h) keeping its aspect ratio: a 200×100
///   source in 300×300 gives 100×100 (the box times ⅓), cropped from x = 50. It never enlarges, whatever
///   ``ImageProcessing/enlarge`` says.
/// - ``ContentMode/stretch``: the box exactly, the whole source stretched: 300×300.
/// - ``ContentMode/pad``: the box exactly, the ``ContentMode/fit`` image placed in it by
///   the gravity's compass point, at whole pixels (the free space times 0, ½ or 1, rounded down): 300×300
///   places 300×225 at (0, 37) for the centre, (0, 0) for north, (0, 75) for south.
/// - ``ContentMode/cover``: the smallest size with the source's aspect ratio that covers the box, uncropped:
///   300×300 gives 400×300 (scale max(0.075, 0.1) = 0.1). thumbor's `full-fit-in`.
/// - ``ImageProcessing/adaptive``: a box of the other orientation than the source's is turned first:
///   300×400 (portrait) for the landscape photo is 400×300, so fit gives 400×300. thumbor's `adaptive-`.
///
/// With ``ImageProcessing/enlarge`` off (the default), no mode draws the image larger than the source:
/// - fit and pad: the scale is at most 1 (a 200×100 source in 300×300: fit gives 200×100; pad keeps the
///   300×300 canvas and places 200×100 at (50, 100));
/// - fill: the covering scale is at most 1 and the canvas is the box cut to the scaled source, as imgproxy
///   does: a 200×100 source in 300×300 gives 200×100, uncropped (the box's aspect ratio is lost — keeping it
///   is what ``ContentMode/fillDown`` is for); in 300×50 it gives 200×50 cropped at scale 1;
/// - force: each side at most the source's (200×100 in 300×50 gives 200×50);
/// - one side only: the scale is at most 1 (`w=8000` gives 4000×3000).
///
/// Gravity in fill: a compass point puts the crop at that edge or corner, centred along the other axis
/// (north: top edge, centred horizontally; south-east: bottom-right corner). A focal point (x, y) centres the
/// crop on (x·W, y·H), moved back inside the source where it would stick out: for 3000×3000 in 4000×3000,
/// x = 0.9 asks for 3600 − 1500 = 2100 and gets 1000. ``ImageProcessing/Gravity/smart`` is the centre here
/// (geometry has no pixels); ``ImageDecoder/render(_:processing:limits:)`` keeps the crop's size and moves it
/// with ``SmartCrop``. In pad, focal points and smart place the image in the centre.
public struct ProcessingGeometry: Sendable, Hashable, CustomStringConvertible {
    /// The output size in pixels.
    public var canvas: PixelSize
    /// The part of the source that is drawn, in source pixels (display orientation). Not rounded: its
    /// aspect ratio is exactly the placement's (except in force), so one scale maps it.
    public var crop: Rect
    /// Where ``crop`` is drawn on the canvas, in whole pixels: the whole canvas, except in pad.
    public var placement: Rect

    /// Creates a geometry.
    public init(canvas: PixelSize, crop: Rect, placement: Rect) {
        self.canvas = canvas
        self.crop = crop
        self.placement = placement
    }

    /// `"canvas WxH, crop (x, y, w×h) → (x, y, w×h)"`.
    public var description: String { "canvas \(canvas), crop \(crop) → \(placement)" }
}

extension ImageProcessing {
    /// The geometry of this processing applied to a `source`-sized image (display orientation), by the rules
    /// of ``ProcessingGeometry``, on the region ``sourceRegion(in:)`` cuts out (the whole source without
    /// ``crop`` or ``cropBox``): the crop rectangle is in the source's pixels either way. Throws ``Invalid``
    /// when the value fails ``validate(_:)``, when `source` is not 1…1,048,576 on each side (`source`), for
    /// a crop box outside the source (`crop`), and when the output (``outputSize(of:)``: the canvas turned
    /// and padded) has more than ``Limits/maximumOutputPixels`` (`output`).
    public func geometry(for source: PixelSize, limits: Limits = Limits()) throws(Invalid) -> ProcessingGeometry {
        try validate(limits)
        guard limits.sourceSideRange.contains(source.width), limits.sourceSideRange.contains(source.height) else {
            throw Invalid(parameter: .source, message: "\(source) is not \(limits.sourceSideRange) pixels on each side")
        }
        return try geometry(of: try sourceRegion(in: source), limits: limits)
    }

    /// The geometry of this processing applied to `region` (whole pixels of the source) as if it were the
    /// whole source, with the crop moved by the region's origin; the output-pixel limit checked as in
    /// ``geometry(for:limits:)``. What the render calls again once a trim or a smart crop has moved or
    /// shrunk the region.
    func geometry(of region: Rect, limits: Limits) throws(Invalid) -> ProcessingGeometry {
        var processing = self
        if case .focalPixel(let x, let y) = gravity {   // a point of the source: a fraction of the region, inside it
            processing.gravity = .focalPoint(x: min(max((Double(x) - region.x) / region.width, 0), 1),
                                             y: min(max((Double(y) - region.y) / region.height, 0), 1))
        }
        var geometry = processing.resolved(PixelSize(width: Int(region.width), height: Int(region.height)))
        geometry.crop.x += region.x
        geometry.crop.y += region.y
        let output = outputSize(of: geometry)
        guard output.pixelCount <= limits.maximumOutputPixels else {
            throw Invalid(parameter: .output, message: "\(output) is more than \(limits.maximumOutputPixels) output pixels")
        }
        return geometry
    }

    /// The size of the image the render returns for `geometry`: its canvas, with the sides swapped by a
    /// quarter ``rotation``, then ``padding`` around it.
    public func outputSize(of geometry: ProcessingGeometry) -> PixelSize { outputSize(ofCanvas: geometry.canvas) }

    /// The output size for a canvas of `canvas`: its sides swapped by a quarter ``rotation``, then
    /// ``padding`` around it.
    public func outputSize(ofCanvas canvas: PixelSize) -> PixelSize {
        let turned = outputOrientation.swapsAxes ? canvas.transposed : canvas
        return padding?.padded(turned) ?? turned
    }

    /// The largest output any source can give when both ``width`` and ``height`` are set: the box in output
    /// pixels (``scaledWidth`` × ``scaledHeight``: no canvas exceeds it), swapped by a quarter
    /// ``rotation``, with ``padding`` around it; `nil` when a side is left to the source, for ``ContentMode/cover``
    /// (which overflows the box) and for an ``adaptive`` box. What a table's slot must hold.
    public var maximumOutputSize: PixelSize? {
        guard let width = scaledWidth, let height = scaledHeight, mode != .cover, !adaptive else { return nil }
        return outputSize(ofCanvas: PixelSize(width: width, height: height))
    }

    /// ``width`` in output pixels: times ``dpr``, rounded half up (`width: 300, dpr: 1.5` is 450). No
    /// canvas is wider, in any mode; `nil` when no width is given.
    public var scaledWidth: Int? { width.map { Self.times(dpr, $0) } }

    /// ``height`` in output pixels, as ``scaledWidth`` is the width: no canvas is taller.
    public var scaledHeight: Int? { height.map { Self.times(dpr, $0) } }

    private func resolved(_ source: PixelSize) -> ProcessingGeometry {
        let sw = Double(source.width), sh = Double(source.height)
        guard let w = width, let h = height else {
            let scale = width.map { Double(Self.times(dpr, $0)) / sw } ?? height.map { Double(Self.times(dpr, $0)) / sh } ?? dpr
            let s = enlarge ? scale : min(scale, 1)
            return Self.uncropped(source, canvas: PixelSize(width: Self.side(sw * s), height: Self.side(sh * s)))
        }
        var box = PixelSize(width: Self.times(dpr, w), height: Self.times(dpr, h))
        if adaptive, (source.width < source.height && box.width > box.height) || (source.width > source.height && box.width < box.height) {
            box = box.transposed
        }
        switch mode {
        case .fit:
            return Self.uncropped(source, canvas: Self.fitted(source, in: box, enlarge: enlarge))
        case .fill:
            return filled(source, box: box, enlarge: enlarge)
        case .fillDown:
            return filled(source, box: Self.shrunk(box, into: source), enlarge: false)
        case .stretch:
            let canvas = enlarge ? box : PixelSize(width: min(box.width, source.width), height: min(box.height, source.height))
            return Self.uncropped(source, canvas: canvas)
        case .cover:
            let cover = max(Double(box.width) / sw, Double(box.height) / sh)
            let s = enlarge ? cover : min(cover, 1)
            return Self.uncropped(source, canvas: PixelSize(width: Self.side(sw * s), height: Self.side(sh * s)))
        case .pad:
            let image = Self.fitted(source, in: box, enlarge: enlarge)
            let (fx, fy) = gravity.compassFractions
            let x = (Double(box.width - image.width) * fx).rounded(.down)
            let y = (Double(box.height - image.height) * fy).rounded(.down)
            return ProcessingGeometry(canvas: box, crop: Rect(size: source),
                                      placement: Rect(x: x, y: y, width: Double(image.width), height: Double(image.height)))
        }
    }

    /// The covering scale (at most 1 without `enlarge`), the canvas cut to the scaled source, and the crop
    /// of the canvas's aspect ratio placed in the source by the gravity.
    private func filled(_ source: PixelSize, box: PixelSize, enlarge: Bool) -> ProcessingGeometry {
        let sw = Double(source.width), sh = Double(source.height)
        let cover = max(Double(box.width) / sw, Double(box.height) / sh)
        let s = enlarge ? cover : min(cover, 1)
        let canvas = PixelSize(width: min(box.width, Self.side(sw * s)), height: min(box.height, Self.side(sh * s)))
        let cw = min(sw, Double(canvas.width) / s), ch = min(sh, Double(canvas.height) / s)
        let x: Double, y: Double
        if case .focalPoint(let fx, let fy) = gravity {
            x = min(max(fx * sw - cw / 2, 0), sw - cw)
            y = min(max(fy * sh - ch / 2, 0), sh - ch)
        } else {
            let (fx, fy) = gravity.compassFractions
            x = (sw - cw) * fx
            y = (sh - ch) * fy
        }
        return ProcessingGeometry(canvas: canvas, crop: Rect(x: x, y: y, width: cw, height: ch), placement: Rect(size: canvas))
    }

    /// The whole source drawn over the whole canvas.
    private static func uncropped(_ source: PixelSize, canvas: PixelSize) -> ProcessingGeometry {
        ProcessingGeometry(canvas: canvas, crop: Rect(size: source), placement: Rect(size: canvas))
    }

    /// The largest size of the source's aspect ratio inside `box` (the scale at most 1 without `enlarge`).
    private static func fitted(_ source: PixelSize, in box: PixelSize, enlarge: Bool) -> PixelSize {
        let sw = Double(source.width), sh = Double(source.height)
        let fit = min(Double(box.width) / sw, Double(box.height) / sh)
        let s = enlarge ? fit : min(fit, 1)
        return PixelSize(width: min(box.width, side(sw * s)), height: min(box.height, side(sh * s)))
    }

    /// `box` unchanged when it fits inside `source`, else scaled by min(W/w, H/h) (keeping its aspect ratio).
    private static func shrunk(_ box: PixelSize, into source: PixelSize) -> PixelSize {
        guard box.width > source.width || box.height > source.height else { return box }
        let k = min(Double(source.width) / Double(box.width), Double(source.height) / Double(box.height))
        return PixelSize(width: min(source.width, side(Double(box.width) * k)),
                         height: min(source.height, side(Double(box.height) * k)))
    }

    /// `length` times the device pixel ratio, rounded half up.
    private static func times(_ dpr: Double, _ length: Int) -> Int { side(Double(length) * dpr) }

    /// A length rounded half up, at least 1.
    private static func side(_ length: Double) -> Int { max(1, Int(length.rounded())) }
}
