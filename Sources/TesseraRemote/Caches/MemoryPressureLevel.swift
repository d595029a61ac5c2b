import TesseraImaging
import TesseraTables
/// How much memory pressure a ``MemoryPressureWatcher`` saw, and what it does about it.
public enum MemoryPressureLevel: String, Sendable, Hashable, Codable {
    /// Nothing to do.
    case normal
    /// Trim the memory cache to a fraction of its cost (``MemoryPressureWatcher/Configuration/moderateTrimFraction``).
    case moderate
    /// Empty the memory cache.
    case critical
}
