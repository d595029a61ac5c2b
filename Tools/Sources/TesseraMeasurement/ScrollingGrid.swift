import Tessera
/// A vertically scrolling grid of equal cells (a photo grid): which items a viewport shows at a
/// given scroll offset, which ones appear between two offsets, and an item's neighbours.
///
/// Item `i` sits in row `i / columns`, column `i % columns`; a row is `cellSize.height` pixels tall.
/// An item is visible when any of its pixel rows is inside `offset ..< offset + viewportHeight`.
public struct ScrollingGrid: Sendable, Hashable, Codable {
    /// Number of items.
    public var itemCount: Int
    /// Items per row.
    public var columns: Int
    /// The size of one cell in pixels.
    public var cellSize: PixelSize
    /// The height of the visible area in pixels.
    public var viewportHeight: Int

    /// Creates a grid. Counts and sizes must be positive.
    public init(itemCount: Int, columns: Int, cellSize: PixelSize, viewportHeight: Int) {
        precondition(itemCount >= 0 && columns > 0 && cellSize.width > 0 && cellSize.height > 0 && viewportHeight > 0)
        self.itemCount = itemCount
        self.columns = columns
        self.cellSize = cellSize
        self.viewportHeight = viewportHeight
    }

    /// Number of rows.
    public var rowCount: Int { (itemCount + columns - 1) / columns }
    /// Height of all rows.
    public var contentHeight: Int { rowCount * cellSize.height }
    /// The largest offset that still fills the viewport (0 when the content is shorter).
    public var maximumOffset: Int { max(0, contentHeight - viewportHeight) }

    /// The items visible at `offset` (clamped to `0...maximumOffset`), in order.
    public func visibleItems(atOffset offset: Int) -> Range<Int> {
        guard itemCount > 0 else { return 0..<0 }
        let y = min(max(0, offset), maximumOffset)
        let firstRow = y / cellSize.height
        let lastRow = (y + viewportHeight - 1) / cellSize.height
        return min(itemCount, firstRow * columns)..<min(itemCount, (lastRow + 1) * columns)
    }

    /// The items visible at `offset` that were not visible at `previous` (all visible ones when
    /// `previous` is `nil`), in order.
    public func newlyVisibleItems(from previous: Int?, to offset: Int) -> [Int] {
        let now = visibleItems(atOffset: offset)
        guard let previous else { return Array(now) }
        let before = visibleItems(atOffset: previous)
        return now.filter { !before.contains($0) }
    }

    /// The items directly above and below `item` (one row away), where they exist: the neighbours
    /// a grid prefetches in the scrolling direction.
    public func verticalNeighbours(of item: Int) -> [Int] {
        [item + columns, item - columns].filter { $0 >= 0 && $0 < itemCount }
    }

    /// How many items a grid needs so that scrolling `distance` pixels from the top never runs out
    /// of content: the rows passed plus a viewport's rows plus one partially visible row.
    public static func itemCount(columns: Int, rowHeight: Int, viewportHeight: Int, scrollDistance: Int) -> Int {
        let rows = (scrollDistance + viewportHeight + rowHeight - 1) / rowHeight + 1
        return rows * columns
    }
}
