// What every layer shares (the lock, the parallelism limit, the keyed task pool, the LRU list and map,
// observability, `TesseraError` with every layer's failures, `ImageFileFormat`) lives in `TesseraCore`,
// below this layer; `import TesseraImaging` brings it in too.
@_exported import TesseraCore
