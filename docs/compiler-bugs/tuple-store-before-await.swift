// Swift 6.3.1 (swift-6.3.1-RELEASE), x86_64-unknown-linux-gnu, Debian bookworm.
//
//   swiftc -Onone -swift-version 6 tuple-store-before-await.swift -o ok  && ./ok    # ("hello, …", 4)
//   swiftc -O     -swift-version 6 tuple-store-before-await.swift -o bad && ./bad   # ("", 4)
//
// A closure with an indirect (generic) result builds a tuple around a `try await` inside do/catch.
// The optimizer stores `text` into the result's first element before the call and again on the catch
// path; the IR it emits keeps only the catch path's store, so on success the first element is never
// written. In a task group the parent then reads that uninitialised String (nil from `next()`, a crash
// in `swift_retain`, or "No foreign strings on Linux" in Dictionary).
@inline(never) func value() async throws -> Int {
    try await Task.sleep(nanoseconds: 1000)
    return 4
}

let text = CommandLine.arguments.count > 5 ? "y" : "hello, a string longer than fifteen bytes"

let task = Task { () -> (String, Int) in
    do { return (text, try await value()) }
    catch { return (text, -1) }
}
print(await task.value)

// Work-around: finish the awaited value first, then build the tuple.
let fixed = Task { () -> (String, Int) in
    let number: Int
    do { number = try await value() } catch { number = -1 }
    return (text, number)
}
print(await fixed.value)
