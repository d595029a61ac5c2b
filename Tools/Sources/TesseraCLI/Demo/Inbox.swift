import TesseraImaging
@_spi(Internal) import TesseraImaging

/// Results handed from background threads to the frame thread, which takes them all at the start
/// of a frame (what `dispatch_async(dispatch_get_main_queue(), …)` does in the chapter's code).
final class Inbox<Value: Sendable>: Sendable {
    private let items = LockedValue<[(Int, Value)]>([])

    /// Adds the result for `item` (any thread).
    func put(_ item: Int, _ value: Value) {
        items.withLock { $0.append((item, value)) }
    }

    /// Takes every result delivered so far (frame thread).
    func takeAll() -> [(Int, Value)] {
        items.withLock { taken in
            defer { taken = [] }
            return taken
        }
    }
}
