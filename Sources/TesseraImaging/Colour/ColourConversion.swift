@_spi(Internal) import TesseraCore
import CLCMS2

/// Converts decoded pixels from the colour space of an embedded ICC profile to sRGB with Little CMS 2
/// (docs/COLOUR.md). The codecs call it on the pixels they have just decoded, after their cheap
/// downscaling (DCT scaling, box reduction, libwebp's scaler), so a thumbnail pays for its own pixels
/// only; a future codec (HEIC, AVIF) calls ``use(of:for:)`` and ``ColourTransform/apply(to:)`` the same way.
///
/// - Which profiles: RGB profiles of the input, display, output and colour-space classes for RGB
///   pixels, CMYK profiles for CMYK JPEGs. Anything lcms2 cannot open, a profile of another colour
///   space (gray, Lab, a device link) or one larger than ``maximumProfileBytes`` is **ignored**: the
///   pixels stay as decoded, as browsers do with profiles they cannot use. A bad profile never fails
///   a decode, since the pixels themselves are fine.
/// - sRGB-equivalent profiles cost nothing after their first sighting: on first use the profile's
///   transform is run over a 9 × 9 × 9 grid of colours, and when no channel moves by more than one
///   level the profile is remembered as sRGB and no transform runs.
/// - Transforms are cached by the profile's bytes (the whole bytes are the key, so two profiles can
///   never share an entry, whatever their hashes), least recently used first out, at most
///   ``cacheCapacity`` entries and ``cacheByteBudget`` bytes of profile keys. They are made with
///   `cmsFLAGS_NOCACHE`, which drops lcms2's one-pixel cache, the only state a transform changes
///   while it runs, so one transform serves any number of threads at once.
/// - Intent: perceptual (a matrix/shaper profile such as Display P3 gives the same result with every
///   intent; LUT profiles, typically CMYK, use their perceptual table).
enum ColourConversion {
    /// The largest profile read: 4 MiB. Display P3 is under 1 KB and LUT-based CMYK profiles a few
    /// hundred KB to about 2 MB; larger claims are not assembled at all.
    static let maximumProfileBytes = 4 << 20
    /// At most this many profile/pixel-format pairs are cached.
    static let cacheCapacity = 32
    /// At most this many bytes of profile keys are cached (a few large CMYK profiles).
    static let cacheByteBudget = 16 << 20

    /// How the decoded pixels are laid out for the transform.
    enum PixelInput: Hashable, Sendable {
        /// RGB in 4-byte BGRA (the fourth byte is kept; see ``ColourTransform/apply(to:premultiplied:)``).
        case rgb
        /// CMYK, 0 = no ink; written back as BGRA in place.
        case cmyk
        /// CMYK stored inverted (255 = no ink), as Adobe's APP14 marker announces.
        case cmykInverted
    }

    /// What a profile means for a decode.
    enum ProfileUse: Sendable {
        /// Not usable (malformed, wrong colour space, too large): leave the pixels as decoded.
        case ignored
        /// Equivalent to sRGB: leave the pixels as decoded, and treat the file as colour-managed.
        case sRGB
        /// Convert with this transform.
        case convert(ColourTransform)

        /// The transform to run, if any.
        var transform: ColourTransform? {
            if case .convert(let transform) = self { transform } else { nil }
        }
        /// Whether the profile describes the pixels (``sRGB`` or ``convert(_:)``).
        var isUsable: Bool {
            if case .ignored = self { false } else { true }
        }
    }

    /// What `profile` means for pixels laid out as `input`, from the cache or made now.
    static func use(of profile: [UInt8], for input: PixelInput) -> ProfileUse {
        // A header (128 bytes) and a tag count at least, and no more bytes declared (big-endian,
        // bytes 0–3) than embedded: lcms2 would clamp a larger claim and read what is there, but a
        // profile that says it is longer than it is was cut off, and is ignored like any other damage.
        guard profile.count >= 132, profile.count <= maximumProfileBytes,
              Int(profile[0]) << 24 | Int(profile[1]) << 16 | Int(profile[2]) << 8 | Int(profile[3]) <= profile.count
        else { return .ignored }
        let key = CacheKey(profile: profile, input: input)
        if let known = cache.withLock({ $0.lookup(key) }) { return known }
        let made = make(profile, input: input)
        cache.withLock { $0.insert(made, for: key) }
        return made
    }

    /// The process's transform cache.
    private static let cache = LockedValue(TransformCache())

    /// Opens `profile`, checks its class and colour space, makes the transform to sRGB and tests
    /// whether it is (near) identity.
    private static func make(_ profile: [UInt8], input: PixelInput) -> ProfileUse {
        let opened = profile.withUnsafeBytes { cmsOpenProfileFromMem($0.baseAddress, cmsUInt32Number($0.count)) }
        guard let source = opened else { return .ignored }
        defer { cmsCloseProfile(source) }
        let deviceClass = cmsGetDeviceClass(source)
        guard [cmsSigInputClass, cmsSigDisplayClass, cmsSigOutputClass, cmsSigColorSpaceClass].contains(deviceClass) else { return .ignored }
        let space = cmsGetColorSpace(source)
        let format: cmsUInt32Number
        switch input {
        case .rgb: format = tessera_lcms_bgra_8
        case .cmyk: format = tessera_lcms_cmyk_8
        case .cmykInverted: format = tessera_lcms_cmyk_8_inverted
        }
        let isRGB = input == .rgb
        guard space == (isRGB ? cmsSigRgbData : cmsSigCmykData) else { return .ignored }
        guard let sRGB = cmsCreate_sRGBProfile() else { return .ignored }
        defer { cmsCloseProfile(sRGB) }
        if isRGB, isNearIdentity(source, sRGB) { return .sRGB }
        let output = isRGB ? format : tessera_lcms_bgra_8
        let flags = cmsUInt32Number(cmsFLAGS_NOCACHE) | (isRGB ? cmsUInt32Number(cmsFLAGS_COPY_ALPHA) : 0)
        guard let handle = cmsCreateTransform(source, format, sRGB, output, cmsUInt32Number(INTENT_PERCEPTUAL), flags) else {
            return .ignored
        }
        return .convert(ColourTransform(handle, writesAlpha: isRGB))
    }

    /// Whether converting from `source` to `sRGB` moves no channel of a 9 × 9 × 9 grid (0, 32, …, 224,
    /// 255 per channel) by more than one level.
    private static func isNearIdentity(_ source: cmsHPROFILE, _ sRGB: cmsHPROFILE) -> Bool {
        guard let probe = cmsCreateTransform(source, tessera_lcms_rgb_8, sRGB, tessera_lcms_rgb_8,
                                             cmsUInt32Number(INTENT_PERCEPTUAL), cmsUInt32Number(cmsFLAGS_NOCACHE))
        else { return false }
        defer { cmsDeleteTransform(probe) }
        let levels: [UInt8] = [0, 32, 64, 96, 128, 160, 192, 224, 255]
        var grid: [UInt8] = []
        grid.reserveCapacity(levels.count * levels.count * levels.count * 3)
        for r in levels { for g in levels { for b in levels { grid += [r, g, b] } } }
        var converted = [UInt8](repeating: 0, count: grid.count)
        grid.withUnsafeBytes { input in
            converted.withUnsafeMutableBytes { output in
                cmsDoTransform(probe, input.baseAddress, output.baseAddress, cmsUInt32Number(grid.count / 3))
            }
        }
        return zip(grid, converted).allSatisfy { abs(Int($0) - Int($1)) <= 1 }
    }
}

/// One lcms2 transform to sRGB, deleted when the last user lets it go.
///
/// `@unchecked Sendable` is safe because the transform is made with `cmsFLAGS_NOCACHE`: lcms2 then
/// keeps no per-call state in it (the one-pixel cache is what `cmsDoTransform` would otherwise
/// update), so concurrent `cmsDoTransformLineStride` calls only read it; it is deleted in `deinit`,
/// after every user has released it.
final class ColourTransform: @unchecked Sendable {
    private let handle: cmsHTRANSFORM
    /// Whether the output's fourth byte comes from the transform (RGB: the alpha is copied); CMYK
    /// input has no alpha, so ``apply(to:)`` sets it to 255.
    private let writesAlpha: Bool

    init(_ handle: cmsHTRANSFORM, writesAlpha: Bool) {
        self.handle = handle
        self.writesAlpha = writesAlpha
    }

    deinit { cmsDeleteTransform(handle) }

    /// Converts the 4-byte pixels of `view` (``PixelStyle/bgra32`` or ``PixelStyle/bgr32``, or CMYK
    /// for a CMYK transform) to sRGB BGRA in place, with the view's stride.
    ///
    /// `premultiplied` pixels (BGRA with some alpha below 255) are un-premultiplied, converted and
    /// premultiplied again, row by row: lcms2 2.14's own premultiplied 8-bit formats give wrong
    /// colours (P3 (25, 50, 100) at alpha 128 comes out as (127, 128, 128)), so Tessera does not use them.
    func apply(to view: MutableBitmapView, premultiplied: Bool = false) {
        let layout = view.layout
        guard layout.style.bytesPerPixel == 4, layout.width > 0, layout.height > 0 else { return }
        if premultiplied {
            for y in 0..<layout.height {
                let row = view.row(y).assumingMemoryBound(to: UInt8.self)
                PixelConversion.unpremultiplyRow(row, to: row, width: layout.width)
                cmsDoTransform(handle, row, row, cmsUInt32Number(layout.width))
                PixelConversion.premultiplyRow(row, width: layout.width)
            }
            return
        }
        // lcms2 counts in cmsUInt32Number; a decoded bitmap's rows and stride fit (decoding limits).
        cmsDoTransformLineStride(handle, view.baseAddress, view.baseAddress, cmsUInt32Number(layout.width),
                                 cmsUInt32Number(layout.height), cmsUInt32Number(layout.bytesPerRow),
                                 cmsUInt32Number(layout.bytesPerRow), 0, 0)
        if !writesAlpha {
            for y in 0..<layout.height {
                let pixels = view.row(y).assumingMemoryBound(to: UInt8.self)
                for x in 0..<layout.width { pixels[x &* 4 &+ 3] = 255 }
            }
        }
    }
}

/// The transform cache: profile bytes and pixel input → what the profile means, least recently used
/// out first, in the library's one ``LRUMap`` (an entry costs its profile's bytes). Not thread-safe:
/// ``ColourConversion`` guards it with a ``LockedValue``.
struct TransformCache {
    private var entries = LRUMap<ColourConversion.CacheKey, ColourConversion.ProfileUse>()

    /// The cached use of `key`, marked most recently used.
    mutating func lookup(_ key: ColourConversion.CacheKey) -> ColourConversion.ProfileUse? {
        entries.touch(key)?.value
    }

    /// Caches `use` for `key`, evicting least recently used entries to stay within both limits.
    mutating func insert(_ use: ColourConversion.ProfileUse, for key: ColourConversion.CacheKey) {
        guard entries.peek(key) == nil, key.profile.count <= ColourConversion.cacheByteBudget else { return }
        entries.insert(key, value: use, cost: key.profile.count)
        while entries.count > ColourConversion.cacheCapacity || entries.totalCost > ColourConversion.cacheByteBudget,
              entries.removeOldest() != nil {}
    }

    /// The number of cached entries (for tests).
    var count: Int { entries.count }
}

extension ColourConversion {
    /// A cache key: the whole profile and the pixel layout it converts.
    struct CacheKey: Hashable {
        var profile: [UInt8]
        var input: PixelInput
    }
}
