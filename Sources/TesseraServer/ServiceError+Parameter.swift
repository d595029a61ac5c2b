#if Serving
@_spi(Internal) import TesseraImaging
import Tessera

extension ServiceError.Code {
    /// The code of a refused ``ImageProcessing/Parameter``: the one table from the imaging layer's
    /// parameters to the service's error codes (a width or height, and a source size out of range, are
    /// `bad_size`; a canvas beyond the output-pixel limit is `output_too_large`). A new parameter does not
    /// compile until it has a row here.
    init(_ parameter: ImageProcessing.Parameter) {
        switch parameter {
        case .width, .height, .source: self = .badSize
        case .mode: self = .badMode
        case .gravity: self = .badGravity
        case .focalPoint: self = .badFocalPoint
        case .enlarge: self = .badEnlarge
        case .background: self = .badBackground
        case .dpr: self = .badDPR
        case .blur: self = .badBlur
        case .format: self = .badFormat
        case .quality: self = .badQuality
        case .rotation: self = .badRotate
        case .flip: self = .badFlip
        case .crop: self = .badCrop
        case .trim: self = .badTrim
        case .padding: self = .badPadding
        case .sharpen: self = .badSharpen
        case .pixelate: self = .badPixelate
        case .grayscale: self = .badGrayscale
        case .watermark: self = .badWatermark
        case .metadata: self = .badMetadata
        case .animation: self = .badAnimation
        case .output: self = .outputTooLarge
        }
    }
}

extension ServiceError {
    /// The refusal of `parameter` (its code from ``Code/init(_:)``) with a `message` for people.
    init(_ parameter: ImageProcessing.Parameter, _ message: String) {
        self.init(Code(parameter), message)
    }

    /// The imaging layer's refusal as the service's: its parameter's code and its message.
    init(_ invalid: ImageProcessing.Invalid) {
        self.init(invalid.parameter, invalid.message)
    }
}
#endif
