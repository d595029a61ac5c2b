import Foundation

extension TesseraError {
    /// The `errno` behind an error thrown by `FileManager` (for example by `createDirectory`).
    ///
    /// The error's own `NSError.code` is a Cocoa error code (512 "write failed", 516 "file exists", …),
    /// not an errno, and the global `errno` may have changed since the failing system call. The POSIX
    /// error that swift-corelibs-foundation wraps under `NSUnderlyingErrorKey` carries the real value
    /// (`EEXIST` for a file in the way, `ENOTDIR`, `EACCES`, …). `EIO` when there is none.
    static func posixCode(of error: any Error) -> Int32 {
        let outer = error as NSError
        if outer.domain == NSPOSIXErrorDomain { return Int32(truncatingIfNeeded: outer.code) }
        if let inner = outer.userInfo[NSUnderlyingErrorKey] as? NSError, inner.domain == NSPOSIXErrorDomain {
            return Int32(truncatingIfNeeded: inner.code)
        }
        return EIO
    }
}
