import Foundation

extension Duration {
    /// The duration in seconds, for arithmetic with `Date` (every public API takes `Duration`).
    @_spi(Internal) public var timeInterval: TimeInterval {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
