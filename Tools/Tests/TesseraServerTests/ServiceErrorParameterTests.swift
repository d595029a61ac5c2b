import Testing
@_spi(Internal) import TesseraImaging
@testable import TesseraServer
import TesseraTestSupport

/// The one table from the imaging layer's parameters to the service's error codes, and the parsers that
/// use it: each parameter's failure keeps the code and status it had before the table.
@Suite("ServiceError: parameter → error code")
struct ServiceErrorParameterTests {
    /// The code each parameter answers with (docs/SERVING.md's table).
    static let expected: [ImageProcessing.Parameter: String] = [
        .width: "bad_size", .height: "bad_size", .mode: "bad_mode", .gravity: "bad_gravity", .focalPoint: "bad_fp",
        .enlarge: "bad_enlarge", .background: "bad_bg", .dpr: "bad_dpr", .blur: "bad_blur", .format: "bad_format",
        .quality: "bad_quality", .rotation: "bad_rotate", .flip: "bad_flip", .source: "bad_size", .output: "output_too_large",
        .crop: "bad_crop", .trim: "bad_trim", .padding: "bad_padding", .sharpen: "bad_sharpen", .pixelate: "bad_pixelate",
        .grayscale: "bad_grayscale", .watermark: "bad_watermark", .metadata: "bad_metadata", .animation: "bad_animation",
    ]

    @Test("every parameter has its code, each a 400", arguments: ImageProcessing.Parameter.allCases)
    func table(parameter: ImageProcessing.Parameter) {
        let error = ServiceError(parameter, "message")
        #expect(error.code.rawValue == Self.expected[parameter], "\(parameter)")
        #expect(error.status.code == 400)
        #expect(ServiceError(ImageProcessing.Invalid(parameter: parameter, message: "m")).code == error.code)
    }

    /// The code `/v1/resize`'s parser, then the ranges' check every ask gets, answer `query` with, or `nil`
    /// when both accept it.
    static func refusal(_ query: [String: String]) -> String? {
        do throws(ServiceError) {
            let processing = try ImageService.processing(from: query, limits: ServerConfiguration.Limits())
            do throws(ImageProcessing.Invalid) { try processing.validate(ImageProcessing.Limits(maximumOutputPixels: ServerConfiguration.Limits().maximumOutputPixels)) } catch { throw ServiceError(error) }
            return nil
        } catch {
            return error.code.rawValue
        }
    }

    @Test("the resize parser refuses each bad value with the parameter's code")
    func resizeParser() {
        let cases: [([String: String], String?)] = [
            (["w": "0"], "bad_size"), (["w": "8193"], "bad_size"), (["h": "x"], "bad_size"), ([:], nil),
            (["w": "8192"], nil), (["w": "10", "mode": "stretch"], "bad_mode"), (["w": "10", "mode": "fill-down"], nil),
            (["w": "10", "gravity": "up"], "bad_gravity"), (["w": "10", "gravity": "fp"], "bad_gravity"),
            (["w": "10", "fp": "1.5,0"], "bad_fp"), (["w": "10", "fp": "0.5,0.5", "gravity": "north"], "bad_gravity"),
            (["w": "10", "enlarge": "yes"], "bad_enlarge"), (["w": "10", "bg": "xyz"], "bad_bg"),
            (["w": "10", "dpr": "4.5"], "bad_dpr"), (["w": "10", "dpr": "4"], nil), (["w": "10", "dpr": "nan"], "bad_dpr"),
            (["w": "10", "blur": "100.5"], "bad_blur"), (["w": "10", "blur": "100"], nil),
            (["w": "2000", "h": "2000", "dpr": "2"], "output_too_large"),
            (["w": "10", "rotate": "45"], "bad_rotate"), (["w": "10", "rotate": "-90"], "bad_rotate"), (["w": "10", "rotate": "270"], nil),
            (["w": "10", "flip": "x"], "bad_flip"), (["w": "10", "flip": "hv"], nil),
            (["crop": "10:0.5"], nil), (["crop": "10:-1"], "bad_crop"), (["crop": "a:b"], "bad_crop"),
            (["crop": "10:10", "crop_gravity": "fp:0.2:0.8"], nil), (["crop": "10:10", "crop_gravity": "fp:2:0"], "bad_crop"),
            (["crop_box": "0,0,10,10"], nil), (["crop_box": "10,0,10,10"], "bad_crop"), (["crop_box": "-1,0,10,10"], "bad_crop"),
            (["trim": "255"], nil), (["trim": "-1"], "bad_trim"), (["padding": "1,2,3"], nil), (["padding": "8193"], "bad_padding"),
            (["padding": ""], "bad_padding"), (["sharpen": "10"], nil), (["sharpen": "nan"], "bad_sharpen"),
            (["pixelate": "256"], nil), (["pixelate": "257"], "bad_pixelate"), (["grayscale": "true"], nil),
            (["metadata": "keep"], nil), (["metadata": "copyright"], nil), (["metadata": "all"], "bad_metadata"), (["metadata": "Keep"], "bad_metadata"),
            (["animation": "first"], nil), (["animation": "all"], nil), (["animation": "none"], "bad_animation"),
        ]
        for (query, code) in cases {
            #expect(Self.refusal(query) == code, "\(query)")
        }
    }

    @Test("q and fmt are refused with bad_quality and bad_format; read-only formats are not output formats")
    func qualityAndFormat() throws {
        for text in ["0", "101", "x"] {
            do throws(ServiceError) {
                _ = try ImageService.quality(text)
                Issue.record("q=\(text) was accepted")
            } catch {
                #expect(error.code == .badQuality)
            }
        }
        #expect(try ImageService.quality("100") == 100)
        for fmt in ["heic", "bmp"] {
            do throws(ServiceError) {
                _ = try OutputChoice(fmt: fmt, accept: nil)
                Issue.record("fmt=\(fmt) was accepted")
            } catch {
                #expect(error.code == .badFormat)
                #expect(error.message == "fmt is jpeg, png, webp, gif or avif")
            }
        }
        #expect(try OutputChoice(fmt: "JPG", accept: nil).key == "f:jpeg")
        #expect(try OutputChoice(fmt: "avif", accept: nil).format(hasAlpha: true) == .avif)
    }
}
