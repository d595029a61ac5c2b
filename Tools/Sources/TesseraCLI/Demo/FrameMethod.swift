import Tessera

/// Which of two sizes a cell wants: the low-resolution thumbnail shown while the grid moves fast
/// (resolution swapping) or the full cell-sized image.
enum Resolution: Sendable {
    case low, full
}

/// One way of getting a cell's image on the frame thread. Every call happens on the frame thread.
///
/// ``image(for:resolution:)`` returns at once: either the image at the cell's size, or `nil` — the
/// cell shows a placeholder and the method makes sure a load is under way; the frame loop asks
/// again on later frames until an image comes back.
protocol FrameMethod: AnyObject {
    /// Called first in every frame: takes in images finished on other threads.
    func beginFrame()
    /// The image of `item` now, or `nil` for a placeholder.
    func image(for item: Int, resolution: Resolution) -> (any BitmapImage)?
    /// `item` scrolled out of view.
    func forget(_ item: Int)
    /// Loads still under way (the loop lets them finish before the process ends).
    var pendingLoads: Int { get }
    /// Failures so far.
    var failures: Int { get }
}

extension FrameMethod {
    func forget(_ item: Int) {}
    var pendingLoads: Int { 0 }
}
