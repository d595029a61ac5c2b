#if Serving
import Foundation
@_spi(Internal) import TesseraImaging
import Tessera

/// One preset's image table: every source drawn once by the preset's recipe, read back in place. Each
/// slot carries a ``SlotRecord`` of what it holds, so the table answers the same after a restart as before
/// it, whatever other presets asked for meanwhile.
///
/// The table holds pixels, so its identity is the recipe without its encoding (``pixels``): a preset that
/// changes its gravity or blur gets a new table (the name carries a hash of the recipe), one that changes
/// only its format, quality or metadata keeps its table and re-encodes.
struct PresetTable: Sendable {
    let preset: ServerConfiguration.Preset
    /// The preset's recipe without `ImageProcessing.format`, `ImageProcessing.quality` and `ImageProcessing.metadata`: everything
    /// that shapes the pixels.
    let pixels: ImageProcessing
    /// The whole recipe's `ImageProcessing.identity`, worked out once (it is part of every response key).
    let identity: String
    /// The slot's image area, the largest canvas the recipe can make (``slotSize(of:)``).
    let slot: PixelSize
    let table: ImageTable

    /// What a fill made: the image in its new slot, or, for a canvas larger than the slot (a very tall
    /// image of a width-only preset), the rendered bitmap, answered without being stored.
    enum Filled: Sendable {
        case slot(SlotView)
        case unstored(Bitmap)
    }

    /// Opens (or creates) the table of `preset` in `directory`, with room for `capacity` entries.
    init(_ preset: ServerConfiguration.Preset, capacity: Int, directory: URL, observability: Observability) throws {
        self.preset = preset
        var pixels = preset.processing
        pixels.format = nil
        pixels.quality = nil
        pixels.metadata = .strip
        self.pixels = pixels
        identity = preset.processing.identity
        slot = Self.slotSize(of: pixels)
        // One row more than the slot for the slot record. The name carries the recipe's hash, so a table
        // made for another recipe of the same name (or of the layout before records) is never opened as this one.
        let recipe = hexDigest(Data(pixels.identity.utf8), bytes: 6)
        let format = ImageFormat(name: "serve-\(preset.name)-\(slot.width)x\(slot.height)-\(recipe)-r2",
                                 family: "serve-\(preset.name)", style: .bgra32,
                                 size: PixelSize(width: slot.width, height: slot.height + 1), maximumCount: capacity)
        table = try ImageTable(format: format, directory: directory, observability: observability)
    }

    /// The slot of `recipe`: the largest output it makes (`ImageProcessing.maximumOutputSize`: its box in
    /// output pixels, swapped by a quarter `rotate`, with its `padding`). With one side left out, the box's
    /// other side is twice the given one: `width: 300` has 300×600 slots, room for every photo up to 1:2 (a
    /// portrait 3:4 photo takes 300×400 of it); taller images are answered without the table.
    static func slotSize(of recipe: ImageProcessing) -> PixelSize {
        if let size = recipe.maximumOutputSize { return size }
        let box = switch (recipe.scaledWidth, recipe.scaledHeight) {
        case let (width?, nil): PixelSize(width: width, height: 2 * width)
        case let (nil, height?): PixelSize(width: 2 * height, height: height)
        default: PixelSize(width: 1, height: 1)   // no side: refused by ServerConfiguration.validate()
        }
        return recipe.outputSize(ofCanvas: box)
    }

    /// A source as a table sees it: what names it (a file's ``RootDirectory/File/identity``, `@NAME/KEY`
    /// for an object) and its version (a file's size, modification time and inode; an object's ETag).
    struct Source: Sendable, Hashable {
        let identity: String
        let version: String

        init(identity: String, version: String) {
            self.identity = identity
            self.version = version
        }

        init(_ file: RootDirectory.File) { self.init(identity: file.identity, version: file.version) }
    }

    /// The table's entity id of a source: its identity (a file's relative path under the root).
    static func entityID(of file: Source) -> UUID { UUID(hashing: file.identity) }


    /// Removes the entry of the source named `identity` (``Source/identity``), whatever its version;
    /// whether the table held one. The slot's header is invalidated in the file, so a restart does not
    /// bring it back.
    func forget(identity: String) -> Bool {
        table.delete(entityID: UUID(hashing: identity))
    }

    /// The source id of `file` in this preset: everything that shapes the pixels.
    func sourceID(of file: Source) -> UUID {
        UUID(hashing: "\(file.identity)\u{0}\(file.version)\u{0}\(preset.name)\u{0}\(pixels.identity)")
    }

    /// The image of `file` when the table holds it and its record verifies. An entry whose record does
    /// not verify is deleted (it is rebuilt by the caller) and answers `nil`.
    func image(of file: Source) -> SlotView? {
        let entityID = Self.entityID(of: file)
        guard let entry = table.image(for: entityID, sourceID: sourceID(of: file)) else { return nil }
        if let record = SlotRecord.validate(entry, slot: slot), let view = SlotView(entry, record: record) {
            return view
        }
        table.delete(entityID: entityID)
        return nil
    }

    /// Copies `image` (``pixels`` drawn from `file`) into a new slot with its record, and returns the
    /// slot's view; an image larger than the slot is returned as it is, not stored.
    func store(_ image: Bitmap, of file: Source) throws -> Filled {
        let content = PixelSize(width: image.width, height: image.height)
        guard content.width <= slot.width, content.height <= slot.height, image.style == .bgra32 else { return .unstored(image) }
        let sourceID = sourceID(of: file)
        let record = SlotRecord(content: content, integrity: image.integrity)
        let entry = try table.store(entityID: Self.entityID(of: file), sourceID: sourceID) { target in
            let area = MutableBitmapView(layout: try BitmapLayout(width: content.width, height: content.height, style: target.layout.style,
                                                                  bytesPerRow: target.layout.bytesPerRow),
                                         baseAddress: target.baseAddress)
            try image.withUnsafeBytes { (bytes) throws(TesseraError) in
                try PixelConversion.convert(source: bytes.baseAddress!, layout: image.layout, to: area)
            }
            record.write(to: target.row(slot.height), sourceID: sourceID, box: slot)
        }
        guard let view = SlotView(entry, record: record) else { throw ServiceError(.internal, "a table slot is smaller than its image") }
        return .slot(view)
    }
}
#endif
