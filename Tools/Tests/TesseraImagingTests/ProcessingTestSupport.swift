import Foundation
@_spi(Internal) import TesseraImaging

// The synthetic images and pixel comparisons of the image processing tests.

/// Pixel bytes in memory order: blue, green, red, alpha (premultiplied; these are opaque).
typealias BGRA = [UInt8]

let topLeft: BGRA = [255, 0, 0, 255]      // blue
let topRight: BGRA = [0, 255, 0, 255]     // green
let bottomLeft: BGRA = [0, 255, 255, 255] // yellow
let bottomRight: BGRA = [255, 0, 255, 255] // magenta
let opaqueRed: BGRA = [0, 0, 255, 255]

func color(_ p: BGRA) -> Color { Color(red8: p[2], green8: p[1], blue8: p[0], alpha8: p[3]) }

/// A `width`×`height` image in four quadrants of distinct colours.
func quadrants(width: Int, height: Int) throws -> Bitmap {
    let w = Double(width) / 2, h = Double(height) / 2
    return try Bitmap.drawing(size: PixelSize(width: width, height: height)) { context in
        context.fill(Rect(x: 0, y: 0, width: w, height: h), with: color(topLeft))
        context.fill(Rect(x: w, y: 0, width: w, height: h), with: color(topRight))
        context.fill(Rect(x: 0, y: h, width: w, height: h), with: color(bottomLeft))
        context.fill(Rect(x: w, y: h, width: w, height: h), with: color(bottomRight))
    }
}

func png(_ bitmap: Bitmap) throws -> Data { Data(try PNGEncoder().encode(bitmap)) }

func render(_ data: Data, _ processing: ImageProcessing) throws -> Bitmap {
    try ImageDecoder().render(data, processing: processing)
}

/// Whether two pixels differ by at most `tolerance` in every channel.
func near(_ a: [UInt8], _ b: [UInt8], _ tolerance: Int = 2) -> Bool {
    a.count == b.count && zip(a, b).allSatisfy { abs(Int($0) - Int($1)) <= tolerance }
}

/// Every channel value of every pixel.
func channels(_ bitmap: Bitmap) -> [Int] {
    (0..<bitmap.height).flatMap { y in (0..<bitmap.width).flatMap { x in bitmap.pixel(x: x, y: y).map(Int.init) } }
}
