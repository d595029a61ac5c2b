import Foundation

/// The `.build` directory an executable was built in: the nearest ancestor named `.build` of its path
/// (give the real path, symlinks resolved), or `nil` when it lies in none. The benchmarks' Python
/// virtualenvs live there (`tessera bench peers`), and the tests look for them in the same place.
public func buildDirectory(containing executable: URL) -> URL? {
    var url = executable
    while url.path != "/" {
        url.deleteLastPathComponent()
        if url.lastPathComponent == ".build" { return url }
    }
    return nil
}
