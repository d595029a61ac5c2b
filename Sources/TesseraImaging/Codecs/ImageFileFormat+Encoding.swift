extension ImageFileFormat {
    /// Whether Tessera writes this format (``ImageEncoder``): JPEG, PNG, WebP, GIF and AVIF. HEIC is read
    /// only.
    public var isEncodable: Bool {
        switch self {
        case .jpeg, .png, .webp, .gif, .avif: true
        case .heic: false
        }
    }

    /// Whether Tessera writes animations in this format (`ImageEncoder.encode(_:)` given an
    /// ``Animation``): GIF and WebP. AVIF can animate too, but Tessera writes it still.
    public var canAnimate: Bool { self == .gif || self == .webp }

    /// The formats Tessera writes, in declaration order: JPEG, PNG, WebP, GIF, AVIF.
    public static var encodable: [ImageFileFormat] { allCases.filter(\.isEncodable) }
}
