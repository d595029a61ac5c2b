extension ImageFileFormat {
    /// Whether Tessera writes this format (``ImageEncoder``): JPEG, PNG, WebP and AVIF. GIF and HEIC are
    /// read only.
    public var isEncodable: Bool {
        switch self {
        case .jpeg, .png, .webp, .avif: true
        case .gif, .heic: false
        }
    }

    /// The formats Tessera writes, in declaration order: JPEG, PNG, WebP, AVIF.
    public static var encodable: [ImageFileFormat] { allCases.filter(\.isEncodable) }
}
