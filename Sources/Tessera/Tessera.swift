// `import Tessera` brings in every layer of the library (docs/ARCHITECTURE.md):
// imaging (pixels, codecs, drawing, errors), tables (image tables and the entity cache over them) and
// remote (the image manager with its memory and disk caches). Import a layer on its own to depend on
// less; the AsyncHTTPClient loader is the separate `TesseraHTTP` product.
@_exported import TesseraCore
@_exported import TesseraImaging
@_exported import TesseraTables
@_exported import TesseraRemote
