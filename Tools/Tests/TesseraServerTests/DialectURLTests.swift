import Foundation
import Testing
@_spi(Internal) import Tessera
@testable import TesseraServer

/// imgproxy's and thumbor's URLs read into Tessera's processing value: the signature examples their
/// documentation and libthumbor's tests publish, bit for bit; the options and the geometry they map to;
/// the refusals.
@Suite("imgproxy and thumbor URLs")
struct DialectURLTests {
    static func imgproxy(key: String = "", salt: String = "", size: Int = 32,
                         presets: [String] = [], edit: (inout ServerConfiguration) -> Void = { _ in }) throws -> ImgproxyURLs {
        var configuration = ServerConfiguration(root: "/srv")
        configuration.imgproxy.prefix = "/"
        configuration.imgproxy.keys = key.isEmpty ? [] : [key]
        configuration.imgproxy.salts = salt.isEmpty ? [] : [salt]
        configuration.imgproxy.signatureSize = size
        configuration.imgproxy.presets = presets
        edit(&configuration)
        return try ImgproxyURLs(configuration)
    }

    static func thumbor(key: String? = nil, allowUnsafe: Bool = false) -> ThumborURLs {
        var configuration = ServerConfiguration(root: "/srv")
        configuration.thumbor.prefix = "/"
        configuration.thumbor.key = key
        configuration.thumbor.allowUnsafe = allowUnsafe
        return ThumborURLs(configuration)
    }

    static let limits = ServerConfiguration.Limits()

    static func code(_ body: () throws(ServiceError) -> Any) -> ServiceError.Code? {
        do throws(ServiceError) { _ = try body(); return nil } catch { return error.code }
    }

    /// docs/signing_the_url.md: key `secret`, salt `hello` (hex-encoded in the variables).
    @Test func imgproxyDocumentationSignature() throws {
        let urls = try Self.imgproxy(key: "736563726574", salt: "68656C6C6F")
        let path = "/rs:fill:300:400:0/g:sm/aHR0cDovL2V4YW1w/bGUuY29tL2ltYWdl/cy9jdXJpb3NpdHku/anBn.png"
        let ask = try urls.ask(path: "oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8" + path, accept: nil)
        #expect(ask.source == "http://example.com/images/curiosity.jpg")
        #expect(ask.processing.width == 300 && ask.processing.height == 400 && ask.processing.mode == .fill)
        #expect(ask.processing.gravity == .smart && !ask.processing.enlarge)
        #expect(ask.output.key == "f:png")
        #expect(Self.code { () throws(ServiceError) in try urls.ask(path: "pKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8" + path, accept: nil) } == .badSignature)
        #expect(Self.code { () throws(ServiceError) in try urls.ask(path: "insecure" + path, accept: nil) } == .badSignature)
    }

    /// imgproxy's examples/signature.py, in full and truncated to 8 bytes (`IMGPROXY_SIGNATURE_SIZE=8`).
    @Test func imgproxyExampleSignatures() throws {
        let key = "943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881"
        let salt = "520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5"
        let path = "/rs:fit:300:300/plain/http://img.example.com/pretty/image.jpg"
        let full = try Self.imgproxy(key: key, salt: salt)
        #expect(try full.ask(path: "m3k5QADfcKPDj-SDI2AIogZbC3FlAXszuwhtWXYqavc" + path, accept: nil).source
                == "http://img.example.com/pretty/image.jpg")
        let short = try Self.imgproxy(key: key, salt: salt, size: 8)
        #expect(try short.ask(path: "m3k5QADfcKM" + path, accept: nil).processing.mode == .fit)
        #expect(Self.code { () throws(ServiceError) in try short.ask(path: "m3k5QADfcKPDj-SDI2AIogZbC3FlAXszuwhtWXYqavc" + path, accept: nil) } == .badSignature)
        #expect(Self.code { () throws(ServiceError) in try short.ask(path: "m3k5QADfcKM=" + path, accept: nil) } == .badSignature,
                "padding is refused, as Go's RawURLEncoding does")
        // Without a key any segment passes.
        #expect(try Self.imgproxy().ask(path: "_" + path, accept: nil).processing.width == 300)
    }

    @Test func imgproxyOptionsAndSources() throws {
        let urls = try Self.imgproxy(presets: ["thumb=rs:fill:100:100/g:no", "default=q:70"])
        func ask(_ path: String, accept: String? = nil) throws(ServiceError) -> ImageAsk { try urls.ask(path: "_/" + path, accept: accept) }
        let a = try ask("resize:fit:300:200:1:1:so/bg:ff0000/plain/local:///dir/a%20b.jpg@webp")
        #expect(a.source == "dir/a b.jpg" && a.processing.mode == .pad && a.processing.gravity == .south && a.processing.enlarge)
        #expect(a.processing.background == ImageProcessing.Background(red: 255, green: 0, blue: 0) && a.output.key == "f:webp" && a.quality == 70)
        let b = try ask("pr:thumb/q:40/plain/s3://bucket/k.png")
        #expect(b.source == "s3://bucket/k.png" && b.processing.mode == .fill && b.processing.gravity == .north && b.quality == 40)
        #expect(b.output.key == "a:keep-gif-jpeg-png", "the source's format for JPEG, PNG and GIF, as imgproxy keeps")
        let c = try ask("w:200/rot:90/c:0.5:0.5:we/pd:4:8/sm:0/plain/local:///a.jpg")
        #expect(c.processing.height == 200 && c.processing.width == nil, "sized in the turned orientation")
        #expect(c.processing.rotation == .quarter && c.processing.crop?.gravity == .south, "west after the turn is south before it")
        #expect(c.processing.padding == ImageProcessing.Padding(top: 4, right: 8, bottom: 4, left: 8) && c.processing.metadata == .keep)
        let d = try ask("fn:bXkgcGhvdG8:1/att:1/plain/local:///a.jpg")
        #expect(d.disposition?.value(for: .jpeg) == "attachment; filename=\"my_photo.jpg\"")
        #expect(Self.code { () throws(ServiceError) in try ask("wm:0.5:soea:10:5:0.25/plain/local:///a.jpg") } == .badWatermark,
                "no watermark is configured")
        #expect(Self.code { () throws(ServiceError) in try ask("rs:auto:100:100/plain/local:///a.jpg") } == .unsupportedOption)
        #expect(Self.code { () throws(ServiceError) in try ask("brightness:10/plain/local:///a.jpg") } == .unknownParameter)
        #expect(Self.code { () throws(ServiceError) in try ask("msr:100/plain/local:///a.jpg") } == .optionNotAllowed)
        #expect(Self.code { () throws(ServiceError) in try ask("exp:1/plain/local:///a.jpg") } == .expired)
        #expect(Self.code { () throws(ServiceError) in try ask("pr:nope/plain/local:///a.jpg") } == .unknownPreset)
        #expect(Self.code { () throws(ServiceError) in try ask("g:ce:10:0/plain/local:///a.jpg") } == .unsupportedOption)
        #expect(Self.code { () throws(ServiceError) in try ask("el:yes/plain/local:///a.jpg") } == .unknownParameter)
        #expect(Self.code { () throws(ServiceError) in try ask("w:10/plain/ftp://x/a.jpg") } == .badSource)
        #expect(Self.code { () throws(ServiceError) in try ask("w:10/plain/local:///a.jpg@bmp") } == .badFormat)
        #expect(ImgproxyURLs.repaired("/w:1/plain/http:/x.com/a.jpg") == "/w:1/plain/http://x.com/a.jpg")
        #expect(ImgproxyURLs.repaired("/w%3A1/plain/local:/a.jpg") == "/w:1/plain/local:///a.jpg")
        let auto = try Self.imgproxy { $0.imgproxy.autoFormat = true }
        #expect(try auto.ask(path: "_/w:10/plain/local:///a.jpg", accept: "image/avif,image/webp").output.key == "a:avif")
        #expect(try urls.ask(path: "_/w:10/plain/local:///a.jpg", accept: "image/avif,image/webp").output.key == "a:keep-gif-jpeg-png",
                "Accept is not followed without --imgproxy-auto-format")
    }

    @Test func imgproxyWatermarkAndPresets() throws {
        let urls = try Self.imgproxy { $0.watermarks = [ServerConfiguration.Watermark(name: "logo", file: "/x.png")] }
        let ask = try urls.ask(path: "_/wm:0.5:soea:10:5:0.25/plain/local:///a.jpg", accept: nil)
        #expect(ask.processing.watermark == ImageProcessing.Watermark(name: "logo", position: .gravity(.southEast), opacity: 0.5, scale: 0.25, offsetX: 10, offsetY: 5))
        #expect(throws: ServerConfigurationError.self) { try Self.imgproxy(presets: ["broken"]) }
        #expect(throws: ServerConfigurationError.self) { try Self.imgproxy(presets: ["bad=foo:1"]) }
    }

    /// libthumbor's tests: key `my-security-key`.
    @Test func thumborPublishedSignatures() throws {
        let urls = Self.thumbor(key: "my-security-key")
        let a = try urls.ask(path: "8ammJH8D-7tXy6kU3lTvoXlhu4o=/300x200/my.server.com/some/path/to/image.jpg", accept: nil)
        #expect(a.source == "my.server.com/some/path/to/image.jpg" && a.processing.width == 300 && a.processing.height == 200)
        #expect(a.processing.mode == .fill && a.processing.enlarge, "thumbor crops to fill and scales up")
        let b = try urls.ask(path: "B35oBEIwztbc3jm7vsdqLez2C78=/10x10:200x200/300x200/my.server.com/some/path/to/image.jpg", accept: nil)
        #expect(b.processing.cropBox == ImageProcessing.CropBox(left: 10, top: 10, right: 200, bottom: 200))
        // Signed right, but brightness() is not Tessera's: refused, not a signature error.
        #expect(Self.code { () throws(ServiceError) in
            try urls.ask(path: "as8U2DbUUtTMgvPF26LkjS3MocY=/10x10:200x200/300x200/filters:brightness(20):contrast(10)/my.server.com/some/path/to/image.jpg",
                         accept: nil)
        } == .unsupportedOption)
        let c = try urls.ask(path: "zjPLhtFw8eWRM8COvLr0ptQrADE=/fit-in/-300x0/left/top/smart/filters:quality(50):format(webp)/http%3A%2F%2Fexample.com%2Fa%20b.jpg",
                             accept: nil)
        #expect(c.source == "http://example.com/a b.jpg" && c.processing.mode == .fit && !c.processing.enlarge)
        #expect(c.processing.flip == .horizontal && c.processing.gravity == .smart && c.quality == 50 && c.output.key == "f:webp")
        #expect(try urls.ask(path: "8ammJH8D-7tXy6kU3lTvoXlhu4o%3D/300x200/my.server.com/some/path/to/image.jpg", accept: nil).processing.width == 300,
                "the padding sent as %3D")
        for forged in ["9ammJH8D-7tXy6kU3lTvoXlhu4o=/300x200/my.server.com/some/path/to/image.jpg",
                       "8ammJH8D-7tXy6kU3lTvoXlhu4o/300x200/my.server.com/some/path/to/image.jpg",
                       "8ammJH8D-7tXy6kU3lTvoXlhu4o=/300x201/my.server.com/some/path/to/image.jpg"] {
            #expect(Self.code { () throws(ServiceError) in try urls.ask(path: forged, accept: nil) } == .badSignature, "\(forged)")
        }
        #expect(Self.code { () throws(ServiceError) in try urls.ask(path: "unsafe/300x200/a.jpg", accept: nil) } == .missingSignature)
        #expect(try Self.thumbor(key: "k", allowUnsafe: true).ask(path: "unsafe/300x200/a.jpg", accept: nil).source == "a.jpg")
    }

    @Test func thumborGeometryAndFilters() throws {
        let urls = Self.thumbor()
        func ask(_ path: String) throws(ServiceError) -> ImageAsk { try urls.ask(path: "unsafe/" + path, accept: nil) }
        let full = try ask("adaptive-full-fit-in/200x400/a.jpg")
        #expect(full.processing.mode == .cover && full.processing.adaptive && full.processing.enlarge)
        let filled = try ask("fit-in/300x200/filters:fill(red):upscale()/a.jpg")
        #expect(filled.processing.mode == .pad && filled.processing.background == ImageProcessing.Background(red: 255, green: 0, blue: 0) && filled.processing.enlarge)
        let turned = try ask("-300x200/filters:rotate(90)/a.jpg")
        #expect(turned.processing.rotation == .threeQuarters && turned.processing.flip == .vertical,
                "thumbor mirrors, then turns counter-clockwise; Tessera turns clockwise, then mirrors")
        let aligned = try ask("300x200/right/top/filters:no_upscale():blur(3)/a.png")
        #expect(aligned.processing.gravity == .northEast && !aligned.processing.enlarge && aligned.processing.blur == 3)
        #expect(aligned.output.key == "a:keep-avif-gif-jpeg-png-webp")
        #expect(try ask("orig/a.jpg").processing.width == nil)
        #expect(try ask("trim:top-left:20/100x100/a.jpg").processing.trim == 20)
        #expect(Self.code { () throws(ServiceError) in try ask("300x200/filters:bogus()/a.jpg") } == .unknownParameter)
        let cornered = try ask("300x200/filters:round_corner(20%7C10,255,0,0):focal(100x100:300x300):focal(0x0:10x10)/a.jpg")
        #expect(cornered.processing.roundCorners == ImageProcessing.RoundCorners(horizontal: 20, vertical: 10, colour: ImageProcessing.Background(red: 255, green: 0, blue: 0)))
        // Centres (200, 200) weighing 40,000 and (5, 5) weighing 100: (200 × 40000 + 5 × 100) / 40100 = 199.
        #expect(cornered.processing.gravity == .focalPixel(x: 199, y: 199))
        #expect(Self.code { () throws(ServiceError) in try ask("300x200/filters:max_bytes(1000)/a.jpg") } == .unsupportedOption)
        #expect(Self.code { () throws(ServiceError) in try ask("origx100/a.jpg") } == .unsupportedOption)
        #expect(Self.code { () throws(ServiceError) in try ask("meta/300x200/a.jpg") } == .unsupportedOption)
        #expect(Self.code { () throws(ServiceError) in try urls.ask(path: "a.jpg", accept: nil) } != nil)
    }

    /// The statuses each dialect answers with; the JSON code stays Tessera's.
    @Test func dialectStatuses() {
        #expect(URLDialect.imgproxy.status(for: .unknownParameter).code == 404)
        #expect(URLDialect.imgproxy.status(for: .badSignature).code == 403)
        #expect(URLDialect.imgproxy.status(for: .undecodableSource).code == 422)
        #expect(URLDialect.thumbor.status(for: .badSignature).code == 400)
        #expect(URLDialect.thumbor.status(for: .notFound).code == 404)
        #expect(URLDialect.thumbor.status(for: .undecodableSource).code == 400)
        #expect(URLDialect.tessera.status(for: .badSignature).code == 403)
        #expect(URLDialect.thumbor.status(for: .timeout).code == 504)
    }
}
