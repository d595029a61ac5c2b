@_spi(Internal) import TesseraImaging
import TesseraTables
import Foundation

/// The image tables of an ``ImageManager`` (``ImageManager/Configuration/tables``): one ``/TesseraTables/ImageTable``
/// per ``URLTableVariant``, each entry an image's identity (entity id: the hash of its URL or cache key) made
/// from one version of its bytes (source id: the first 16 bytes of their SHA-256).
///
/// A lookup needs the source id of the bytes the answer must come from. The manager learns it whenever it
/// holds the bytes (from the disk cache, a download or a revalidation) and keeps the last 10,000 in memory, so
/// within a process a repeated request is answered from its table with no I/O; after a restart the first
/// request for an image reads its bytes from the disk cache (fresh, or revalidated) and is then answered from
/// the table without decoding. New bytes have another source id, so a changed image is never answered with
/// the old pixels: the lookup misses, and the new decode replaces the entry.
final class URLTables: Sendable {
    let settings: ImageManager.TableStorage
    private let observability: Observability
    private let state = LockedValue(State())
    /// How many identities' source ids are kept.
    static let knownSources = 10_000

    private struct State {
        /// The tables by ``variantKey(of:)``, which stands for one ``URLTableVariant`` and is cheaper to hash.
        var tables: [ImageKey: ImageTable] = [:]
        /// Variants whose table could not be opened (another process holds it, the directory is unusable),
        /// or came after ``ImageManager/TableStorage/maximumTables``: not stored, not asked again.
        var unavailable: Set<ImageKey> = []
        /// The source id of the bytes last seen per image identity.
        var sources = LRUMap<URL, UUID>()
    }

    /// Where one variant of one image lives: its table and its entity id.
    struct Place {
        let table: ImageTable
        let entityID: UUID
    }

    init(settings: ImageManager.TableStorage, observability: Observability) {
        self.settings = settings
        self.observability = observability
    }

    /// The source id of `data`: the first 16 bytes of its SHA-256.
    static func sourceID(of data: Data) -> UUID {
        let d = SHA256.digest(data)
        return UUID(uuid: (d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7], d[8], d[9], d[10], d[11], d[12], d[13], d[14], d[15]))
    }

    /// The entity id of the image whose identity in the caches is `identity` (its URL or cache key).
    static func entityID(of identity: URL) -> UUID { UUID(hashing: identity.absoluteString) }

    /// `key` without what does not change the pixels: its URL (one placeholder for all) and the processing's
    /// output format and quality. Keys of one variant are equal, and keys of different variants differ.
    static func variantKey(of key: ImageKey) -> ImageKey {
        var variant = key
        variant.url = placeholder
        variant.processing?.format = nil
        variant.processing?.quality = nil
        return variant
    }

    private static let placeholder = URL(string: "tessera-variant:")!

    /// The place of `key`, opening its table when needed; `nil` when its output size is not fixed or its
    /// table is unavailable.
    func place(for key: ImageKey) -> Place? {
        guard let table = table(for: Self.variantKey(of: key)) else { return nil }
        return Place(table: table, entityID: Self.entityID(of: key.url))
    }

    /// `key`'s image from its table, made from the bytes last seen for its identity; `nil` when none were
    /// seen in this process, or the table holds nothing made from them. No I/O, no decode, no copy.
    func cachedImage(for key: ImageKey) -> TableImage? {
        let variant = Self.variantKey(of: key)
        guard let (table, source) = state.withLock({ state -> (ImageTable, UUID)? in
                  guard let table = state.tables[variant], let source = state.sources.touch(key.url)?.value else { return nil }
                  return (table, source)
              }) else { return nil }
        return table.image(for: Self.entityID(of: key.url), sourceID: source)
    }

    /// The entry at `place` made from the bytes `sourceID` names, or `nil`.
    func image(at place: Place, sourceID: UUID) -> TableImage? {
        place.table.image(for: place.entityID, sourceID: sourceID)
    }

    /// Stores `image` at `place` as made from `sourceID` and returns the entry, unless it does not fit the
    /// table's size or was decoded from bytes that ended early (a download cut short). A failure (every slot
    /// in use, a full disk) is logged and leaves the table without the entry.
    @discardableResult
    func store(_ image: Bitmap, at place: Place, sourceID: UUID) -> TableImage? {
        let format = place.table.format
        guard image.width == format.size.width, image.height == format.size.height, image.integrity != .truncated else { return nil }
        do {
            return try place.table.store(entityID: place.entityID, sourceID: sourceID) { view in
                try PixelConversion.convert(image, to: view)
            }
        } catch {
            observability.logger.warning("URL table store failed", metadata: ["table": "\(format.name)", "error": "\(error)"])
            return nil
        }
    }

    /// Notes that the bytes of the image whose identity is `identity` are now those `sourceID` names.
    func noteSource(_ sourceID: UUID, for identity: URL) {
        state.withLock { state in
            state.sources.insert(identity, value: sourceID, cost: 1)
            while state.sources.count > Self.knownSources { _ = state.sources.removeOldest() }
        }
    }

    /// Forgets the source of `identity` (its disk copy is gone or to be downloaded again): the next request
    /// goes through the bytes.
    func forgetSource(for identity: URL) { state.withLock { _ = $0.sources.remove(identity) } }

    /// Forgets every source.
    func forgetSources() { state.withLock { $0.sources.removeAll() } }

    /// The tables open now.
    var openTables: [ImageTable] { state.withLock { Array($0.tables.values) } }

    /// The table of the variant `variantKey` stands for, opened on first use (outside the lock: opening reads
    /// the slot headers); `nil` when its output size is not fixed or the table is unavailable.
    private func table(for variant: ImageKey) -> ImageTable? {
        let known = state.withLock { state -> (ImageTable?, Bool) in
            (state.tables[variant], state.unavailable.contains(variant) || state.tables.count >= settings.maximumTables)
        }
        if let table = known.0 { return table }
        if known.1 { return nil }
        guard let style = URLTableVariant(variant) else {
            state.withLock { _ = $0.unavailable.insert(variant) }
            return nil
        }
        let format = style.format(style: settings.style, maximumCount: settings.maximumCount)
        let opened: ImageTable?
        do {
            opened = try ImageTable(format: format, directory: settings.directory, observability: observability)
        } catch {
            observability.logger.warning("URL table unavailable: its variant is not stored", metadata: [
                "table": "\(format.name)", "variant": "\(style.style)", "error": "\(error)",
            ])
            opened = nil
        }
        return state.withLock { state in
            // Another request may have opened it meanwhile: then this instance is dropped here.
            if let table = state.tables[variant] { return table }
            guard let opened, state.tables.count < settings.maximumTables else {
                state.unavailable.insert(variant)
                return nil
            }
            state.tables[variant] = opened
            return opened
        }
    }
}
