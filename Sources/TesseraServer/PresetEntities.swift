#if Serving
import Foundation
import Metrics
@_spi(Internal) import TesseraImaging
import Tessera

/// A file under the root as an image-table entity: its id is the relative path, its source id adds the version.
struct FileEntity: ImageEntity {
    let file: RootDirectory.File
    let preset: ServerConfiguration.Preset
    let fittedSizes: LockedValue<[UUID: PixelSize]>
    let entityID: UUID
    let sourceImageID: UUID

    init(file: RootDirectory.File, preset: ServerConfiguration.Preset, fittedSizes: LockedValue<[UUID: PixelSize]>) {
        self.file = file
        self.preset = preset
        self.fittedSizes = fittedSizes
        entityID = UUID(hashing: file.relativePath)
        sourceImageID = UUID(hashing: file.relativePath + "\u{0}" + file.version)
    }

    func sourceImageURL(for format: ImageFormat) -> URL? { URL(fileURLWithPath: file.realPath) }

    /// `fill`: the slot, covered and cropped. `fit`: the fitted size at the slot's top-left corner, the rest clear.
    func draw(_ source: Bitmap, in context: DrawingContext, for format: ImageFormat) throws {
        context.clear()
        guard preset.mode == .fit else {
            try context.draw(source, in: context.bounds, mode: .aspectFill)
            return
        }
        let size = ImageService.fittedSize(of: source.layout.size, in: format.size)
        fittedSizes.withLock { $0[sourceImageID] = size }
        try context.draw(source, in: Rect(x: 0, y: 0, width: Double(size.width), height: Double(size.height)), mode: .fill)
    }
}

/// Reads preset sources from disk and decodes them once, both in a decode slot, just large enough for every preset.
struct PresetSourceProvider: SourceImageProviding {
    let decoder: ImageDecoder
    let slots: DecodeSlots
    let metrics: ServiceMetrics
    let sizes: [PixelSize]
    let counters: LockedValue<ServiceStatistics>
    let maximumBytes: Int

    func sourceImage(at url: URL, for entity: any ImageEntity, format: ImageFormat) async throws -> SourceImage {
        // Read in the slot: requests waiting for a slot hold no source bytes.
        let bitmap = try await slots.run {
            let data = try Data(contentsOf: url)
            try decoder.limits.checkInput(byteCount: data.count)
            _ = try decoder.probe(data)   // the pixel limit, before any pixel is allocated
            let start = ContinuousClock.now
            defer { metrics.decodeTime.recordSince(start) }
            counters.withLock { $0.decodes += 1 }
            return try decoder.decode(data, covering: sizes)
        }
        return .decoded(bitmap)
    }

    /// Each preset is its own family: a miss fills only the preset asked for.
    func shouldProcessAllFormats(inFamily family: String, for entity: any ImageEntity) -> Bool { false }
}
#endif
