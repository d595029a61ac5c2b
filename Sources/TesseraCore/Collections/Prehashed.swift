/// A key that carries its hash, worked out once when it is made: a map guarded by a lock then hashes
/// a word inside the critical section, not the whole key (SipHash over a request target of 50–100
/// bytes, for the server's maps). Equal keys have equal hashes; two keys are equal when their hashes
/// and their bases are.
@_spi(Internal) public struct Prehashed<Base: Hashable & Sendable>: Hashable, Sendable {
    public let base: Base
    @usableFromInline let hash: Int

    @inlinable
    public init(_ base: Base) {
        self.base = base
        hash = base.hashValue
    }

    @inlinable
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.hash == rhs.hash && lhs.base == rhs.base }

    @inlinable
    public func hash(into hasher: inout Hasher) { hasher.combine(hash) }
}
