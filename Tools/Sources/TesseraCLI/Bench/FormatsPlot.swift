import ToolsCairo
import Foundation
import Tessera

/// The format study's chart: for the photograph and for the gradient, load + decode time per
/// format against image size (log scales), and the cold load time dashed.
enum FormatsPlot {
    static let colors: [String: (Double, Double, Double)] = ["png": (0.15, 0.35, 0.8), "jpeg": (0.9, 0.45, 0.05), "webp": (0.1, 0.6, 0.25),
                                                                   "avif": (0.6, 0.15, 0.6)]

    static func draw(_ report: FormatsBenchmark.Report, panelWidth: Int = 560, panelHeight: Int = 420) throws -> Bitmap {
        let width = panelWidth * 2 + 40, height = panelHeight + 110
        return try Bitmap.drawing(size: PixelSize(width: width, height: height)) { context in
            let cr = context.cairo
            context.clear(to: Color(red: 1, green: 1, blue: 1, alpha: 1))
            FramePlot.text(cr, "Load + decode time by size (solid: read from page cache + full decode; dashed: cold read only)",
                           x: 14, y: 26, size: 16, bold: true)
            for (index, kind) in ["photo", "gradient"].enumerated() {
                panel(cr, report.rows.filter { $0.image == kind }, title: kind == "photo" ? "Photograph" : "Smooth gradient",
                      x: Double(20 + index * (panelWidth + 10)), y: 50, width: Double(panelWidth), height: Double(panelHeight))
            }
            var lx = 80.0
            for format in FormatsBenchmark.formats {
                let c = colors[format]!
                cairo_set_source_rgb(cr, c.0, c.1, c.2)
                cairo_rectangle(cr, lx, Double(height - 30), 24, 4)
                cairo_fill(cr)
                FramePlot.text(cr, format.uppercased(), x: lx + 30, y: Double(height - 24), size: 13, bold: true)
                lx += 110
            }
            FramePlot.text(cr, "JPEG q\(report.jpegQuality), WebP q\(report.webpQuality), AVIF q\(report.avifQuality)", x: lx + 20, y: Double(height - 24), size: 12)
        }
    }

    private static func panel(_ cr: OpaquePointer, _ rows: [FormatsBenchmark.Row], title: String,
                              x: Double, y: Double, width: Double, height: Double) {
        let left = x + 60, top = y + 30, plotW = width - 110, plotH = height - 80
        let sizes = FormatsBenchmark.sizes.reversed().map { "\($0.0)x\($0.1)" }
        let minLog = -3.0, maxLog = 2.0   // 0.001 ms … 100 ms
        func px(_ i: Int) -> Double { left + plotW * Double(i) / Double(sizes.count - 1) }
        func py(_ ms: Double) -> Double {
            let l = min(max(log10(max(ms, 1e-6)), minLog), maxLog)
            return top + plotH * (1 - (l - minLog) / (maxLog - minLog))
        }
        FramePlot.text(cr, title, x: left, y: y + 18, size: 14, bold: true)
        cairo_set_source_rgb(cr, 0.97, 0.97, 0.97)
        cairo_rectangle(cr, left, top, plotW, plotH)
        cairo_fill(cr)
        cairo_set_line_width(cr, 1)
        for e in Int(minLog)...Int(maxLog) {
            let gy = py(pow(10, Double(e)))
            cairo_set_source_rgb(cr, 0.82, 0.82, 0.82)
            cairo_move_to(cr, left, gy)
            cairo_line_to(cr, left + plotW, gy)
            cairo_stroke(cr)
            let label = e >= 0 ? "\(Int(pow(10, Double(e)))) ms" : String(format: "%g ms", pow(10, Double(e)))
            FramePlot.text(cr, label, x: x, y: gy + 4, size: 10)
        }
        for (i, size) in sizes.enumerated() {
            FramePlot.text(cr, size, x: px(i) - 22, y: top + plotH + 16, size: 10)
        }
        for format in FormatsBenchmark.formats {
            let c = colors[format]!
            let points = sizes.enumerated().compactMap { i, s in rows.first { $0.size == s && $0.format == format }.map { (i, $0) } }
            for dashed in [false, true] {
                cairo_set_source_rgb(cr, c.0, c.1, c.2)
                cairo_set_line_width(cr, dashed ? 1.2 : 2.2)
                var pattern: [Double] = [5, 4]
                if dashed { cairo_set_dash(cr, &pattern, 2, 0) } else { cairo_set_dash(cr, nil, 0, 0) }
                for (n, (i, row)) in points.enumerated() {
                    let value = dashed ? row.coldLoadMs : row.totalMs
                    if n == 0 { cairo_move_to(cr, px(i), py(value)) } else { cairo_line_to(cr, px(i), py(value)) }
                }
                cairo_stroke(cr)
                cairo_set_dash(cr, nil, 0, 0)
                if !dashed {
                    for (i, row) in points {
                        cairo_arc(cr, px(i), py(row.totalMs), 3, 0, 2 * Double.pi)
                        cairo_fill(cr)
                    }
                }
            }
        }
    }
}
