import ArgumentParser
import ToolsCairo
import Foundation
import Tessera

/// `tessera table inspect --dir D [--json] [--sheet sheet.png]`.
struct TableInspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Per format: entries, capacity, bytes on disk, bytes per row; optionally a contact sheet."
    )

    @Option(help: "Directory of the tables.") var dir: String
    @Flag(help: "Print JSON.") var json = false
    @Option(help: "Write a contact sheet PNG of the tables' images.") var sheet: String?
    @Option(help: "Most images per format on the sheet.") var sheetLimit = 60

    struct Row: Codable {
        var name: String
        var width: Int
        var height: Int
        var style: String
        var entries: Int
        var capacity: Int
        var bytesOnDisk: Int
        var fileSize: Int
        var maximumBytesOnDisk: Int
        var bytesPerRow: Int
        var bytesPerEntry: Int
    }

    func run() throws {
        let tables = try TableDirectory.open(dir)
        let rows = tables.map { table in
            let usage = table.usage
            return Row(name: table.format.name, width: table.format.size.width, height: table.format.size.height,
                       style: table.format.style.rawValue, entries: usage.entryCount, capacity: usage.capacity,
                       bytesOnDisk: usage.bytesOnDisk, fileSize: usage.fileSize,
                       maximumBytesOnDisk: table.format.maximumBytesOnDisk, bytesPerRow: usage.bytesPerRow,
                       bytesPerEntry: usage.bytesPerEntry)
        }
        if json {
            try Terminal.json(rows)
        } else {
            Terminal.table(["format", "size", "style", "entries", "capacity", "bytes on disk", "file size", "max bytes", "bytes/row", "bytes/entry"],
                           rows.map { ["\($0.name)", "\($0.width)x\($0.height)", $0.style, "\($0.entries)", "\($0.capacity)",
                                       "\($0.bytesOnDisk)", "\($0.fileSize)", "\($0.maximumBytesOnDisk)", "\($0.bytesPerRow)", "\($0.bytesPerEntry)"] })
        }
        if let sheet {
            let picture = try ContactSheet.draw(tables: tables, limit: sheetLimit)
            try Data(try PNGEncoder().encode(picture)).write(to: URL(fileURLWithPath: sheet))
            if !json { print("contact sheet (\(picture.width)x\(picture.height)): \(sheet)") }
        }
    }
}

/// A picture of a table's images: one band per format, its name on top, images in a grid.
enum ContactSheet {
    static func draw(tables: [ImageTable], limit: Int, cell: Int = 104, columns: Int = 10) throws -> Bitmap {
        let label = 22, margin = 8
        let bands = tables.map { table -> (ImageTable, [TableImage]) in
            (table, table.entries().prefix(limit).compactMap { table.image(for: $0.entityID) })
        }
        let height = margin + bands.reduce(0) { total, band in
            total + label + max(1, (band.1.count + columns - 1) / columns) * cell + margin
        }
        let width = margin * 2 + columns * cell
        return try Bitmap.drawing(size: PixelSize(width: width, height: height)) { context in
            context.fill(with: Color(red: 0.15, green: 0.15, blue: 0.17))
            var y = margin
            for (table, images) in bands {
                let cr = context.cairo
                cairo_set_source_rgb(cr, 0.9, 0.9, 0.9)
                cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD)
                cairo_set_font_size(cr, 14)
                cairo_move_to(cr, Double(margin), Double(y + 15))
                cairo_show_text(cr, "\(table.format.name)  \(table.format.size) \(table.format.style)  \(table.usage.entryCount)/\(table.format.maximumCount) entries")
                y += label
                for (i, image) in images.enumerated() {
                    let rect = Rect(x: Double(margin + (i % columns) * cell + 2), y: Double(y + (i / columns) * cell + 2),
                                    width: Double(cell - 4), height: Double(cell - 4))
                    try context.draw(image, in: rect, mode: .fit)
                }
                y += max(1, (images.count + columns - 1) / columns) * cell + margin
            }
        }
    }
}
