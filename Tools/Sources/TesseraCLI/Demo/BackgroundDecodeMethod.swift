import Dispatch
import Foundation
import Tessera

/// Method 2 (the Image I/O chapter's threaded loading): the frame thread shows a placeholder and
/// queues the read, decode and scale on a global concurrent queue; the image is shown on the first
/// frame after it arrives. Nothing is cached: a cell that scrolls out and back loads again.
final class BackgroundDecodeMethod: FrameMethod {
    private let loader: BackgroundLoader
    private let inbox = Inbox<Bitmap?>()
    private var arrived: [Int: Bitmap] = [:]
    private var wanted: Set<Int> = []
    private var inFlight: Set<Int> = []
    private var failed: Set<Int> = []
    private(set) var failures = 0

    init(paths: [String], size: PixelSize) {
        loader = BackgroundLoader(paths: paths, size: size)
    }

    func beginFrame() {
        for (item, bitmap) in inbox.takeAll() {
            inFlight.remove(item)
            guard let bitmap else { failed.insert(item); failures += 1; continue }
            if wanted.contains(item) { arrived[item] = bitmap }
        }
    }

    func image(for item: Int, resolution: Resolution) -> (any BitmapImage)? {
        if let bitmap = arrived.removeValue(forKey: item) {
            wanted.remove(item)
            return bitmap
        }
        wanted.insert(item)
        if !inFlight.contains(item), !failed.contains(item) {
            inFlight.insert(item)
            loader.load(item, into: inbox)
        }
        return nil
    }

    func forget(_ item: Int) {
        wanted.remove(item)
        arrived[item] = nil
    }

    var pendingLoads: Int { inFlight.count }
}

/// Reads, decodes and scales source images on a global concurrent queue (`Sendable`: immutable).
struct BackgroundLoader: Sendable {
    let paths: [String]
    let size: PixelSize
    let decoder = ImageDecoder()

    /// Queues the load of `item`; its bitmap (or `nil` on failure) lands in `inbox`.
    func load(_ item: Int, into inbox: Inbox<Bitmap?>) {
        DispatchQueue.global(qos: .userInitiated).async { [self] in
            let bitmap = try? decoder.thumbnail(ImageFiles.read(paths[item]), size: size, mode: .fill)
            inbox.put(item, bitmap)
        }
    }
}
