#if Serving
import Foundation
@_spi(Internal) import TesseraImaging
import Tessera

extension ImageService {
    /// The `ImageProcessing` of a `/v1/resize` query: `w` and/or `h` (one alone keeps the aspect ratio;
    /// neither keeps the source's size, within the output-pixel limit),
    /// `mode` (`fit` by default, `fill`, `fill-down`, `force`, `pad`, `cover`), `adaptive=1` (a box of the
    /// other orientation than the source's turns first), `gravity` (compass points, `smart`, or
    /// `fp` with `fp=X,Y` as fractions; `fp=X,Y` alone means `gravity=fp`), `enlarge=1` (nothing is made larger
    /// than its source without it), `bg=RRGGBB[AA]`, `dpr=1…4`, `blur=SIGMA`, `rotate=0|90|180|270` (clockwise,
    /// after the resize), `flip=h|v|hv` (after the turn), and the operations of ``operations(from:into:)``. A bad value is `400` with a code
    /// naming the parameter (`bad_size`, `bad_mode`, `bad_gravity`, `bad_fp`, `bad_enlarge`, `bad_bg`, `bad_dpr`,
    /// `bad_blur`, `bad_rotate`, `bad_flip`); `fmt` and `q` are read by the caller. The ranges of the operations are checked with
    /// every dialect's ask by the caller (`ImageProcessing.validate`). The output-pixel limit is checked on
    /// `w`×`h`×`dpr²` here when both are given, and on the real canvas when the image is drawn.
    static func processing(from query: [String: String], limits: ServerConfiguration.Limits) throws(ServiceError) -> ImageProcessing {
        let ranges = ImageProcessing.Limits(maximumOutputPixels: limits.maximumOutputPixels)
        var processing = ImageProcessing()
        processing.width = try query["w"].map { (text) throws(ServiceError) in
            try dimension(text, name: "w", parameter: .width, allowed: limits.allowedWidths)
        }
        processing.height = try query["h"].map { (text) throws(ServiceError) in
            try dimension(text, name: "h", parameter: .height, allowed: limits.allowedHeights)
        }
        if let text = query["mode"] {
            guard let mode = ImageProcessing.Mode(rawValue: text) else {
                throw ServiceError(.mode, "mode is " + Self.names(ImageProcessing.Mode.allCases.map(\.rawValue)))
            }
            processing.mode = mode
        }
        if let text = query["fp"] {
            guard let point: [Double] = Self.numbers(text, separator: ",", count: 2...2), ranges.focalPointRange.contains(point[0]),
                  ranges.focalPointRange.contains(point[1]) else {
                throw ServiceError(.focalPoint, "fp is X,Y with fractions from \(ranges.focalPointRange)")
            }
            guard query["gravity"] == nil || query["gravity"] == "fp" else {
                throw ServiceError(.gravity, "fp goes with gravity=fp (or alone)")
            }
            processing.gravity = .focalPoint(x: point[0], y: point[1])
        } else if let text = query["gravity"] {
            guard let gravity = ImageProcessing.Gravity(name: text) else {
                throw ServiceError(.gravity, text == "fp" ? "gravity=fp needs fp=X,Y"
                                   : "gravity is center, north, south, east, west, north-east, north-west, south-east, south-west, smart or fp")
            }
            processing.gravity = gravity
        }
        if let text = query["adaptive"] {
            guard let adaptive = Self.flag(text) else { throw ServiceError(.mode, "adaptive is 0 or 1") }
            processing.adaptive = adaptive
        }
        if let text = query["enlarge"] {
            guard let enlarge = Self.flag(text) else { throw ServiceError(.enlarge, "enlarge is 0 or 1") }
            processing.enlarge = enlarge
        }
        if let text = query["bg"] {
            guard let background = ImageProcessing.Background(hex: text) else { throw ServiceError(.background, "bg is RRGGBB or RRGGBBAA") }
            processing.background = background
        }
        if let text = query["dpr"] {
            guard let dpr = Double(text), dpr.isFinite, ranges.dprRange.contains(dpr) else {
                throw ServiceError(.dpr, "dpr is a number from \(ranges.dprRange)")
            }
            processing.dpr = dpr
        }
        if let text = query["blur"] {
            guard let sigma = Double(text), sigma.isFinite, ranges.blurRange.contains(sigma) else {
                throw ServiceError(.blur, "blur is a sigma from \(ranges.blurRange)")
            }
            processing.blur = sigma
        }
        if let text = query["rotate"] {
            guard let degrees = Int(text), let rotation = ImageProcessing.Rotation(rawValue: degrees) else {
                throw ServiceError(.rotation, "rotate is 0, 90, 180 or 270 (clockwise)")
            }
            processing.rotation = rotation
        }
        if let text = query["flip"] {
            guard let flip = ImageProcessing.Flip(rawValue: text) else { throw ServiceError(.flip, "flip is h, v or hv") }
            processing.flip = flip
        }
        try operations(from: query, into: &processing)
        if let width = processing.width, let height = processing.height {
            let pixels = (Double(width) * processing.dpr).rounded() * (Double(height) * processing.dpr).rounded()
            guard pixels <= Double(limits.maximumOutputPixels) else {
                throw ServiceError(.output, "\(width)x\(height) at dpr \(processing.dpr) is more than \(limits.maximumOutputPixels) output pixels")
            }
        }
        return processing
    }

    /// The operations of a `/v1/resize` query beyond the resize, read into `processing` (their ranges are
    /// checked by `ImageProcessing.validate`, with the ask): `crop=W:H` (pixels, fractions below 1, 0 for the whole side)
    /// with `crop_gravity=G` (a compass point, `smart`, or `fp:X:Y`), `crop_box=LEFT,TOP,RIGHT,BOTTOM`,
    /// `trim=THRESHOLD`, `padding=T[,R[,B[,L]]]` (CSS's shorthand: one value for all sides, two for
    /// vertical and horizontal, three for top, horizontal and bottom), `sharpen=SIGMA`, `pixelate=SIZE`,
    /// `grayscale=0|1`, `watermark=NAME` with `watermark_position`, `watermark_opacity`, `watermark_scale` and
    /// `watermark_offset=X,Y` (the name is checked against the configured watermarks by the caller), and
    /// `metadata=strip|copyright|keep` and `animation=all|first`.
    static func operations(from query: [String: String], into processing: inout ImageProcessing) throws(ServiceError) {
        if let text = query["crop"] {
            guard let sides: [Double] = Self.numbers(text, separator: ":", count: 2...2), sides.allSatisfy(\.isFinite) else {
                throw ServiceError(.crop, "crop is W:H (pixels, a fraction below 1, or 0 for the whole side)")
            }
            var crop = ImageProcessing.Crop(width: sides[0], height: sides[1])
            if let gravity = query["crop_gravity"] {
                guard let parsed = Self.cropGravity(gravity) else {
                    throw ServiceError(.crop, "crop_gravity is center, north, south, east, west, north-east, north-west, south-east, south-west, smart or fp:X:Y")
                }
                crop.gravity = parsed
            }
            processing.crop = crop
        } else if query["crop_gravity"] != nil {
            throw ServiceError(.crop, "crop_gravity goes with crop=W:H")
        }
        if let text = query["crop_box"] {
            guard let edges: [Int] = Self.numbers(text, separator: ",", count: 4...4) else {
                throw ServiceError(.crop, "crop_box is LEFT,TOP,RIGHT,BOTTOM in source pixels")
            }
            processing.cropBox = ImageProcessing.CropBox(left: edges[0], top: edges[1], right: edges[2], bottom: edges[3])
        }
        if let text = query["trim"] {
            guard let threshold = Int(text) else { throw ServiceError(.trim, "trim is a colour distance from 0 to 255") }
            processing.trim = threshold
        }
        if let text = query["padding"] {
            guard let v: [Int] = Self.numbers(text, separator: ",", count: 1...4) else {
                throw ServiceError(.padding, "padding is TOP[,RIGHT[,BOTTOM[,LEFT]]] in output pixels")
            }
            processing.padding = switch v.count {
            case 1: ImageProcessing.Padding(v[0])
            case 2: ImageProcessing.Padding(top: v[0], right: v[1], bottom: v[0], left: v[1])
            case 3: ImageProcessing.Padding(top: v[0], right: v[1], bottom: v[2], left: v[1])
            default: ImageProcessing.Padding(top: v[0], right: v[1], bottom: v[2], left: v[3])
            }
        }
        if let text = query["sharpen"] {
            guard let sigma = Double(text), sigma.isFinite else { throw ServiceError(.sharpen, "sharpen is a sigma") }
            processing.sharpen = sigma
        }
        if let text = query["pixelate"] {
            guard let side = Int(text) else { throw ServiceError(.pixelate, "pixelate is a block side in pixels") }
            processing.pixelate = side
        }
        if let name = query["watermark"] {
            var mark = ImageProcessing.Watermark(name: name)
            if let text = query["watermark_position"] {
                guard let position = ImageProcessing.Watermark.Position(name: text) else {
                    throw ServiceError(.watermark, "watermark_position is a compass point (center, north, south-east, …) or repeat")
                }
                mark.position = position
            }
            if let text = query["watermark_opacity"] {
                guard let opacity = Double(text) else { throw ServiceError(.watermark, "watermark_opacity is a number from 0 to 1") }
                mark.opacity = opacity
            }
            if let text = query["watermark_scale"] {
                guard let scale = Double(text) else { throw ServiceError(.watermark, "watermark_scale is a fraction above 0 and at most 1") }
                mark.scale = scale
            }
            if let text = query["watermark_offset"] {
                guard let offset: [Int] = Self.numbers(text, separator: ",", count: 2...2) else {
                    throw ServiceError(.watermark, "watermark_offset is X,Y in pixels")
                }
                (mark.offsetX, mark.offsetY) = (offset[0], offset[1])
            }
            processing.watermark = mark
        } else if let option = ["watermark_position", "watermark_opacity", "watermark_scale", "watermark_offset"].first(where: { query[$0] != nil }) {
            throw ServiceError(.watermark, "\(option) goes with watermark=NAME")
        }
        if let text = query["grayscale"] {
            guard let grayscale = Self.flag(text) else { throw ServiceError(.grayscale, "grayscale is 0 or 1") }
            processing.grayscale = grayscale
        }
        if let text = query["metadata"] {
            guard let metadata = ImageProcessing.Metadata(rawValue: text) else { throw ServiceError(.metadata, "metadata is strip, copyright or keep") }
            processing.metadata = metadata
        }
        if let text = query["animation"] {
            guard let frames = ImageProcessing.Frames(rawValue: text) else { throw ServiceError(.animation, "animation is all or first") }
            processing.frames = frames
        }
    }

    /// A crop's gravity: a name of `ImageProcessing.Gravity(name:)`, or `fp:X:Y` (a focal point).
    static func cropGravity(_ text: String) -> ImageProcessing.Gravity? {
        if text.hasPrefix("fp:") {
            guard let point: [Double] = numbers(text.dropFirst(3), separator: ":", count: 2...2) else { return nil }
            return .focalPoint(x: point[0], y: point[1])
        }
        return ImageProcessing.Gravity(name: text)
    }

    /// The numbers of `text` split at `separator` (empty parts kept, so `1,,2` fails), when there are
    /// `count` of them and each reads as `Number`; `nil` otherwise. Every list-valued parameter (`fp`,
    /// `crop`, `crop_box`, `padding`, `watermark_offset`) is read through it.
    static func numbers<Number: LosslessStringConvertible>(_ text: some StringProtocol, separator: Character,
                                                            count: ClosedRange<Int>) -> [Number]? {
        let parts = text.split(separator: separator, omittingEmptySubsequences: false)
        guard count.contains(parts.count) else { return nil }
        var numbers: [Number] = []
        for part in parts {
            guard let number = Number(String(part)) else { return nil }
            numbers.append(number)
        }
        return numbers
    }

    /// A boolean parameter's value: `1` or `true`, `0` or `false`; `nil` for anything else.
    static func flag(_ text: String) -> Bool? {
        switch text {
        case "1", "true": true
        case "0", "false": false
        default: nil
        }
    }

    /// `names` as a sentence's list: `a, b or c`.
    static func names(_ names: [String]) -> String {
        names.count < 2 ? names.joined() : names.dropLast().joined(separator: ", ") + " or " + names[names.count - 1]
    }

    /// The processing limits of this service (its output-pixel limit).
    var processingLimits: ImageProcessing.Limits {
        ImageProcessing.Limits(maximumOutputPixels: configuration.limits.maximumOutputPixels)
    }

    /// `data` drawn by `processing` (the caller holds a permit of the work limit, and ``draw(_:processing:animates:)``
    /// has checked its size and probed its header): the library's render, its refusals as the service's errors
    /// by their parameter (``ServiceError/Code/init(_:)``: a canvas over the output-pixel limit is
    /// `400 output_too_large`, a source size out of range `400 bad_size`).
    private func render(_ data: Data, processing: ImageProcessing) throws -> Bitmap {
        try rendering { () throws(ImageDecoder.RenderError) in
            try decoder.render(data, processing: processing, limits: processingLimits,
                               watermark: processing.watermark.flatMap { watermarks[$0.name]?.image })
        }
    }

    /// `data` drawn by `processing` for an answer that can animate when `animates` (the caller holds a permit of
    /// the work limit), and the answer's `X-Tessera-Animation` (``ImageResponse/animation``). An animated source
    /// (more than one frame) gives every frame when `processing` keeps them (``ImageProcessing/Frames/all``),
    /// `animates`, and it is within the animation limits (``ServerConfiguration/Limits/maximumAnimationFrames``
    /// and ``ServerConfiguration/Limits/maximumAnimationPixels``, on the source and on the output frames);
    /// otherwise its first frame, as any still source.
    func draw(_ data: Data, processing: ImageProcessing, animates: Bool) throws -> (Drawn, animation: String?, format: ImageFileFormat) {
        try decoder.limits.checkInput(byteCount: data.count)
        let info = try decoder.probe(data)   // the pixel limit, before the decode is counted
        guard info.frameCount > 1 else { return (.still(try render(data, processing: processing)), nil, info.format) }
        guard processing.frames == .all, animates else { return (.still(try render(data, processing: processing)), "first frame", info.format) }
        let overLimit = "first frame: over the limit"
        do {
            try decoder.limits.checkAnimation(frames: info.frameCount, width: info.width, height: info.height)
        } catch {
            return (.still(try render(data, processing: processing)), overLimit, info.format)
        }
        do {
            let animation = try rendering { () throws(ImageDecoder.RenderError) in
                try decoder.renderAnimation(data, processing: processing, limits: processingLimits,
                                            watermark: processing.watermark.flatMap { watermarks[$0.name]?.image })
            }
            return (.animation(animation), "\(animation.frames.count) frames", info.format)
        } catch let error as TesseraError where Self.isAnimationLimit(error) {
            return (.still(try render(data, processing: processing)), overLimit, info.format)
        }
    }

    /// Whether `error` is a decoder's refusal of an animation over its limits.
    private static func isAnimationLimit(_ error: TesseraError) -> Bool {
        switch error.reason {
        case .decoding(.tooManyFrames), .decoding(.animationTooLarge): true
        default: false
        }
    }

    /// A render (counted, timed), its refusals as the service's errors by their parameter.
    private func rendering<R>(_ body: () throws(ImageDecoder.RenderError) -> R) throws -> R {
        let start = ContinuousClock.now
        defer { metrics.decodeTime.recordSince(start) }
        counters.withLock { $0.decodes += 1 }
        do {
            return try body()
        } catch {
            switch error {
            case .invalid(let invalid):
                throw ServiceError(invalid)
            case .failed(let failure):
                throw failure
            }
        }
    }
}
#endif
