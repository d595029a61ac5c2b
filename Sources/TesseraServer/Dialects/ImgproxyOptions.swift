#if Serving
import Foundation
@_spi(Internal) import TesseraImaging
import Tessera

/// imgproxy's processing options, applied left to right as imgproxy applies them (a later option
/// overwrites an earlier one's fields), then made into Tessera's ``ImageProcessing`` by ``processing(watermark:)`` (its ranges are checked
/// with every ask's, by the service).
///
/// Every option of imgproxy's open-source version is known, by full name and alias. Those that map onto
/// Tessera's vocabulary are applied; those that cannot be honoured as imgproxy would (`resizing_type:auto`,
/// gravity offsets, `min-width`, `zoom`, `max_bytes`, `raw`, `skip_processing`, a trim colour…) are
/// refused with `unsupported_option` rather than ignored; imgproxy's Pro options and any other name are
/// `unknown_parameter`; its security options (`max_src_resolution`…) are `option_not_allowed`, as imgproxy
/// answers them without `IMGPROXY_ALLOW_SECURITY_OPTIONS`.
struct ImgproxyOptions {
    enum ResizingType: String { case fit, fill, fillDown = "fill-down", force, auto }

    var resizingType = ResizingType.fit
    var width = 0, height = 0
    var dpr = 1.0
    var enlarge = false
    var extend = false
    var extendGravity = ImageProcessing.Gravity.center
    var gravity = ImageProcessing.Gravity.center
    var crop: (width: Double, height: Double, gravity: ImageProcessing.Gravity?)?
    var trim: Int?
    var padding: (top: Int, right: Int, bottom: Int, left: Int)?
    var rotate = 0
    var flip = (horizontal: false, vertical: false)
    var background: ImageProcessing.Background?
    var blur: Double?
    var sharpen: Double?
    var pixelate: Int?
    var watermark: (opacity: Double, position: ImageProcessing.Watermark.Position, x: Int, y: Int, scale: Double?)?
    var quality: Int?
    var formatQuality: [ImageFileFormat: Int] = [:]
    var format: ImageFileFormat?
    var stripMetadata = true
    var keepCopyright = true
    var filename: String?
    var attachment = false
    var expires: Int?
    /// Fields a Tessera preset (`preset:NAME`) set that imgproxy's options do not have.
    var recipe: ImageProcessing?

    /// Applies option `name` with `args` (the segment's parts after the name).
    mutating func apply(name: String, _ args: ArraySlice<Substring>) throws(ServiceError) {
        let args = Array(args)
        func count(_ range: ClosedRange<Int>) throws(ServiceError) {
            guard range.contains(args.count) else { throw ServiceError(.unknownParameter, "imgproxy's \(name) takes \(range.lowerBound)…\(range.upperBound) arguments") }
        }
        switch name {
        case "resize", "rs":
            try count(1...8)
            if !args[0].isEmpty { try apply(name: "resizing_type", [args[0]]) }
            if args.count > 1 { try apply(name: "size", args.dropFirst()) }
        case "size", "s":
            try count(1...7)
            if !args[0].isEmpty { try apply(name: "width", [args[0]]) }
            if args.count > 1, !args[1].isEmpty { try apply(name: "height", [args[1]]) }
            if args.count > 2, !args[2].isEmpty { try apply(name: "enlarge", [args[2]]) }
            if args.count > 3, !args[3].isEmpty { try apply(name: "extend", args[3...]) }
        case "resizing_type", "rt":
            try count(1...1)
            guard let type = ResizingType(rawValue: String(args[0])) else { throw ServiceError(.mode, "resizing_type is fit, fill, fill-down, force or auto") }
            guard type != .auto else { throw Self.unsupported("resizing_type:auto (fill or fit by the source's orientation)") }
            resizingType = type
        case "width", "w": try count(1...1); width = try Self.whole(args[0], name)
        case "height", "h": try count(1...1); height = try Self.whole(args[0], name)
        case "min-width", "mw", "min-height", "mh":
            try count(1...1)
            guard try Self.whole(args[0], name) == 0 else { throw Self.unsupported(name) }
        case "zoom", "z":
            try count(1...2)
            for arg in args where try Self.number(arg, name) != 1 { throw Self.unsupported("zoom other than 1") }
        case "dpr":
            try count(1...1)
            dpr = try Self.number(args[0], name)
            guard dpr > 0 else { throw ServiceError(.dpr, "dpr is above 0") }
        case "enlarge", "el": try count(1...1); enlarge = try Self.flag(args[0], name)
        case "extend", "ex":
            try count(1...4)
            extend = try Self.flag(args[0], name)
            if args.count > 1 { extendGravity = try Self.gravity(args[1...], name, smart: false) }
        case "extend_aspect_ratio", "extend_ar", "exar":
            try count(1...4)
            guard try !Self.flag(args[0], name) else { throw Self.unsupported(name) }
        case "gravity", "g": try count(1...3); gravity = try Self.gravity(args[...], name, smart: true)
        case "crop", "c":
            try count(1...5)
            let w = try Self.number(args[0], name), h = args.count > 1 ? try Self.number(args[1], name) : 0
            guard w >= 0, h >= 0 else { throw ServiceError(.crop, "crop sides are 0 or more") }
            crop = (w >= 1 ? w.rounded(.towardZero) : w, h >= 1 ? h.rounded(.towardZero) : h,
                    args.count > 2 ? try Self.gravity(args[2...], name, smart: true) : nil)
        case "trim", "t":
            try count(1...4)
            let threshold = try Self.number(args[0], name)
            guard threshold >= 0, threshold <= 255, threshold == threshold.rounded() else { throw ServiceError(.trim, "trim's threshold is a whole number 0…255 here") }
            guard args.count < 2 || args[1].isEmpty else { throw Self.unsupported("a trim colour (Tessera trims the top-left pixel's colour)") }
            for arg in args.dropFirst(2) where try Self.flag(arg, name) { throw Self.unsupported("trim's equal_hor/equal_ver") }
            trim = Int(threshold)
        case "padding", "pd":
            try count(1...4)
            var sides: [Int?] = []
            for arg in args { sides.append(arg.isEmpty ? nil : try Self.whole(arg, name)) }
            let top = sides[0] ?? 0, right = sides.count > 1 ? sides[1] ?? top : top
            let bottom = sides.count > 2 ? sides[2] ?? top : top, left = sides.count > 3 ? sides[3] ?? right : right
            padding = top + right + bottom + left == 0 ? nil : (top, right, bottom, left)
        case "auto_rotate", "ar":
            try count(1...1)
            guard try Self.flag(args[0], name) else { throw Self.unsupported("auto_rotate:false (Tessera always applies EXIF orientation)") }
        case "rotate", "rot":
            try count(1...1)
            let degrees = try Self.whole(args[0], name, signed: true)
            guard degrees % 90 == 0 else { throw ServiceError(.rotation, "rotate is a multiple of 90") }
            rotate = ((degrees % 360) + 360) % 360
        case "flip", "fl":
            try count(1...2)
            if !args[0].isEmpty { flip.horizontal = try Self.flag(args[0], name) }
            if args.count > 1, !args[1].isEmpty { flip.vertical = try Self.flag(args[1], name) }
        case "background", "bg":
            try count(1...3)
            background = try Self.background(args)
        case "blur", "bl": try count(1...1); blur = try Self.number(args[0], name)
        case "sharpen", "sh": try count(1...1); sharpen = try Self.number(args[0], name)
        case "pixelate", "pix": try count(1...1); pixelate = try Self.whole(args[0], name)
        case "watermark", "wm":
            try count(1...7)
            let opacity = try Self.number(args[0], name)
            guard (0...1).contains(opacity) else { throw ServiceError(.watermark, "watermark's opacity is 0…1") }
            let position: ImageProcessing.Watermark.Position
            switch args.count > 1 ? args[1] : "ce" {
            case "re": position = .repeat
            case let text: position = .gravity(try Self.gravity([text], name, smart: false))
            }
            let x = args.count > 2 && !args[2].isEmpty ? try Self.number(args[2], name) : 0
            let y = args.count > 3 && !args[3].isEmpty ? try Self.number(args[3], name) : 0
            guard x == x.rounded(), y == y.rounded() else { throw Self.unsupported("watermark offsets as fractions") }
            let scale = args.count > 4 && !args[4].isEmpty ? try Self.number(args[4], name) : 0
            guard scale >= 0 else { throw ServiceError(.watermark, "watermark's scale is 0 or more") }
            if case .gravity(.center) = position, x != 0 || y != 0 { throw Self.unsupported("offsets of a centred watermark") }
            watermark = opacity == 0 ? nil : (opacity, position, Int(x), Int(y), scale == 0 ? nil : scale)
        case "quality", "q": try count(1...1); quality = try Self.quality(args[0])
        case "format_quality", "fq":
            guard args.count % 2 == 0 else { throw ServiceError(.quality, "format_quality is FORMAT:QUALITY pairs") }
            for index in stride(from: 0, to: args.count, by: 2) {
                formatQuality[try Self.format(args[index])] = try Self.quality(args[index + 1])
            }
        case "max_bytes", "mb":
            try count(1...1)
            guard try Self.whole(args[0], name) == 0 else { throw Self.unsupported("max_bytes") }
        case "format", "f", "ext": try count(1...1); format = try Self.format(args[0])
        case "strip_metadata", "sm": try count(1...1); stripMetadata = try Self.flag(args[0], name)
        case "keep_copyright", "kcr": try count(1...1); keepCopyright = try Self.flag(args[0], name)
        case "strip_color_profile", "scp":
            try count(1...1)
            guard try Self.flag(args[0], name) else { throw Self.unsupported("strip_color_profile:false (Tessera writes sRGB without a profile)") }
        case "enforce_thumbnail", "eth", "raw":
            try count(1...1)
            guard try !Self.flag(args[0], name) else { throw Self.unsupported(name) }
        case "skip_processing", "skp": throw Self.unsupported(name)
        case "filename", "fn":
            try count(1...2)
            if args.count > 1, try Self.flag(args[1], name) {
                guard let bytes = URLDialect.base64URL(args[0], padded: false), let text = String(bytes: bytes, encoding: .utf8) else {
                    throw ServiceError(.badFilename, "the encoded filename is not base64url")
                }
                filename = text
            } else {
                filename = String(args[0])
            }
        case "return_attachment", "att": try count(1...1); attachment = try Self.flag(args[0], name)
        case "cachebuster", "cb": try count(1...1)
        case "expires", "exp":
            try count(1...1)
            guard let seconds = Int(args[0]) else { throw ServiceError(.expired, "expires is a Unix time in seconds") }
            expires = seconds
        case "max_src_resolution", "msr", "max_src_file_size", "msfs", "max_animation_frames", "maf",
             "max_animation_frame_resolution", "mafr", "max_result_dimension", "mrd":
            throw ServiceError(.optionNotAllowed, "imgproxy's security option \(name) is not taken from URLs")
        default:
            throw ServiceError(.unknownParameter, "unknown imgproxy option '\(name)'")
        }
    }

    /// Sets the fields a Tessera preset's recipe gives (its size, mode, gravity, enlarge and background, and
    /// the operations imgproxy's options also have); the rest of the recipe is kept for ``processing(watermark:)``.
    mutating func apply(_ recipe: ImageProcessing) {
        width = recipe.width ?? 0
        height = recipe.height ?? 0
        switch recipe.mode {
        case .fit: resizingType = .fit
        case .fill: resizingType = .fill
        case .fillDown: resizingType = .fillDown
        case .stretch: resizingType = .force
        case .pad: resizingType = .fit; extend = true; extendGravity = recipe.gravity
        case .cover: resizingType = .fit   // never a preset's (ServerConfiguration.validate refuses it)
        }
        gravity = recipe.gravity
        enlarge = recipe.enlarge
        dpr = recipe.dpr
        background = recipe.background
        if let q = recipe.quality { quality = q }
        if let f = recipe.format { format = f }
        self.recipe = recipe
    }

    /// The processing these options describe, in Tessera's order of operations. imgproxy sizes the image in
    /// its final orientation (a quarter `rotate` swaps the requested sides first); Tessera turns after the
    /// resize, so a quarter turn swaps the width and height, the crop's sides and the gravities back.
    func processing(watermark name: String?) throws(ServiceError) -> ImageProcessing {
        var processing = recipe ?? ImageProcessing()
        processing.width = width == 0 ? nil : width
        processing.height = height == 0 ? nil : height
        processing.dpr = dpr
        processing.enlarge = enlarge
        processing.gravity = gravity
        switch resizingType {
        case .fit: processing.mode = .fit
        case .fill: processing.mode = .fill
        case .fillDown: processing.mode = .fillDown
        case .force: processing.mode = .stretch
        case .auto: throw Self.unsupported("resizing_type:auto")
        }
        if extend {
            guard width > 0, height > 0 else { throw Self.unsupported("extend without both a width and a height") }
            switch resizingType {
            case .fit:
                processing.mode = .pad
                if case .focalPoint = extendGravity { throw Self.unsupported("extend's fp gravity") }
                processing.gravity = extendGravity
            case .fill, .force:
                guard enlarge else { throw Self.unsupported("extend with \(resizingType.rawValue) and without enlarge") }
            case .fillDown, .auto:
                throw Self.unsupported("extend with \(resizingType.rawValue)")
            }
        }
        if let crop { processing.crop = ImageProcessing.Crop(width: crop.width, height: crop.height, gravity: crop.gravity ?? gravity) }
        processing.trim = trim
        if let padding {
            func scaled(_ side: Int) -> Int { Int((Double(side) * dpr).rounded(.toNearestOrEven)) }
            processing.padding = ImageProcessing.Padding(top: scaled(padding.top), right: scaled(padding.right),
                                                         bottom: scaled(padding.bottom), left: scaled(padding.left))
        }
        if let background { processing.background = background }
        processing.blur = blur.flatMap { $0 == 0 ? nil : $0 }
        processing.sharpen = sharpen.flatMap { $0 == 0 ? nil : $0 }
        processing.pixelate = pixelate.flatMap { $0 <= 1 ? nil : $0 }
        if let watermark {
            guard let name else { throw ServiceError(.watermark, "no watermark is configured for imgproxy's watermark option (--watermark NAME=FILE)") }
            func scaled(_ offset: Int) -> Int { Int((Double(offset) * dpr).rounded(.toNearestOrEven)) }
            processing.watermark = ImageProcessing.Watermark(name: name, position: watermark.position, opacity: watermark.opacity,
                                                             scale: watermark.scale, offsetX: scaled(watermark.x), offsetY: scaled(watermark.y))
        }
        processing.metadata = !stripMetadata ? .keep : keepCopyright ? .copyright : .strip
        processing.format = nil   // the output format is the ask's (`format`)
        processing.quality = nil
        processing.rotation = ImageProcessing.Rotation(rawValue: rotate) ?? .none
        processing.flip = flip.horizontal ? (flip.vertical ? .both : .horizontal) : (flip.vertical ? .vertical : nil)
        if rotate != 0 {
            let quarter = rotate == 90 || rotate == 270
            if quarter { swap(&processing.width, &processing.height) }
            processing.gravity = processing.gravity.unrotated(by: rotate)
            processing.crop = processing.crop.map { crop in
                ImageProcessing.Crop(width: quarter ? crop.height : crop.width, height: quarter ? crop.width : crop.height,
                                     gravity: crop.gravity.unrotated(by: rotate))
            }
        }
        return processing
    }

    /// The quality for the output `format` (`nil` when the source's format decides it): `quality`, else
    /// `format_quality`'s for it; `format_quality` alone needs a known format.
    func quality(for format: ImageFileFormat?) throws(ServiceError) -> Int? {
        if let quality, quality > 0 { return quality }
        guard !formatQuality.isEmpty else { return nil }
        guard let format else { throw Self.unsupported("format_quality without a format (the source's format decides it)") }
        return formatQuality[format].flatMap { $0 == 0 ? nil : $0 }
    }

    /// The answer's `Content-Disposition`, when `filename` or `return_attachment` asks for one.
    func disposition() throws(ServiceError) -> ContentDisposition? {
        guard filename != nil || attachment else { return nil }
        return try ContentDisposition(name: filename, attachment: attachment)
    }

    // MARK: Arguments

    static func unsupported(_ what: String) -> ServiceError {
        ServiceError(.unsupportedOption, "imgproxy's \(what) is not supported: Tessera would answer a different image")
    }

    /// A boolean as Go's `strconv.ParseBool` reads it (`1`, `t`, `true`…); anything else is refused.
    static func flag(_ text: Substring, _ name: String) throws(ServiceError) -> Bool {
        switch text {
        case "1", "t", "T", "true", "TRUE", "True": return true
        case "0", "f", "F", "false", "FALSE", "False": return false
        default: throw ServiceError(.unknownParameter, "\(name) takes a boolean, not '\(text)'")
        }
    }

    static func whole(_ text: Substring, _ name: String, signed: Bool = false) throws(ServiceError) -> Int {
        guard let value = Int(text), signed || value >= 0 else {
            throw ServiceError(name.hasPrefix("w") || name.hasPrefix("h") ? .badSize : .unknownParameter, "\(name) takes a whole number, not '\(text)'")
        }
        return value
    }

    static func number(_ text: Substring, _ name: String) throws(ServiceError) -> Double {
        guard let value = Double(text), value.isFinite else { throw ServiceError(.unknownParameter, "\(name) takes a number, not '\(text)'") }
        return value
    }

    static func quality(_ text: Substring) throws(ServiceError) -> Int {
        guard let value = Int(text), (0...100).contains(value) else { throw ServiceError(.quality, "quality is 0…100") }
        return value
    }

    /// imgproxy's format names: `jpg`/`jpeg`, `png`, `webp`, `gif`, `avif`; the others it knows (`jxl`, `ico`,
    /// `svg`, `heic`, `bmp`, `tiff`) Tessera does not write.
    static func format(_ text: Substring) throws(ServiceError) -> ImageFileFormat {
        switch text {
        case "jpg", "jpeg": return .jpeg
        case "png": return .png
        case "webp": return .webp
        case "gif": return .gif
        case "avif": return .avif
        case "jxl", "ico", "svg", "heic", "bmp", "tiff": throw ServiceError(.format, "Tessera does not write \(text)")
        default: throw ServiceError(.format, "unknown format '\(text)'")
        }
    }

    /// A gravity `TYPE[:X:Y]` (`no so ea we noea nowe soea sowe ce`, `sm` when `smart`, `fp:X:Y`); offsets
    /// other than 0 are refused.
    static func gravity(_ args: ArraySlice<Substring>, _ name: String, smart: Bool) throws(ServiceError) -> ImageProcessing.Gravity {
        let args = Array(args)
        let compass: [Substring: ImageProcessing.Gravity] = [
            "ce": .center, "no": .north, "so": .south, "ea": .east, "we": .west,
            "noea": .northEast, "nowe": .northWest, "soea": .southEast, "sowe": .southWest,
        ]
        switch args[0] {
        case "sm" where smart:
            guard args.count == 1 else { throw ServiceError(.gravity, "\(name)'s sm takes no offsets") }
            return .smart
        case "fp":
            guard args.count == 3, let x = Double(args[1]), let y = Double(args[2]), (0...1).contains(x), (0...1).contains(y) else {
                throw ServiceError(.focalPoint, "\(name)'s fp is fp:X:Y with fractions 0…1")
            }
            return .focalPoint(x: x, y: y)
        case let type:
            guard let gravity = compass[type] else { throw ServiceError(.gravity, "\(name)'s gravity '\(type)' is not one imgproxy has") }
            for offset in args.dropFirst() where !offset.isEmpty {
                guard try number(offset, name) == 0 else { throw unsupported("gravity offsets") }
            }
            return gravity
        }
    }

    /// `bg:RRGGBB`, `bg:RGB` or `bg:R:G:B`; `bg:` (empty) keeps the default.
    static func background(_ args: [Substring]) throws(ServiceError) -> ImageProcessing.Background? {
        if args.count == 1 {
            let text = args[0]
            if text.isEmpty { return nil }
            let digits = text.count == 3 ? String(text.flatMap { [$0, $0] }) : String(text)
            guard digits.count == 6, let background = ImageProcessing.Background(hex: digits) else {
                throw ServiceError(.background, "background is RRGGBB, RGB or R:G:B")
            }
            return background
        }
        guard args.count == 3, let r = UInt8(args[0]), let g = UInt8(args[1]), let b = UInt8(args[2]) else {
            throw ServiceError(.background, "background is RRGGBB, RGB or R:G:B (each 0…255)")
        }
        return ImageProcessing.Background(red: r, green: g, blue: b)
    }
}

extension ImageProcessing.Gravity {
    /// The gravity that, applied before a clockwise turn of `degrees` (0, 90, 180, 270), means this
    /// gravity after it: north after a quarter turn is west before it.
    func unrotated(by degrees: Int) -> Self {
        let turns = ((degrees / 90) % 4 + 4) % 4
        var gravity = self
        for _ in 0..<turns { gravity = gravity.quarterBack }
        return gravity
    }

    /// This gravity (after a clockwise quarter turn) before the turn.
    private var quarterBack: Self {
        switch self {
        case .center, .smart: self
        case .north: .west
        case .east: .north
        case .south: .east
        case .west: .south
        case .northEast: .northWest
        case .southEast: .northEast
        case .southWest: .southEast
        case .northWest: .southWest
        case .focalPoint(let x, let y): .focalPoint(x: y, y: 1 - x)
        case .focalPixel: self   // never imgproxy's (its focal points are fractions)
        }
    }
}
#endif
