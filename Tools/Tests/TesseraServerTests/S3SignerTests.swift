import Crypto
import Foundation
import Testing
@testable import TesseraServer
import TesseraTestSupport

/// The S3 client's SigV4 signer against known answers: AWS's published examples, and awkward requests
/// (unicode, spaces and `+` in keys, queries, session tokens) signed once by botocore
/// (Tests/Fixtures/s3-sigv4-cases.json, written by generate-s3-sigv4.py). No network.
@Suite("S3 signer")
struct S3SignerTests {
    /// A UTC time from SigV4's `20130524T000000Z` form.
    static func date(_ stamp: String) throws -> Date {
        let digits = stamp.filter(\.isNumber).map { Int(String($0))! }
        let number = { (range: Range<Int>) in digits[range].reduce(0) { $0 * 10 + $1 } }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = DateComponents(year: number(0..<4), month: number(4..<6), day: number(6..<8),
                                   hour: number(8..<10), minute: number(10..<12), second: number(12..<14))
        return try #require(calendar.date(from: parts))
    }

    static func value(_ headers: [(name: String, value: String)], _ name: String) -> String? {
        headers.first { $0.name == name }?.value
    }

    /// AWS General Reference, "Examples of how to derive a signing key for Signature Version 4"
    /// (https://docs.aws.amazon.com/general/latest/gr/signature-v4-examples.html): every step's published value.
    @Test("the signing key derivation gives AWS's published values for 20120215, us-east-1, iam")
    func signingKeyDerivation() {
        let secret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
        let kDate = S3Signer.hmac(Array("AWS4\(secret)".utf8), "20120215")
        let kRegion = S3Signer.hmac(kDate, "us-east-1")
        let kService = S3Signer.hmac(kRegion, "iam")
        #expect(S3Signer.hex(kDate) == "969fbb94feb542b71ede6f87fe4d5fa29c789342b0f407474670f0c2489e0a0d")
        #expect(S3Signer.hex(kRegion) == "69daa0209cd9c5ff5c8ced464a696fd4252e981430b10e3d3fd8e2f197d7a70c")
        #expect(S3Signer.hex(kService) == "f72cfd46f26bc4643f06a11eabb6c0ba18780c19a8da0c31ace671265e3c87fa")
        let key = S3Signer.signingKey(secret: secret, day: "20120215", region: "us-east-1", service: "iam")
        #expect(key.withUnsafeBytes { S3Signer.hex($0) } == "f4780e2d9f65fa895f9c67b32ce1baf0b0d8a43505a000a1a9e090d414db404d")
    }

    /// Amazon S3 API Reference, "Signature Calculations for the Authorization Header: Transferring Payload
    /// in a Single Chunk", Example: GET Object (https://docs.aws.amazon.com/AmazonS3/latest/API/sig-v4-header-based-auth.html).
    @Test("AWS's published S3 GET Object example: canonical request, its hash and the signature")
    func awsGetObjectExample() throws {
        let signer = S3Signer(credentials: S3Credentials(accessKeyID: "AKIAIOSFODNN7EXAMPLE",
                                                         secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
                              region: "us-east-1")
        let url = try #require(URL(string: "https://examplebucket.s3.amazonaws.com/test.txt"))
        let headers = signer.sign(method: "GET", url: url, headers: [("Range", "bytes=0-9")], date: try Self.date("20130524T000000Z"),
                                  payloadHash: S3Signer.emptyPayloadHash)
        let canonical = signer.canonicalRequest(method: "GET", url: url, headers: headers.filter { $0.name != "authorization" },
                                                payloadHash: S3Signer.emptyPayloadHash)
        #expect(canonical == """
            GET
            /test.txt

            host:examplebucket.s3.amazonaws.com
            range:bytes=0-9
            x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
            x-amz-date:20130524T000000Z

            host;range;x-amz-content-sha256;x-amz-date
            e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
            """)
        #expect(S3Signer.hex(SHA256.hash(data: Data(canonical.utf8))) == "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972")
        #expect(Self.value(headers, "authorization") == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
            + "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
        #expect(Self.value(headers, "host") == "examplebucket.s3.amazonaws.com")
        #expect(Self.value(headers, "x-amz-date") == "20130524T000000Z")
    }

    struct Fixtures: Decodable {
        struct Case: Decodable, CustomTestStringConvertible {
            var name, method, url, region, time, payloadHash, canonicalRequest, authorization: String
            var headers, addedHeaders: [String: String]
            var sessionToken: String?
            var testDescription: String { name }
        }
        var note, accessKeyID, secretAccessKey: String
        var cases: [Case]
    }

    static let fixtures: Fixtures = {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/s3-sigv4-cases.json")
        // A missing or broken fixture file fails the test that reads `cases` below (no cases, or this crash).
        return try! JSONDecoder().decode(Fixtures.self, from: Data(contentsOf: file))
    }()

    @Test("the fixture file holds the cases botocore signed")
    func fixtureFileIsThere() {
        #expect(Self.fixtures.cases.count >= 6)
        #expect(Self.fixtures.note.contains("botocore"))
    }

    @Test("requests botocore signed get the same canonical request, headers and signature", arguments: fixtures.cases)
    func botocoreCases(_ fixture: Fixtures.Case) throws {
        let credentials = S3Credentials(accessKeyID: Self.fixtures.accessKeyID, secretAccessKey: Self.fixtures.secretAccessKey,
                                        sessionToken: fixture.sessionToken)
        let signer = S3Signer(credentials: credentials, region: fixture.region)
        let url = try #require(URL(string: fixture.url))
        let given = fixture.headers.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) }
        let headers = signer.sign(method: fixture.method, url: url, headers: given, date: try Self.date(fixture.time),
                                  payloadHash: fixture.payloadHash)
        #expect(Self.value(headers, "authorization") == fixture.authorization)
        for (name, value) in fixture.addedHeaders { #expect(Self.value(headers, name) == value, "\(name)") }
        let canonical = signer.canonicalRequest(method: fixture.method, url: url, headers: headers.filter { $0.name != "authorization" },
                                                payloadHash: fixture.payloadHash)
        #expect(canonical == fixture.canonicalRequest)
    }

    @Test("paths: each segment encoded once, / kept; an encoded path is not encoded again")
    func pathEncoding() {
        #expect(S3Signer.encode("a b+c/é~_.-") == "a%20b%2Bc%2F%C3%A9~_.-")
        #expect(S3Signer.encodePath("/bucket/photos/2024/a b+c.jpg") == "/bucket/photos/2024/a%20b%2Bc.jpg")
        #expect(S3Signer.encodePath("/b/日本 (1)*.png") == "/b/%E6%97%A5%E6%9C%AC%20%281%29%2A.png")
        let encoded = S3Signer.encodePath("/b/100% real/x+y.jpg")
        #expect(encoded == "/b/100%25%20real/x%2By.jpg")
        #expect(S3Signer.canonicalURI(encoded) == encoded)
        #expect(S3Signer.canonicalURI("/b/(a)") == "/b/%28a%29")
        #expect(S3Signer.canonicalURI("") == "/")
        #expect(S3Signer.canonicalQuery("b=2&a=%2f&a=1&c") == "a=%2F&a=1&b=2&c=")
        #expect(S3Signer.canonicalQuery(nil) == "")
    }

    @Test("timestamps in UTC, leap days and the epoch included")
    func timestamps() throws {
        #expect(S3Signer.timestamp(Date(timeIntervalSince1970: 0)) == "19700101T000000Z")
        #expect(S3Signer.timestamp(Date(timeIntervalSince1970: 951_868_799.9)) == "20000229T235959Z")
        #expect(S3Signer.timestamp(try Self.date("20240229T235959Z")) == "20240229T235959Z")
        #expect(S3Signer.timestamp(Date(timeIntervalSince1970: 4_102_444_800)) == "21000101T000000Z")
    }

    @Test("Host headers: the port only when it is not the scheme's default")
    func hostHeaders() throws {
        #expect(S3Signer.hostHeader(try #require(URL(string: "http://127.0.0.1:9000/b/k"))) == "127.0.0.1:9000")
        #expect(S3Signer.hostHeader(try #require(URL(string: "https://s3.amazonaws.com:443/b/k"))) == "s3.amazonaws.com")
        #expect(S3Signer.hostHeader(try #require(URL(string: "http://[::1]:8080/b"))) == "[::1]:8080")
    }
}

/// The client's addressing, credentials and error mapping: pure parts, no network.
@Suite("S3 client configuration")
struct S3ClientConfigurationTests {
    static let credentials = S3Credentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "secret/with+chars")

    @Test("virtual-hosted URLs on AWS's endpoint by default; path-style under a custom endpoint, its path kept")
    func urls() throws {
        let aws = S3Endpoint(credentials: Self.credentials, region: "eu-central-1")
        #expect(aws.addressing == .virtualHost)
        #expect(try aws.url(bucket: "images", key: "photos/2024/a b+c.jpg").absoluteString
            == "https://images.s3.eu-central-1.amazonaws.com/photos/2024/a%20b%2Bc.jpg")
        let local = S3Endpoint(credentials: Self.credentials, endpoint: URL(string: "http://127.0.0.1:9000/storage/"))
        #expect(local.addressing == .path)
        #expect(local.region == "us-east-1")
        #expect(try local.url(bucket: "images", key: "photos/é.jpg").absoluteString == "http://127.0.0.1:9000/storage/images/photos/%C3%A9.jpg")
        let named = S3Endpoint(credentials: Self.credentials, endpoint: URL(string: "http://minio.internal:9000"),
                                           addressing: .virtualHost)
        #expect(try named.url(bucket: "my.images", key: "k").absoluteString == "http://my.images.minio.internal:9000/k")
    }

    @Test("requests that cannot be addressed are refused before any connection")
    func refusedAddresses() {
        let onAddress = S3Endpoint(credentials: Self.credentials, endpoint: URL(string: "http://127.0.0.1:9000"),
                                               addressing: .virtualHost)
        #expect(throws: S3Error.self) { try onAddress.url(bucket: "images", key: "k") }
        let aws = S3Endpoint(credentials: Self.credentials)
        for bucket in ["Images", "a_b", "ab", "-ab", "a..b", ""] {
            #expect(throws: S3Error.self, "\(bucket)") { try aws.url(bucket: bucket, key: "k") }
        }
        #expect(throws: S3Error.invalidRequest("the object key is empty")) { try aws.url(bucket: "images", key: "") }
    }

    @Test("credentials from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN; never printed")
    func environmentCredentials() throws {
        let full = try #require(S3Credentials(environment: ["AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "s3cr3t",
                                                            "AWS_SESSION_TOKEN": "t0ken"]))
        #expect(full == S3Credentials(accessKeyID: "AKID", secretAccessKey: "s3cr3t", sessionToken: "t0ken"))
        #expect(!full.description.contains("s3cr3t") && !full.description.contains("t0ken"))
        let noToken = S3Credentials(environment: ["AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "s", "AWS_SESSION_TOKEN": ""])
        #expect(noToken?.sessionToken == nil && noToken != nil)
        #expect(S3Credentials(environment: ["AWS_ACCESS_KEY_ID": "AKID"]) == nil)
        #expect(S3Credentials(environment: ["AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "s"]) == nil)
    }

    @Test("a key that cannot be addressed is 400 bad_path")
    func errors() {
        #expect(ServiceError(S3Error.keyTooLong(bytes: 1025, limit: 1024)).status.code == 400)
        #expect(ServiceError(S3Error.invalidRequest("bucket name \"\" is empty")).code == .badPath)
    }
}
