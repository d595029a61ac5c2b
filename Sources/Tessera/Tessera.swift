// `import Tessera` brings in every layer of the library (docs/ARCHITECTURE.md): core (the lock, the keyed
// task pool, the LRU map, observability, errors, file formats), imaging (pixels, codecs, drawing), tables
// (image tables and the entity cache over them) and remote (requests, the image manager with its memory
// and disk caches). The layers are targets, not products: a dependent gets all of them through the
// `Tessera` product. The AsyncHTTPClient loader is the separate `TesseraHTTP` product, the test support
// `TesseraTesting`.
@_exported import TesseraCore
@_exported import TesseraImaging
@_exported import TesseraTables
@_exported import TesseraRemote
