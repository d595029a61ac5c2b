import TesseraImaging
/// What one image table stores: a fixed pixel size and style for every entry, and how many entries.
///
/// Like Fast Image Cache's `FICImageFormat`, every entry of a format has exactly the same size, so
/// an entry is found by arithmetic (`slot × bytesPerEntry`) and handed out without copying.
///
/// Sizes, worked through for a 100×100 ``/TesseraImaging/PixelStyle/bgra32`` format with `maximumCount` 500:
/// - ``bytesPerRow``: 100 × 4 = 400 bytes, rounded up to a multiple of 64 → **448**.
/// - pixels: 448 × 100 = 44,800 bytes; ``bytesPerEntry`` rounds that up to a 4096-byte page →
///   **45,056** (11 pages).
/// - ``headerBytes``: one 4096-byte page of file header + 500 × 64 = 32,000 bytes of slot headers,
///   rounded up to 32,768 → **36,864**.
/// - ``maximumBytesOnDisk``: 36,864 + 500 × 45,056 = 36,864 + 22,528,000 = **22,564,864** bytes.
public struct ImageFormat: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The page size entries are aligned to. Fixed (not `sysconf`) so a table file is portable.
    public static let pageSize = 4096
    /// The size of one slot header in the table file.
    public static let slotHeaderSize = 64

    /// Unique name; the table file is `<name>.tesseratable`. Letters, digits, `-`, `_` and `.`.
    public var name: String
    /// A group of formats for the same kind of image (for example every thumbnail size of "avatars").
    public var family: String
    /// The pixel style of every entry.
    public var style: PixelStyle
    /// The size of every entry **in pixels**. It already includes ``scale``: a 50×50 point thumbnail
    /// at scale 2 has a `size` of 100×100.
    public var size: PixelSize
    /// The display scale the pixels were rendered for (informational; 1 by default). It does not
    /// change the stored size, which is ``size``.
    public var scale: Int
    /// The most entries the table ever holds. Storing more replaces the least recently used entry.
    public var maximumCount: Int
    /// The permission mode of the table file.
    public var protection: FileProtection
    /// Whether ``ImageCache`` keeps an entry decoded from a source that ended early
    /// (``/TesseraImaging/DecodeIntegrity/truncated``, under the lenient decoding policy). `false` by default:
    /// the image is drawn and handed to the requests waiting for it, then dropped from the table, so the
    /// next request loads the source again (a file still being written, a download cut short) instead of
    /// keeping the partial picture for as long as the entity's source id stays the same. Set it when the
    /// source id changes with the source's bytes. Damaged but complete decodes are always kept: the same
    /// bytes always decode to the same pixels.
    public var storesTruncatedImages: Bool
    /// Whether every entry keeps a ``/TesseraImaging/ThumbHash`` of its pixels beside them, computed when the
    /// entry is stored from the pixels just drawn (no second decode) and answered by
    /// ``ImageTable/thumbHash(for:sourceID:)`` and ``ImageCache/cachedPlaceholder(for:format:)`` without
    /// reading the pixels. `false` by default; it costs ``placeholderBytes`` per entry (often nothing: the
    /// entry's page padding has room) and a hash per store (at most 100 × 100 pixels are hashed; a larger
    /// entry is box-averaged first).
    public var storesThumbHash: Bool

    /// Creates a format.
    public init(name: String, family: String = "", style: PixelStyle, size: PixelSize, scale: Int = 1,
                maximumCount: Int, protection: FileProtection = .ownerOnly, storesTruncatedImages: Bool = false,
                storesThumbHash: Bool = false) {
        self.storesTruncatedImages = storesTruncatedImages
        self.storesThumbHash = storesThumbHash
        self.name = name
        self.family = family
        self.style = style
        self.size = size
        self.scale = scale
        self.maximumCount = maximumCount
        self.protection = protection
    }

    private enum CodingKeys: String, CodingKey {
        case name, family, style, size, scale, maximumCount, protection, storesTruncatedImages, storesThumbHash
    }

    /// Decodes a format; `storesTruncatedImages` and `storesThumbHash` may be absent (`false`).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(name: try c.decode(String.self, forKey: .name), family: try c.decode(String.self, forKey: .family),
                  style: try c.decode(PixelStyle.self, forKey: .style), size: try c.decode(PixelSize.self, forKey: .size),
                  scale: try c.decode(Int.self, forKey: .scale), maximumCount: try c.decode(Int.self, forKey: .maximumCount),
                  protection: try c.decode(FileProtection.self, forKey: .protection),
                  storesTruncatedImages: try c.decodeIfPresent(Bool.self, forKey: .storesTruncatedImages) ?? false,
                  storesThumbHash: try c.decodeIfPresent(Bool.self, forKey: .storesThumbHash) ?? false)
    }

    /// The layout of one entry's pixels (aligned rows, see ``/TesseraImaging/PixelStyle/bytesPerRow(forWidth:)``).
    public var layout: BitmapLayout { BitmapLayout(width: size.width, height: size.height, style: style) }

    /// Bytes per row of an entry: `⌈width × bytesPerPixel / 64⌉ × 64`.
    public var bytesPerRow: Int { style.bytesPerRow(forWidth: size.width) }

    /// Bytes one entry occupies in the file: `bytesPerRow × height` (plus ``placeholderBytes`` when the
    /// format ``storesThumbHash``) rounded up to the 4096-byte page size, so each entry starts on its own
    /// page and can be handed out (or mapped) on its own. For 100 × 100 bgra32 that is 44,800 bytes and
    /// 11 pages with or without the hash (44,800 + 64 ≤ 45,056); for 64 × 64 bgra32, 16,384 bytes fill
    /// exactly 4 pages, so the hash costs a fifth.
    public var bytesPerEntry: Int { Self.roundToPage(bytesPerRow * size.height + (storesThumbHash ? Self.placeholderBytes : 0)) }

    /// The bytes after an entry's pixels that hold its ThumbHash when the format ``storesThumbHash``: a length
    /// byte, the hash (at most 47 bytes; the largest ThumbHash has 32), and at bytes 56..<64 a checksum of the
    /// entity id, the source id, the length and the hash, so a hash is only ever read for the entry it was
    /// computed from, even before the entry's pixel checksum has been verified.
    public static let placeholderBytes = 64

    /// Bytes before the first entry: one page of file header plus `maximumCount × 64` bytes of slot
    /// headers, rounded up to a page.
    public var headerBytes: Int { Self.pageSize + Self.roundToPage(maximumCount * Self.slotHeaderSize) }

    /// The largest the table file can become: `headerBytes + maximumCount × bytesPerEntry` (see the
    /// worked example in the type's documentation). The file grows towards it as slots are used.
    public var maximumBytesOnDisk: Int { headerBytes + maximumCount * bytesPerEntry }

    /// The table's file name, `<name>.tesseratable`.
    public var fileName: String { name + ".tesseratable" }

    /// `"name: WxH style ×count"`.
    public var description: String { "\(name): \(size) \(style) ×\(maximumCount)" }

    /// Throws unless the format can back a table: a safe file name, a positive size and count, and a
    /// total size far below the address space.
    public func validate() throws(TesseraError) {
        func fail(_ reason: String) -> TesseraError { TesseraError(.storage(.invalidFormat(name: name, reason: reason))) }
        let allowed = name.utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x2D || c == 0x5F || c == 0x2E
        }
        guard !name.isEmpty, name.utf8.count <= 200, allowed, !name.hasPrefix(".") else {
            throw fail("the name must be 1–200 letters, digits, '-', '_' or '.' and not start with '.'")
        }
        guard size.width > 0, size.height > 0, size.width <= 1 << 15, size.height <= 1 << 15 else {
            throw fail("size \(size) must be positive and at most 32768 pixels per side")
        }
        guard maximumCount > 0, maximumCount <= 1 << 24 else { throw fail("maximumCount \(maximumCount) must be 1…16,777,216") }
        guard scale > 0 else { throw fail("scale must be positive") }
        let (total, overflow) = maximumCount.multipliedReportingOverflow(by: bytesPerEntry)
        guard !overflow, total <= 1 << 44 else { throw fail("the table would exceed 16 TiB") }
    }

    static func roundToPage(_ n: Int) -> Int { (n + pageSize - 1) / pageSize * pageSize }
}
