import Foundation
import Testing
@_spi(Internal) import TesseraImaging
import Tessera

@Suite("ImageProcessing's vocabulary: formats, ranges and parameters declared once")
struct ImageProcessingVocabularyTests {
    @Test("the format is an ImageFileFormat with the same text in the identity and JSON")
    func format() throws {
        let processing = ImageProcessing(width: 10, format: .webp)
        #expect(processing.identity == "w=10,h=-,m=fit,g=center,e=0,bg=ffffffff,dpr=1.0,blur=-,f=webp,q=-")
        let decoded = try JSONDecoder().decode(ImageProcessing.self, from: Data(#"{"width": 10, "format": "avif"}"#.utf8))
        #expect(decoded.format == .avif)
    }

    @Test("a format Tessera only reads is refused by JSON and by validate()", arguments: [ImageFileFormat.heic])
    func readOnlyFormat(format: ImageFileFormat) {
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(ImageProcessing.self, from: Data(#"{"width": 10, "format": "\#(format.rawValue)"}"#.utf8))
        }
        do throws(ImageProcessing.Invalid) {
            try ImageProcessing(width: 10, format: format).validate()
            Issue.record("\(format) was accepted")
        } catch {
            #expect(error.parameter == .format)
            #expect(error.description.hasPrefix("format: "))
        }
    }

    @Test("each range is declared in the limits and follows them; bounds never trap and hold no NaN")
    func ranges() {
        let limits = ImageProcessing.Limits(maximumDimension: 100, maximumDPR: 2, maximumBlur: 5)
        #expect(limits.dimensionRange == ImageProcessing.Bounds(1, 100))
        #expect(limits.dprRange == ImageProcessing.Bounds(1.0, 2.0))
        #expect(limits.blurRange == ImageProcessing.Bounds(0.0, 5.0))
        #expect(limits.qualityRange == ImageProcessing.Bounds(1, 100))
        #expect("\(ImageProcessing.Limits().dprRange)" == "1 to 4" && "\(ImageProcessing.Limits().dimensionRange)" == "1 to 8192")
        #expect(!limits.dprRange.contains(.nan))
        #expect(!ImageProcessing.Bounds(1, 0).contains(0) && !ImageProcessing.Bounds(1, 0).contains(1))
        #expect(throws: ImageProcessing.Invalid(parameter: .width, message: "101 is not a whole number from 1 to 100")) {
            try ImageProcessing(width: 101).validate(limits)
        }
        #expect(throws: ImageProcessing.Invalid(parameter: .dpr, message: "3.0 is not from 1 to 2")) {
            try ImageProcessing(width: 10, dpr: 3).validate(limits)
        }
    }

    @Test("the parameters' names are the texts Invalid has always printed")
    func parameterNames() {
        #expect(ImageProcessing.Parameter.allCases.map(\.rawValue)
                == ["width", "height", "mode", "gravity", "focalPoint", "enlarge", "background", "dpr", "blur", "format",
                    "quality", "rotation", "flip", "crop", "trim", "padding", "sharpen", "pixelate", "grayscale", "watermark", "metadata", "animation",
                    "source", "output"])
        #expect("\(ImageProcessing.Invalid(parameter: .output, message: "too big"))" == "output: too big")
    }
}
