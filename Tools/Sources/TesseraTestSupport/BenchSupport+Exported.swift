// The peers and processes the benchmarks start too (the test origin, moto, nginx, child processes, raw
// HTTP): tests that import TesseraTestSupport get them as before.
@_exported import TesseraBenchSupport
