import ToolsCairo
import Foundation
import Tessera

/// Draws frame work per method against the 16.7 ms budget: one strip per method, one bar per frame
/// (green within budget, red dropped), the budget as a dashed line, the start of the rest phase as
/// a grey line.
enum FramePlot {
    static func draw(_ report: DemoReport, width: Int = 1200, stripHeight: Int = 120) throws -> Bitmap {
        let top = 50, left = 70, right = 20, gap = 34
        let height = top + report.methods.count * (stripHeight + gap) + 30
        let ceiling = 50.0   // ms shown at the top of each strip; longer frames are clipped (marked with a tick)
        return try Bitmap.drawing(size: PixelSize(width: width, height: height)) { context in
            let cr = context.cairo
            context.clear(to: Color(red: 1, green: 1, blue: 1, alpha: 1))
            text(cr, "Frame work per frame on the frame thread (ms), \(report.grid.columns)-column grid of \(report.grid.cellSize) cells, \(report.pixelsPerFrame) px/frame; budget \(String(format: "%.1f", report.budgetMilliseconds)) ms",
                 x: 10, y: 24, size: 16, bold: true)
            let plotWidth = Double(width - left - right)
            for (index, method) in report.methods.enumerated() {
                let y0 = Double(top + index * (stripHeight + gap) + gap - 8)
                let h = Double(stripHeight)
                let summary = String(format: "%@ — %d/%d within budget, %d dropped, %.1f FPS, p50 %.2f ms, p99 %.2f ms, %d placeholder frames",
                                     method.label, method.frames.withinBudget, method.frames.frames, method.frames.dropped,
                                     method.frames.effectiveFPS, method.frames.medianSeconds * 1000, method.frames.p99Seconds * 1000,
                                     method.placeholderFrames)
                text(cr, summary, x: Double(left), y: y0 - 6, size: 12, bold: true)
                cairo_set_source_rgb(cr, 0.96, 0.96, 0.96)
                cairo_rectangle(cr, Double(left), y0, plotWidth, h)
                cairo_fill(cr)
                let values = method.frameMilliseconds
                let barWidth = plotWidth / Double(max(1, values.count))
                for (frame, ms) in values.enumerated() {
                    let clipped = min(ms, ceiling)
                    let barHeight = max(0.5, clipped / ceiling * h)
                    if ms > report.budgetMilliseconds { cairo_set_source_rgb(cr, 0.85, 0.15, 0.1) } else { cairo_set_source_rgb(cr, 0.2, 0.6, 0.25) }
                    cairo_rectangle(cr, Double(left) + Double(frame) * barWidth, y0 + h - barHeight, max(1, barWidth), barHeight)
                    cairo_fill(cr)
                    if ms > ceiling {
                        cairo_rectangle(cr, Double(left) + Double(frame) * barWidth, y0 - 3, max(1, barWidth), 3)
                        cairo_fill(cr)
                    }
                }
                // budget line
                let budgetY = y0 + h - report.budgetMilliseconds / ceiling * h
                cairo_set_source_rgb(cr, 0.1, 0.1, 0.8)
                cairo_set_line_width(cr, 1)
                var dash: [Double] = [5, 3]
                cairo_set_dash(cr, &dash, 2, 0)
                cairo_move_to(cr, Double(left), budgetY)
                cairo_line_to(cr, Double(left) + plotWidth, budgetY)
                cairo_stroke(cr)
                cairo_set_dash(cr, nil, 0, 0)
                // rest phase
                let restX = Double(left) + Double(report.movingFrames) * barWidth
                cairo_set_source_rgb(cr, 0.5, 0.5, 0.5)
                cairo_move_to(cr, restX, y0)
                cairo_line_to(cr, restX, y0 + h)
                cairo_stroke(cr)
                text(cr, "0", x: Double(left) - 14, y: y0 + h, size: 10)
                text(cr, String(format: "%.1f", report.budgetMilliseconds), x: Double(left) - 30, y: budgetY + 4, size: 10)
                text(cr, String(format: "%.0f ms", ceiling), x: Double(left) - 42, y: y0 + 9, size: 10)
            }
            text(cr, "frame →  (grey line: scrolling stops; red: over budget, clipped at \(Int(ceiling)) ms with a tick on top)",
                 x: Double(left), y: Double(height - 10), size: 11)
        }
    }

    static func text(_ cr: OpaquePointer, _ string: String, x: Double, y: Double, size: Double, bold: Bool = false) {
        cairo_set_source_rgb(cr, 0.1, 0.1, 0.1)
        cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL)
        cairo_set_font_size(cr, size)
        cairo_move_to(cr, x, y)
        cairo_show_text(cr, string)
    }
}
