/// What to make of a source image: a size and how to reach it (``Mode``, ``Gravity``, ``enlarge``), the
/// pad and flattening colour, the device pixel ratio, a blur, and the output format and quality — the one
/// processing vocabulary of the library and the service, in the spirit of imgproxy, thumbor and Next.js.
///
/// A value only describes; ``geometry(for:limits:)`` works out the arithmetic (``ProcessingGeometry``), and
/// ``identity`` is the text that stands for it in cache and table keys. Values decode from JSON with every
/// field optional (absent fields take the defaults of ``init(width:height:mode:gravity:enlarge:background:dpr:blur:format:quality:rotation:flip:crop:cropBox:trim:padding:sharpen:pixelate:grayscale:watermark:)``),
/// so presets can be written as recipes in a configuration file.
public struct ImageProcessing: Sendable, Hashable, Codable {
    /// The width of the box in CSS pixels (multiplied by ``dpr``); `nil` derives it from ``height`` and the
    /// source's aspect ratio, or keeps the source's size when ``height`` is `nil` too.
    public var width: Int?
    /// The height of the box in CSS pixels (multiplied by ``dpr``); `nil` derives it from ``width`` and the
    /// source's aspect ratio, or keeps the source's size when ``width`` is `nil` too.
    public var height: Int?
    /// How the source is brought to the box; ``ContentMode/fit`` by default.
    public var mode: Mode
    /// Which part of the source ``ContentMode/fill`` keeps, and where ``ContentMode/pad`` places the image; centre by default.
    public var gravity: Gravity
    /// Whether the image may be scaled up beyond the source's size; `false` by default (see ``ProcessingGeometry``
    /// for what that means in each mode).
    public var enlarge: Bool
    /// The colour of ``ContentMode/pad``'s bars, and the colour transparent sources are flattened onto for formats
    /// without transparency (JPEG); opaque white by default.
    public var background: Background
    /// The device pixel ratio, 1…4: ``width`` and ``height`` are multiplied by it (and rounded) before
    /// anything else, so `width: 300, dpr: 2` asks for 600 pixels.
    public var dpr: Double
    /// A Gaussian blur's standard deviation in output pixels, 0…``Limits/maximumBlur``; `nil` for none.
    public var blur: Double?
    /// The encoded format, one that Tessera writes
    /// (``/TesseraImaging/TesseraCore/ImageFileFormat/isEncodable``; ``validate(_:)`` refuses the others);
    /// `nil` leaves it to negotiation (the request's `Accept`, the source's transparency).
    public var format: ImageFileFormat?
    /// The encoder's quality, 1…100; `nil` takes the format's default.
    public var quality: Int?
    /// A clockwise turn of the output after the resize (and after the source's EXIF orientation); none by
    /// default. A recipe's `rotate` (0, 90, 180 or 270).
    public var rotation: Rotation
    /// A mirroring of the output after ``rotation``; `nil` for none. A recipe's `flip` (`h`, `v` or `hv`).
    public var flip: Flip?
    /// A region of the source cut out before the resize (``Crop``: a size and a gravity); `nil` for the
    /// whole source. Excludes ``cropBox``.
    public var crop: Crop?
    /// A region of the source given by its edges (``CropBox``, thumbor's manual crop); `nil` for none.
    /// Excludes ``crop``. A recipe's `cropBox`.
    public var cropBox: CropBox?
    /// Removes the border around the (cropped) source: rows and columns within this colour distance,
    /// 0…255, of its top-left pixel (every channel within it, premultiplied, so transparent borders too); `nil` for none.
    public var trim: Int?
    /// Space around the output after the turn, filled with ``background`` (``Padding``); `nil` for none.
    public var padding: Padding?
    /// An unsharp mask's Gaussian standard deviation in output pixels, 0…``Limits/maximumSharpen``; `nil`
    /// for none.
    public var sharpen: Double?
    /// The side of the blocks the output is pixelated into, 1…``Limits/maximumPixelate`` (1 changes
    /// nothing); `nil` for none.
    public var pixelate: Int?
    /// Whether the output's colours become greys (Rec. 709 luma); `false` by default.
    public var grayscale: Bool
    /// An image drawn over the output, last of all (``Watermark``); `nil` for none.
    public var watermark: Watermark?
    /// Which of the source's EXIF, XMP and IPTC the output carries (``Metadata``): none by default.
    public var metadata: Metadata = .strip
    /// Which frames of an animated source the output keeps (``Frames``): all by default.
    public var frames: Frames = .all
    /// Whether the box turns to the source's orientation: with both sides given, a box of the other
    /// orientation (portrait for a landscape source, or the reverse; a square never turns) has its width and
    /// height swapped before the mode applies (thumbor's `adaptive-fit-in`). `false` by default.
    public var adaptive = false
    /// Round corners painted over the output after the other effects (``RoundCorners``); `nil` for none.
    public var roundCorners: RoundCorners?

    /// Creates a description; every parameter has the default of "the source as it is".
    public init(width: Int? = nil, height: Int? = nil, mode: Mode = .fit, gravity: Gravity = .center,
                enlarge: Bool = false, background: Background = .white, dpr: Double = 1, blur: Double? = nil,
                format: ImageFileFormat? = nil, quality: Int? = nil, rotation: Rotation = .none, flip: Flip? = nil,
                crop: Crop? = nil, cropBox: CropBox? = nil, trim: Int? = nil, padding: Padding? = nil,
                sharpen: Double? = nil, pixelate: Int? = nil, grayscale: Bool = false, watermark: Watermark? = nil) {
        self.width = width
        self.height = height
        self.mode = mode
        self.gravity = gravity
        self.enlarge = enlarge
        self.background = background
        self.dpr = dpr
        self.blur = blur
        self.format = format
        self.quality = quality
        self.rotation = rotation
        self.flip = flip
        self.crop = crop
        self.cropBox = cropBox
        self.trim = trim
        self.padding = padding
        self.sharpen = sharpen
        self.pixelate = pixelate
        self.grayscale = grayscale
        self.watermark = watermark
    }

    /// How the source is brought to the box of ``width`` × ``height`` (the library's one mode type). With
    /// only one side given (or none), every mode gives the source's aspect ratio at that side, so the modes
    /// differ only when both are given.
    public typealias Mode = ContentMode

    /// The output formats, now the library's one format type.
    @available(*, deprecated, renamed: "ImageFileFormat", message: "ImageFileFormat is the one format type; isEncodable says which it writes")
    public typealias OutputFormat = ImageFileFormat

    /// The canonical text of every field that shapes the output, in a fixed order, the same in every
    /// process and on every run (unlike `hashValue`, which Swift seeds per process): the part of every
    /// cache and table key that stands for the processing. Equal values have equal identities and values
    /// that differ in any field have different ones (even a field the mode ignores, such as the gravity of
    /// ``ContentMode/fit``: the identity is the value, not an interpretation of it).
    ///
    /// The format is `key=value` pairs joined by commas, `-` for `nil`, doubles in Swift's shortest
    /// round-trip form (`2.0`, `0.25`): for `ImageProcessing(width: 300, mode: .fill, gravity: .northEast, dpr: 2)`
    /// it is `w=300,h=-,m=fill,g=north-east,e=0,bg=ffffffff,dpr=2.0,blur=-,f=-,q=-`. A ``rotation`` or a
    /// ``flip`` adds `,r=90` or `,fl=h`, and each later operation its own pair when set (`,crop=W:H:G`, `,cbox=L,T,R,B`,
    /// `,trim=N`, `,pad=T,R,B,L`, `,sh=SIGMA`, `,pix=N`, `,gray=1`, `,wm=NAME@VERSION:POSITION:OPACITY:SCALE:X:Y`,
    /// `,meta=keep`, `,anim=first`),
    /// so identities without them never changed.
    public var identity: String {
        func text(_ value: Int?) -> String { value.map(String.init) ?? "-" }
        return ["w=\(text(width))", "h=\(text(height))", "m=\(mode.rawValue)", "g=\(gravity.identity)",
                "e=\(enlarge ? 1 : 0)", "bg=\(background.hex)", "dpr=\(Self.canonical(dpr))",
                "blur=\(blur.map(Self.canonical) ?? "-")", "f=\(format?.rawValue ?? "-")", "q=\(text(quality))"]
            .joined(separator: ",") + orientationIdentity + operationsIdentity
    }

    /// The identity's part for ``rotation`` and ``flip``: `,r=90`, `,fl=h`, only when set, so that every
    /// processing without them keeps the identity it had before they existed (and its cache and table keys).
    private var orientationIdentity: String {
        (rotation == .none ? "" : ",r=\(rotation.rawValue)") + (flip.map { ",fl=\($0.rawValue)" } ?? "")
    }

    /// The identity's part for the operations added after rotation and flip, each only when set, in the
    /// order they are applied: `,crop=W:H:G`, `,cbox=L,T,R,B`, `,trim=N`, `,pad=T,R,B,L`, `,sh=SIGMA`,
    /// `,pix=N`, `,gray=1`, `,wm=NAME@VERSION:POSITION:OPACITY:SCALE:X:Y`, then `,meta=keep` or
    /// `,meta=copyright` (what the encoder writes beside the pixels), `,anim=first`, `,adapt=1` and `,round=H:V:RRGGBBAA`.
    private var operationsIdentity: String {
        var parts: [String] = []
        if let crop { parts.append("crop=\(crop.identity)") }
        if let cropBox { parts.append("cbox=\(cropBox.identity)") }
        if let trim { parts.append("trim=\(trim)") }
        if let padding { parts.append("pad=\(padding.identity)") }
        if let sharpen { parts.append("sh=\(Self.canonical(sharpen))") }
        if let pixelate { parts.append("pix=\(pixelate)") }
        if grayscale { parts.append("gray=1") }
        if let watermark { parts.append("wm=\(watermark.identity)") }
        if metadata != .strip { parts.append("meta=\(metadata.rawValue)") }
        if frames != .all { parts.append("anim=\(frames.rawValue)") }
        if adaptive { parts.append("adapt=1") }
        if let roundCorners { parts.append("round=\(roundCorners.identity)") }
        return parts.map { "," + $0 }.joined()
    }

    /// `value`'s shortest round-trip text, with -0.0 written as `0.0` (they are equal values).
    static func canonical(_ value: Double) -> String { "\(value == 0 ? 0 : value)" }

    private enum CodingKeys: String, CodingKey {
        case width, height, mode, gravity, enlarge, background, dpr, blur, format, quality
        case rotation = "rotate", flip, crop, cropBox, trim, padding, sharpen, pixelate, grayscale, watermark, metadata, frames = "animation", adaptive, roundCorners
    }

    /// Decodes a recipe; absent fields take their defaults (a size-only recipe is `{"width": 300}`). A
    /// `format` that Tessera reads but does not write (`heic`) is refused here, as any unknown one is.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(width: try c.decodeIfPresent(Int.self, forKey: .width),
                  height: try c.decodeIfPresent(Int.self, forKey: .height),
                  mode: try c.decodeIfPresent(Mode.self, forKey: .mode) ?? .fit,
                  gravity: try c.decodeIfPresent(Gravity.self, forKey: .gravity) ?? .center,
                  enlarge: try c.decodeIfPresent(Bool.self, forKey: .enlarge) ?? false,
                  background: try c.decodeIfPresent(Background.self, forKey: .background) ?? .white,
                  dpr: try c.decodeIfPresent(Double.self, forKey: .dpr) ?? 1,
                  blur: try c.decodeIfPresent(Double.self, forKey: .blur),
                  format: try Self.decodeFormat(c),
                  quality: try c.decodeIfPresent(Int.self, forKey: .quality),
                  rotation: try c.decodeIfPresent(Rotation.self, forKey: .rotation) ?? .none,
                  flip: try c.decodeIfPresent(Flip.self, forKey: .flip),
                  crop: try c.decodeIfPresent(Crop.self, forKey: .crop),
                  cropBox: try c.decodeIfPresent(CropBox.self, forKey: .cropBox),
                  trim: try c.decodeIfPresent(Int.self, forKey: .trim),
                  padding: try Self.decodePadding(c),
                  sharpen: try c.decodeIfPresent(Double.self, forKey: .sharpen),
                  pixelate: try c.decodeIfPresent(Int.self, forKey: .pixelate),
                  grayscale: try c.decodeIfPresent(Bool.self, forKey: .grayscale) ?? false,
                  watermark: try c.decodeIfPresent(Watermark.self, forKey: .watermark))
        metadata = try c.decodeIfPresent(Metadata.self, forKey: .metadata) ?? .strip
        frames = try c.decodeIfPresent(Frames.self, forKey: .frames) ?? .all
        adaptive = try c.decodeIfPresent(Bool.self, forKey: .adaptive) ?? false
        roundCorners = try c.decodeIfPresent(RoundCorners.self, forKey: .roundCorners)
    }

    /// The `padding` field: absent, one number for all four sides, or `{"top": T, "right": R, "bottom": B, "left": L}`.
    private static func decodePadding(_ c: KeyedDecodingContainer<CodingKeys>) throws -> Padding? {
        if let all = try? c.decodeIfPresent(Int.self, forKey: .padding) { return Padding(all) }
        return try c.decodeIfPresent(Padding.self, forKey: .padding)
    }

    /// The `format` field: absent, or a format Tessera writes.
    private static func decodeFormat(_ c: KeyedDecodingContainer<CodingKeys>) throws -> ImageFileFormat? {
        guard let format = try c.decodeIfPresent(ImageFileFormat.self, forKey: .format) else { return nil }
        guard format.isEncodable else {
            throw DecodingError.dataCorruptedError(forKey: .format, in: c, debugDescription: "\(format) is read but not written")
        }
        return format
    }
}
