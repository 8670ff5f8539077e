import AudioModem
import Foundation
import TestSupport
import Tokens
import Testing

/// The web page's modem is the same Swift source compiled to WebAssembly with Embedded Swift
/// (Tools/scripts/build-web-modem.sh); these check that it gives the native build's answers.
@Suite("The web page's modem (WebAssembly) against the native one")
struct WebModemTests {
  /// `wasmkit` from the toolchain: next to `swift`, else on PATH.
  static func wasmkit() throws -> URL {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
    for folder in path.split(separator: ":") {
      let candidate = URL(fileURLWithPath: String(folder)).appendingPathComponent("wasmkit")
      if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
    }
    throw WasmkitMissing()
  }

  struct WasmkitMissing: Error, CustomStringConvertible {
    var description: String { "wasmkit is not on PATH: it comes with the Swift toolchain (6.2+)" }
  }

  /// `nearby_modem_vectors_digest(seed)` run by wasmkit on the module at `path`.
  static func wasmDigest(_ path: String, seed: UInt64) async throws -> UInt64? {
    let process = try RunningProcess(
      try wasmkit(), ["run", path, "nearby_modem_vectors_digest", "i64:\(seed)"],
      environment: ProcessInfo.processInfo.environment)
    #expect(await process.exitStatus(timeout: .seconds(120)) == 0, "\(process.errors)")
    _ = await process.waitUntilDrained(timeout: .seconds(5))
    // wasmkit prints the results as `[WasmTypes.Value.i64(N)]`, N unsigned.
    let output = process.lines.joined(separator: "\n")
    guard let range = output.range(of: #"i64\((\d+)\)"#, options: .regularExpression) else {
      Issue.record("no i64 result from wasmkit: \(output) \(process.errors)")
      return nil
    }
    return UInt64(output[range].dropFirst(4).dropLast())
  }

  @Test(
    "the same samples and decisions, bit for bit, at 44.1 and 48 kHz, clean and in noise",
    .requires(.webModem))
  func theSameAnswers() async throws {
    let path = try #require(ProcessInfo.processInfo.environment["NEARBY_TEST_WEB_MODEM"])
    var digests: Set<UInt64> = []
    for seed: UInt64 in [7, 20_261_127] {
      let native = ModemVectors.digest(seed: seed)
      let wasm = try await Self.wasmDigest(path, seed: seed)
      #expect(wasm == native, "seed \(seed): wasm \(String(describing: wasm)), native \(native)")
      digests.insert(native)
    }
    // The digest depends on what was computed: another seed, another digest.
    #expect(digests.count == 2)
  }

  @Test("the battery itself: clean frames decode to their tokens at both rates")
  func theBatteryDecodes() throws {
    for rate in ModemVectors.sampleRates {
      let encoder = try AudioModemEncoder(sampleRate: rate, level: 0.5)
      var decoder = try AudioModemDecoder(sampleRate: rate)
      let token = Token(value: 0x0123_4567_89ab_cdef)
      let silence = [Float](repeating: 0, count: Int(rate * 0.3))
      var found = decoder.process(silence + encoder.samples(for: token) + silence)
      found += decoder.finish()
      #expect(found.map(\.token) == [token], "at \(rate) Hz")
    }
  }
}
