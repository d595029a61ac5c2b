#if Serving
import Foundation

extension ImageService {
    /// What ``warm(preset:path:)`` did.
    public enum Warmed: String, Sendable {
        /// The source was drawn into the preset's table.
        case stored
        /// The table already held the source's current version.
        case current
        /// The preset's answer for it is not kept in the table (an animated source, or a canvas larger
        /// than the slot): requests draw it each time.
        case notStorable = "not-storable"
    }

    /// Draws the file at `path` (relative to the root) by `preset`'s recipe into the preset's table, as
    /// a request's table miss would, without encoding an answer. A batch job pre-warms a running
    /// server's tables this way: both open the same table files (docs/ARCHITECTURE.md, "Tables shared
    /// between processes"), so the server's next request for the file is a table hit.
    /// - Throws: `unknown_preset`, the root's path errors (`not_found`, `path_escape`…), or what a
    ///   decode of the file throws (`unsupported_media_type`, `too_large`…), as a request would get them.
    public func warm(preset name: String, path: String) async throws(ServiceError) -> Warmed {
        guard let table = presets[name] else { throw ServiceError(.unknownPreset, "unknown preset '\(name)'") }
        let file = try root.file(path)
        let source = PresetTable.Source(file)
        if table.image(of: source) != nil { return .current }
        do {
            if case .slot = try await fill(table, with: source, bytes: .file(file.realPath)).value { return .stored }
            return .notStorable
        } catch {
            throw ServiceError.from(error)
        }
    }
}
#endif
