import TesseraImaging
import Foundation

/// The result of ``ImageTable/verify()``: every committed entry's header and pixel checksum.
public struct TableVerification: Sendable, CustomStringConvertible {
    /// One damaged entry.
    public struct Damage: Sendable, Hashable, CustomStringConvertible {
        /// The slot index.
        public var slot: Int
        /// The entity id read from the slot header (possibly garbage if the header is damaged).
        public var entityID: UUID?
        /// What is wrong.
        public var reason: String

        /// `"slot n (<entity>): reason"`.
        public var description: String { "slot \(slot) (\(entityID?.uuidString ?? "?")): \(reason)" }
    }

    /// Entries whose header and pixels were checked.
    public var checkedEntries: Int
    /// Damage found now, plus damage detected (and already discarded) since the table was opened.
    public var damaged: [Damage]

    /// Whether nothing is damaged.
    public var isClean: Bool { damaged.isEmpty }

    /// `"n entries checked, clean"` or a list of damage.
    public var description: String {
        isClean ? "\(checkedEntries) entries checked, clean"
            : "\(checkedEntries) entries checked, \(damaged.count) damaged: " + damaged.map(\.description).joined(separator: "; ")
    }
}
