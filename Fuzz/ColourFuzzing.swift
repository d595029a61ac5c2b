import CLCMS2

/// The `icc` target: arbitrary bytes as an embedded ICC profile, for every pixel input
/// (``ColourConversion/use(of:for:)``: lcms2's profile parser, the class and colour-space checks,
/// the sRGB test) and, when a transform results, run over a small bitmap opaque and premultiplied;
/// the same bytes as the zlib stream of a PNG `iCCP` chunk (``EmbeddedProfile/inflateICCP(_:)``).
///
/// Invariants: nothing crashes or leaks; a transform writes only inside the bitmap (ASan); an
/// inflated profile is never larger than ``ColourConversion/maximumProfileBytes``.
enum ColourFuzzing {
    static func run(_ bytes: UnsafeRawBufferPointer) {
        let profile = Array(bytes)
        for input in [ColourConversion.PixelInput.rgb, .cmyk, .cmykInverted] {
            guard let transform = ColourConversion.use(of: profile, for: input).transform else { continue }
            for premultiplied in [false, true] where input == .rgb || !premultiplied {
                _ = Bitmap(width: 7, height: 5, style: .bgra32) { view in
                    for y in 0..<5 {
                        let row = view.row(y).assumingMemoryBound(to: UInt8.self)
                        for x in 0..<28 { row[x] = UInt8(truncatingIfNeeded: x &* 37 &+ y &* 11) }
                    }
                    transform.apply(to: view, premultiplied: premultiplied)
                }
            }
        }
        let body = [UInt8]("p".utf8) + [0, 0] + profile
        if let inflated = body.withUnsafeBytes({ EmbeddedProfile.inflateICCP($0) }) {
            precondition(inflated.count <= ColourConversion.maximumProfileBytes, "inflated \(inflated.count) bytes")
        }
    }

    /// Seeds: lcms2's sRGB profile and an RGB profile that needs a transform (sRGB's primaries and
    /// white, a plain γ 1.8 curve).
    static func seeds() -> [[UInt8]] {
        [cmsCreate_sRGBProfile(), gamma18()].compactMap { $0.flatMap(save) }
    }

    /// The γ 1.8 RGB profile, also embedded in the JPEG seeds.
    static func gamma18() -> cmsHPROFILE? {
        var white = cmsCIExyY(x: 0.3127, y: 0.3290, Y: 1)
        var primaries = cmsCIExyYTRIPLE(Red: cmsCIExyY(x: 0.64, y: 0.33, Y: 1), Green: cmsCIExyY(x: 0.30, y: 0.60, Y: 1),
                                        Blue: cmsCIExyY(x: 0.15, y: 0.06, Y: 1))
        guard let curve = cmsBuildGamma(nil, 1.8) else { return nil }
        defer { cmsFreeToneCurve(curve) }
        let curves: [OpaquePointer?] = [curve, curve, curve]
        return cmsCreateRGBProfile(&white, &primaries, curves)
    }

    /// Serialises and closes `profile`.
    static func save(_ profile: cmsHPROFILE) -> [UInt8]? {
        defer { cmsCloseProfile(profile) }
        var size: cmsUInt32Number = 0
        guard cmsSaveProfileToMem(profile, nil, &size) != 0 else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(size))
        guard cmsSaveProfileToMem(profile, &bytes, &size) != 0 else { return nil }
        return bytes
    }

    /// `jpeg` with the γ 1.8 profile in two APP2 chunks after SOI.
    static func taggedJPEG(_ jpeg: [UInt8]) -> [UInt8]? {
        guard let profile = gamma18().flatMap(save), jpeg.count > 2 else { return nil }
        let half = profile.count / 2
        var segments: [UInt8] = []
        for (number, piece) in [profile[..<half], profile[half...]].enumerated() {
            let payload = EmbeddedProfile.jpegSignature + [UInt8(number + 1), 2] + piece
            segments += [0xFF, 0xE2, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
        }
        return Array(jpeg[..<2]) + segments + Array(jpeg[2...])
    }
}
