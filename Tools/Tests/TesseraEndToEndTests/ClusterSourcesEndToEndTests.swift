import Foundation
import Testing
import Tessera
import TesseraTestSupport

/// `scripts/cluster N --source NAME=s3://…`: a real nginx in front of release `tessera serve` nodes that all read
/// one bucket of a real `moto_server` (IAM authentication on), all on 127.0.0.1. Which node downloaded what is
/// read from each node's own `/metrics` (`tessera_source_downloads_total`), which node answered from nginx's
/// `X-Tessera-Node`.
@Suite("scripts/cluster over one S3 bucket",
       .enabled(if: ReleaseCLI.isAvailable, "TESSERA_RELEASE_BINARY names the release tessera binary"),
       .enabled(if: Moto.isAvailable, Moto.missing))
struct ClusterSourcesEndToEndTests {
    typealias Cluster = ClusterEndToEndTests.Cluster

    /// The objects each node of `nodes` (indices into `cluster.nodes`) has read with bytes from the source `photos`.
    static func downloads(_ cluster: Cluster, nodes: [Int]) async throws -> [Int: Double] {
        var counts: [Int: Double] = [:]
        for node in nodes {
            let text = try await RawHTTP.get(port: cluster.nodes[node].port, "/metrics").text
            counts[node] = PrometheusText.value(text, "tessera_source_downloads_total", labels: ["source": "photos"])
        }
        return counts
    }

    /// GETs `target` at the front, requires a 200 image, and returns the index of the node that answered: the
    /// last address of `X-Tessera-Node` (earlier ones are nodes nginx tried first and found refusing).
    static func get(_ cluster: Cluster, _ target: String) async throws -> Int {
        let response = try await RawHTTP.get(port: cluster.front, target)
        try #require(response.status == 200 && response.headers["content-type"]?.hasPrefix("image/") == true,
                     "\(target): \(response) \(response.text.prefix(300))")
        let route = try #require(response.headers["x-tessera-node"], "\(target): no X-Tessera-Node")
        let last = route.split(separator: ",").last.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        return try #require(cluster.nodes.firstIndex { "127.0.0.1:\($0.port)" == last }, "\(target) answered by \(route)")
    }

    /// The requests of one object, all with one path after the preset: two presets and three formats, and whether
    /// each downloads the object on a node that has not made its thumbnails yet. The first does (a `HEAD` tells its
    /// ETag, a GET brings its bytes); the second preset's table misses and draws from the bytes the node kept of
    /// that read; the third is another format of the first preset, drawn from that preset's table.
    static func targets(_ key: String) -> [(target: String, readsBytes: Bool)] {
        [("/v1/thumb/@photos/\(key)", true), ("/v1/card/@photos/\(key)?fmt=webp", false), ("/v1/thumb/@photos/\(key)?fmt=png", false)]
    }

    /// The downloads one node makes of an object it takes on: one, whatever the presets.
    static let downloadsPerObject = 1.0

    /// Asks for every object of `keys` in two presets and three formats through the front, reading the downloads
    /// of the nodes `alive` after every request, and returns the node that answered each object. Every request of
    /// one object is answered by the same node; when `downloading(key)` says that node has not made the object's
    /// thumbnails yet, the requests marked `readsBytes` make it, and no other node, download the object once each;
    /// no other request downloads anything anywhere.
    static func route(_ cluster: Cluster, keys: [String], alive: [Int], downloading: (String) -> Bool) async throws -> [String: Int] {
        var owners: [String: Int] = [:]
        var counts = try await downloads(cluster, nodes: alive)
        for key in keys {
            var answered: Set<Int> = []
            for (target, readsBytes) in targets(key) {
                let node = try await get(cluster, target)
                answered.insert(node)
                let now = try await downloads(cluster, nodes: alive)
                var expected = counts
                if readsBytes, downloading(key) { expected[node, default: 0] += 1 }
                #expect(now == expected, "\(target) answered by node \(node + 1): downloads \(counts) → \(now)")
                counts = now
            }
            #expect(answered.count == 1, "\(key): every preset and format on one node, not \(answered.sorted())")
            owners[key] = answered.first
        }
        return owners
    }

    /// Twelve photographs in one bucket behind three nodes, nginx's cache off. Each object is downloaded by one
    /// node only, the one nginx's consistent hash sends it to whatever the preset or format (once per preset it
    /// makes); the others never read it. The node owning most objects is SIGKILLed: each of its objects moves to
    /// exactly one survivor, which downloads it; every other object stays where it was and nobody reads it again.
    @Test func eachObjectIsDownloadedByTheOneNodeItsKeyHashesTo() async throws {
        let scratch = try ScratchDirectory("cluster-s3")
        let moto = try await Moto.start(bucket: "bucket")
        defer { moto.stop() }
        let photos = try RealPhotos.smallest(12, ext: "jpg")
        let names = photos.indices.map { "p\($0) \(photos[$0].deletingPathExtension().lastPathComponent).jpg" }
        _ = try await moto.upload(bucket: "bucket", files: zip(names, photos).map { ("images/" + $0, $1) }, contentType: "image/jpeg")
        let keys = names.map { $0.replacingOccurrences(of: " ", with: "%20") }
        let cluster = try Cluster(3, root: nil, arguments: ["--no-proxy-cache", "--source", "photos=s3://bucket/images",
                                                            "--s3-endpoint", moto.endpoint, "--",
                                                            "--preset", "thumb:96x96:fill", "--preset", "card:160x120:fit",
                                                            "--admin-key", "cluster-admin-key"],
                                  scratch: scratch, environment: Moto.credentials(moto))
        defer { _ = cluster.stop() }

        let everyone = Array(cluster.nodes.indices)
        let owners = try await Self.route(cluster, keys: keys, alive: everyone) { _ in true }
        let downloaded = try await Self.downloads(cluster, nodes: everyone)
        #expect(downloaded.values.reduce(0, +) == Self.downloadsPerObject * Double(keys.count), "each object downloaded by one node in all: \(downloaded)")
        for node in everyone {
            #expect(downloaded[node] == Self.downloadsPerObject * Double(owners.values.filter { $0 == node }.count), "node \(node + 1): \(downloaded), owners \(owners)")
        }
        #expect(Set(owners.values).count >= 2, "the hash spreads 12 objects over the nodes: \(owners)")

        // The node owning most objects dies; its port refusing connections is the sign it is gone.
        let owned = { (node: Int) in owners.values.filter { $0 == node }.count }
        let victim = try #require(everyone.max { owned($0) < owned($1) })
        kill(cluster.nodes[victim].pid, SIGKILL)
        while (try? await RawHTTP.get(port: cluster.nodes[victim].port, "/healthz")) != nil { await Task.yield() }
        let moved = keys.filter { owners[$0] == victim }
        #expect(!moved.isEmpty)

        // Only the victim's objects move, each to one survivor, which downloads it once; the others stay where they
        // were and nobody reads them again.
        let survivors = everyone.filter { $0 != victim }
        let after = try await Self.route(cluster, keys: keys, alive: survivors) { owners[$0] == victim }
        for key in keys {
            if owners[key] == victim {
                #expect(after[key] != nil && after[key] != victim, "\(key) moved to a survivor")
            } else {
                #expect(after[key] == owners[key], "\(key) stays on node \((owners[key] ?? -1) + 1)")
            }
        }
        let now = try await Self.downloads(cluster, nodes: survivors)
        for node in survivors {
            let took = Self.downloadsPerObject * Double(moved.filter { after[$0] == node }.count)
            #expect(now[node] == (downloaded[node] ?? 0) + took, "node \(node + 1) downloaded only what it took over: \(downloaded) → \(now)")
        }

        // A purge through the front goes where the object's requests go (the same hash of `src`): that node drops
        // both presets' entries, the three answers and the disk copy, and the next request downloads it again.
        for key in keys.prefix(3) {
            let owner = try #require(after[key])
            let purge = try await RawHTTP.post(port: cluster.front, "/admin/purge?src=@photos/\(key)", body: [],
                                               headers: ["Authorization": "Bearer cluster-admin-key"])
            #expect(purge.status == 204, "\(key): \(purge)")
            #expect(purge.headers["x-tessera-node"] == "127.0.0.1:\(cluster.nodes[owner].port)", "\(key) is held by node \(owner + 1)")
            #expect(purge.headers["x-tessera-purged"] == "tables=2 responses=3 copies=1", "\(key)")
            let before = try await Self.downloads(cluster, nodes: [owner])[owner] ?? 0
            #expect(try await Self.get(cluster, "/v1/thumb/@photos/\(key)") == owner)
            #expect(try await Self.downloads(cluster, nodes: [owner])[owner] == before + 1, "\(key) downloaded again after its purge")
        }
    }
}
