import Foundation

extension TesseraError {
    /// The `errno` behind an error thrown by `FileManager` (for example by `createDirectory`).
    ///
    /// The error's own `NSError.code` is a Cocoa error code (512 "write failed", 516 "file exists", …),
    /// not an errno, and the global `errno` may have changed since the failing system call. The POSIX
    /// error that Foundation wraps under `NSUnderlyingErrorKey` carries the real value (`EEXIST` for a
    /// file in the way, `ENOTDIR`, `EACCES`, …). On Linux that value is a Swift `POSIXError`, which
    /// `as? NSError` does not match: it is taken `as? any Error` and bridged. `EIO` when there is none.
    package static func posixCode(of error: any Error) -> Int32 {
        for candidate in [error, (error as NSError).userInfo[NSUnderlyingErrorKey] as? any Error].compactMap({ $0 }) {
            let bridged = candidate as NSError
            if bridged.domain == NSPOSIXErrorDomain { return Int32(truncatingIfNeeded: bridged.code) }
        }
        return EIO
    }
}
