// libFuzzer entry points for Tessera. Built by `scripts/fuzz` together with Sources/Tessera into one
// module (so the harnesses reach internal types such as TableFileHeader), with
// `swiftc -sanitize=fuzzer,address`. The target is chosen with TESSERA_FUZZ_TARGET
// (jpeg, png, webp, gif, heic, avif, table, diskcache, freshness, icc); with TESSERA_FUZZ_SEEDS=DIR the binary writes generated seeds for
// that target into DIR and exits instead of fuzzing.
import Foundation

/// Called by libFuzzer once before fuzzing: reads the target and, if asked, writes seeds and exits.
@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutablePointer<Int32>,
                           _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> Int32 {
    let target = FuzzTarget.current
    if let value = getenv("TESSERA_FUZZ_SEEDS") {
        let dir = String(cString: value)
        let count = FuzzSeeds.write(for: target, into: URL(fileURLWithPath: dir, isDirectory: true))
        print("wrote \(count) generated \(target.rawValue) seeds to \(dir)")
        exit(0)
    }
    return 0
}

/// Called by libFuzzer for every input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    switch FuzzTarget.current {
    case .jpeg: DecoderFuzzing.run(bytes, format: .jpeg)
    case .png: DecoderFuzzing.run(bytes, format: .png)
    case .webp: DecoderFuzzing.run(bytes, format: .webp)
    case .gif: DecoderFuzzing.run(bytes, format: .gif)
    case .heic: DecoderFuzzing.run(bytes, format: .heic)
    case .avif: DecoderFuzzing.run(bytes, format: .avif)
    case .table: TableFuzzing.run(bytes)
    case .diskcache: DiskCacheFuzzing.run(bytes)
    case .freshness: FreshnessFuzzing.run(bytes)
    case .icc: ColourFuzzing.run(bytes)
    }
    return 0
}
