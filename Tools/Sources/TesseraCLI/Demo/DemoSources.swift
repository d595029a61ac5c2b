import ArgumentParser
import Foundation
import Tessera

/// The demo's source images: JPEGs of `size` cut from real photographs (different crops and zooms
/// of each), prepared once and kept in the work directory.
enum DemoSources {
    /// The JPEG and PNG files under `directory`, recursively, sorted.
    static func photographs(in directory: String) -> [String] {
        guard let walker = FileManager.default.enumerator(atPath: directory) else { return [] }
        let extensions: Set<String> = ["jpg", "jpeg", "png", "webp"]
        var found: [String] = []
        while let relative = walker.nextObject() as? String {
            if extensions.contains((relative as NSString).pathExtension.lowercased()) {
                found.append((directory as NSString).appendingPathComponent(relative))
            }
        }
        return found.sorted()
    }

    /// Makes sure `count` sources of `size` exist under `directory`, deriving the missing ones from
    /// `photos`; returns their paths in item order. Shows a progress bar while preparing.
    static func prepare(count: Int, size: PixelSize, quality: Int, photos: [String], directory: String,
                        quiet: Bool) throws -> [String] {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let paths = (0..<count).map { (directory as NSString).appendingPathComponent(String(format: "photo-%04d.jpg", $0)) }
        let missing = paths.indices.filter { !FileManager.default.fileExists(atPath: paths[$0]) }
        guard !missing.isEmpty else { return paths }
        guard !photos.isEmpty else { throw ValidationError("no photographs to derive the demo's sources from") }
        var progress = ProgressBar(total: missing.count, label: "preparing \(missing.count) source images \(size)")
        if !quiet { progress.update(0) }
        let decoder = ImageDecoder()
        let encoder = JPEGEncoder(quality: quality)
        var done = 0
        // Group by photograph so that each is decoded once.
        let byPhoto = Dictionary(grouping: missing) { $0 % photos.count }
        for photoIndex in byPhoto.keys.sorted() {
            let items = byPhoto[photoIndex]!
            let zoomMax = 1 + 0.3 * Double(min(3, items.max()! / photos.count))
            let covering = PixelSize(width: Int(Double(size.width) * zoomMax), height: Int(Double(size.height) * zoomMax))
            let photo = try decoder.decode(ImageFiles.read(photos[photoIndex]), minimumSize: covering)
            for item in items {
                let variant = item / photos.count
                let bitmap = try crop(photo, to: size, variant: variant)
                try Data(encoder.encode(bitmap)).write(to: URL(fileURLWithPath: paths[item]), options: .atomic)
                done += 1
                if !quiet { progress.update(done) }
            }
        }
        if !quiet { progress.finish() }
        return paths
    }

    /// Crop number `variant` of `photo`: zoom 1, 1.3, 1.6, 1.9 times the aspect-fill size, at one of
    /// five anchor points (centre and corners), so that neighbours in the grid differ.
    static func crop(_ photo: Bitmap, to size: PixelSize, variant: Int) throws -> Bitmap {
        let zoom = 1 + 0.3 * Double(variant % 4)
        let anchors: [(Double, Double)] = [(0.5, 0.5), (0, 0), (1, 1), (1, 0), (0, 1)]
        let (ax, ay) = anchors[(variant / 4 + variant) % anchors.count]
        let fill = ContentMode.fill.placement(of: PixelSize(width: photo.width, height: photo.height), in: Rect(size: size))
        let width = fill.width * zoom, height = fill.height * zoom
        let rect = Rect(x: (Double(size.width) - width) * ax, y: (Double(size.height) - height) * ay, width: width, height: height)
        return try Bitmap.drawing(size: size, style: .bgr32) { context in
            try context.draw(photo, in: rect, mode: .stretch)
        }
    }
}
