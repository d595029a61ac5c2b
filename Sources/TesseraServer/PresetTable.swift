#if Serving
import Foundation
@_spi(Internal) import TesseraImaging
import Tessera

/// One preset's image table: every source under the root drawn once at the preset's size, read back in
/// place. Each slot carries a ``SlotRecord`` of what it holds, so the table answers the same after a
/// restart as before it, whatever other presets asked for meanwhile.
struct PresetTable: Sendable {
    let preset: ServerConfiguration.Preset
    /// The preset's box: the size of a `fill` answer, the bound of a `fit` one.
    let box: PixelSize
    let table: ImageTable

    /// Opens (or creates) the table of `preset` in `directory`, with room for `capacity` entries.
    init(_ preset: ServerConfiguration.Preset, capacity: Int, directory: URL, observability: Observability) throws {
        self.preset = preset
        box = PixelSize(width: preset.width, height: preset.height)
        // One row more than the box for the slot record; the name says so, so that a table of the layout
        // before records is never opened as one of this layout.
        let format = ImageFormat(name: "serve-\(preset.name)-\(preset.width)x\(preset.height)-\(preset.mode.rawValue)-r1",
                                 family: "serve-\(preset.name)", style: .bgra32,
                                 size: PixelSize(width: preset.width, height: preset.height + 1), maximumCount: capacity)
        table = try ImageTable(format: format, directory: directory, observability: observability)
    }

    /// The table's entity id of a file: its relative path.
    static func entityID(of file: RootDirectory.File) -> UUID { UUID(hashing: file.relativePath) }

    /// The source id of `file` in this preset: everything that shapes the pixels.
    func sourceID(of file: RootDirectory.File) -> UUID {
        UUID(hashing: "\(file.relativePath)\u{0}\(file.version)\u{0}\(preset.name)\u{0}\(box.width)x\(box.height)\u{0}\(preset.mode.rawValue)")
    }

    /// The image of `file` when the table holds it and its record verifies. An entry whose record does
    /// not verify is deleted (it is rebuilt by the caller) and answers `nil`.
    func image(of file: RootDirectory.File) -> SlotView? {
        let entityID = Self.entityID(of: file)
        guard let entry = table.image(for: entityID, sourceID: sourceID(of: file)) else { return nil }
        if let record = SlotRecord.validate(entry, box: box, mode: preset.mode), let view = SlotView(entry, record: record) {
            return view
        }
        table.delete(entityID: entityID)
        return nil
    }

    /// Decodes `data` (the bytes of `file`) straight into a new slot, at the size `mode` gives in the box,
    /// with its record, and returns the image part.
    func store(_ data: Data, of file: RootDirectory.File, info: ImageInfo, decoder: ImageDecoder) throws -> SlotView {
        let content = Renderer.outputSize(of: info.displaySize, box: box, mode: preset.mode)
        let sourceID = sourceID(of: file)
        var record = SlotRecord(content: content)
        let entry = try table.store(entityID: Self.entityID(of: file), sourceID: sourceID) { slot in
            let target = MutableBitmapView(layout: try BitmapLayout(width: content.width, height: content.height, style: slot.layout.style,
                                                                    bytesPerRow: slot.layout.bytesPerRow),
                                           baseAddress: slot.baseAddress)
            record = SlotRecord(content: content, integrity: try Renderer.render(data, into: target, decoder: decoder))
            record.write(to: slot.row(box.height), sourceID: sourceID, box: box)
        }
        guard let view = SlotView(entry, record: record) else { throw ServiceError(.internal, "a table slot is smaller than its image") }
        return view
    }
}
#endif
