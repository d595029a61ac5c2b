import ArgumentParser
import Foundation
import Synchronization
import Tessera
@_spi(Internal) import TesseraCore
import TesseraMeasurement

extension RetrievalBenchmark {
    /// Processed URL requests answered without decoding: `ImageManager.cachedResponse(for:)` (the synchronous
    /// lookup a frame loop makes) for a request with a processing, from the memory cache and from an image
    /// table (`Configuration.tables`), each against the dictionary of decoded bitmaps, interleaved as the
    /// table hit is.
    struct URLRequestRows: Codable {
        /// The processing of every request (its identity).
        var processing: String
        /// The distinct requests (cache keys) looked up.
        var entries: Int
        /// Per request answered from the memory cache (median of batches).
        var memoryHitNanoseconds: Double
        /// The dictionary's per-lookup time in the batches interleaved with the memory hits.
        var memoryDictionaryNanoseconds: Double
        /// memoryHitNanoseconds / memoryDictionaryNanoseconds.
        var memoryHitToDictionaryRatio: Double
        /// Per request answered from its image table (a `TableImage` into the mapping).
        var tableHitNanoseconds: Double
        /// The dictionary's per-lookup time in the batches interleaved with the table hits.
        var tableDictionaryNanoseconds: Double
        /// tableHitNanoseconds / tableDictionaryNanoseconds.
        var tableHitToDictionaryRatio: Double

        /// The rows of the printed table.
        var rows: [[String]] {
            [["URL request + processing, memory cache", String(format: "%.0f ns", memoryHitNanoseconds),
              String(format: "%.2e", 1e9 / memoryHitNanoseconds), String(format: "%.2fx the dictionary", memoryHitToDictionaryRatio)],
             ["URL request + processing, image table", String(format: "%.0f ns", tableHitNanoseconds),
              String(format: "%.2e", 1e9 / tableHitNanoseconds), String(format: "%.2fx the dictionary", tableHitToDictionaryRatio)]]
        }
    }

    /// `entries` requests for the JPEG at `source` (one cache key each, so each is its own image) with a 100×100
    /// fill processing: loaded once through a manager with a memory cache only and once through one with
    /// tables only (in `directory`), then looked up at random, each in batches alternating with a
    /// `[UUID: Bitmap]` behind a mutex. Each hit reads one byte of its pixels.
    static func urlRequestRows(source: URL, thumbnail: Bitmap, entries: Int, batch: Int, batches: Int,
                               directory: URL) throws -> URLRequestRows {
        let processing = ImageProcessing(width: 100, height: 100, mode: .fill)
        let requests = (0..<entries).map { ImageRequest(url: source, processing: processing, cacheKey: "bench/\($0)") }
        let ids = (0..<entries).map { UUID(hashing: "entity-\($0)") }
        let dictionary = Mutex<[UUID: Bitmap]>(Dictionary(uniqueKeysWithValues: ids.map { ($0, thumbnail) }))
        let order = randomOrder(count: batch, range: entries)

        var memoryConfiguration = ImageManager.Configuration(disk: nil, diskSweepInterval: nil)
        memoryConfiguration.memory.countLimit = entries + 1
        // Room for every entry whatever --entries is: the count bounds the cache, not the bytes (a 100x100
        // bgra32 image each, 4 GB at 100,000 entries).
        memoryConfiguration.memory.costLimit = .max
        let memory = try ImageManager(configuration: memoryConfiguration, loader: LocalOnlyLoader())
        var tableConfiguration = ImageManager.Configuration(disk: nil, diskSweepInterval: nil)
        tableConfiguration.tables = ImageManager.TableStorage(directory: directory, maximumCount: entries)
        let tables = ImageManager(configuration: tableConfiguration, loader: LocalOnlyLoader(), memoryCache: nil, diskCache: nil)
        for manager in [memory, tables] { try load(requests, into: manager) }

        func rows(_ manager: ImageManager, _ expected: ImageResponse.CacheType) throws -> (Double, Double) {
            var sink: UInt8 = 0
            defer { if sink == 42 { print("") } }   // keep the reads
            return try interleavedNanosecondsPerOp(batches: batches, batch: batch, {
                for i in order {
                    guard let hit = manager.cachedResponse(for: requests[i]), hit.cacheType == expected else {
                        throw ValidationError("unexpected miss of a processed URL request (\(expected))")
                    }
                    sink &+= hit.pixels.withUnsafeBytes { $0[0] }
                }
            }, {
                for i in order {
                    guard let hit = dictionary.withLock({ $0[ids[i]] }) else { throw ValidationError("unexpected miss") }
                    sink &+= hit.withUnsafeBytes { $0[0] }
                }
            })
        }
        let (memoryHit, memoryDictionary) = try rows(memory, .memory)
        let (tableHit, tableDictionary) = try rows(tables, .table)
        return URLRequestRows(processing: processing.identity, entries: entries, memoryHitNanoseconds: memoryHit,
                              memoryDictionaryNanoseconds: memoryDictionary, memoryHitToDictionaryRatio: memoryHit / memoryDictionary,
                              tableHitNanoseconds: tableHit, tableDictionaryNanoseconds: tableDictionary,
                              tableHitToDictionaryRatio: tableHit / tableDictionary)
    }

    /// Loads every request through `manager`, waiting on this thread (the command is synchronous).
    private static func load(_ requests: [ImageRequest], into manager: ImageManager) throws {
        let done = DispatchSemaphore(value: 0)
        let failure = LockedValue<TesseraError?>(nil)
        Task.detached {
            for request in requests {
                do throws(TesseraError) { _ = try await manager.imageTask(for: request).response } catch {
                    failure.withLock { $0 = error }
                    break
                }
            }
            done.signal()
        }
        done.wait()
        if let error = failure.withLock({ $0 }) { throw error }
    }

    /// A loader for managers that only ever read `file:` URLs (which the manager reads itself): any load
    /// reaching it is a mistake.
    private struct LocalOnlyLoader: DataLoading {
        func load(_ request: LoadRequest, progress: @escaping @Sendable (LoadProgress) -> Void) async throws -> LoadResponse {
            throw TesseraError(.fetching(.transport(url: request.url.absoluteString, message: "the benchmark loads only file: URLs")))
        }
    }
}
