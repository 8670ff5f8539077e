import ArgumentParser
import AudioModem
import CommandLineSupport
import Foundation
import TestSupport
import Tokens
import WebClient

/// The phone's page: its weight as served, and its modem (the WebAssembly the server embeds)
/// against the native build on the same samples, the success rate against C/N0 at both
/// rates a browser runs at.
struct WebBench: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "web",
    abstract: "The web page: its weight, and its WebAssembly modem's decoding against native.",
    discussion: """
      The weight is each file of /web as served (gzipped when the phone accepts gzip). The \
      curves: at each C/N0, the same seeded frames (a random token, 0.3 s of silence around \
      it, white Gaussian noise) are decoded by the native modem and by the served \
      WebAssembly module run in the toolchain's wasmkit (an interpreter: its speed says \
      nothing of a browser's), each counting the frames whose token it finds; the point where \
      each reaches 99 % is interpolated. The worklet's CPU in a browser and the page's times \
      (Start to found, heard to found) are measured by Tools/scripts/web-browser.sh. Exits 1 \
      when the two builds disagree at any point (they share their sources: they must not), \
      not when a goal is missed.
      """)

  @Option(help: "Frames a point and a build.") var trials = 100
  @Option(help: "Seed of the frames and the noise.") var seed: UInt64 = 1
  @Flag(help: "A short run for the test command: 4 frames at 3 points.") var short = false
  @Flag(help: "Print the results as one JSON object.") var json = false

  struct File: Encodable {
    var name: String
    var bytes: Int
    var served: Int
  }

  struct Point: Encodable {
    var rate: Double
    var cn0: Double
    var trials: Int
    var native: Int
    var wasm: Int
  }

  struct Results: Encodable {
    var files: [File]
    var servedTotal: Int
    var servedModem: Int
    var points: [Point]
    /// C/N0 (dB-Hz) where each build first decodes 99 %, by rate.
    var threshold99: [String: [String: Double]]
    var nativeSecondsPerFrame: Double
    var wasmkitSecondsPerFrame: Double
  }

  func validate() throws {
    guard trials > 0 else { throw ValidationError("--trials must be more than 0") }
  }

  func run() async throws {
    let assets = try WebClientAssets()
    let files = assets.files.values.sorted { $0.name < $1.name }.map {
      File(
        name: $0.name, bytes: $0.bytes.readableBytes,
        served: $0.gzipped?.readableBytes ?? $0.bytes.readableBytes)
    }
    let total = files.reduce(0) { $0 + $1.served }
    let modem = files.first { $0.name == "modem.wasm" }?.served ?? 0

    guard let module = assets.files["modem.wasm"] else {
      throw CommandFailure("the page has no modem.wasm: run Tools/scripts/build-web-client.sh")
    }
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
      "nearby-bench-web-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let wasmPath = folder.appendingPathComponent("modem.wasm").path
    try Data(module.bytes.readableBytesView).write(to: URL(fileURLWithPath: wasmPath))
    let wasmkit = try Self.wasmkit()

    let count = short ? 4 : trials
    let levels: [Double] = short ? [24, 28, 32] : Array(stride(from: 23.0, through: 32.0, by: 1))
    var points: [Point] = []
    var (nativeTime, wasmTime, frames) = (0.0, 0.0, 0)
    for rate in ModemVectors.sampleRates {
      let power = try Self.framePower(rate: rate)
      for cn0 in levels {
        // White noise at C/N0: N0 = C / 10^(C/N0 / 10), variance N0 · fs / 2.
        let deviation = (power / pow(10, cn0 / 10) * rate / 2).squareRoot()
        let pointSeed = seed &+ UInt64(rate) &+ UInt64(cn0 * 10)
        let clock = ContinuousClock()
        var native = 0
        nativeTime +=
          clock.measure {
            native = ModemVectors.successes(
              seed: pointSeed, rate: rate, deviation: deviation, count: count)
          }.seconds
        var wasm = 0
        let start = clock.now
        wasm = try await Self.wasmSuccesses(
          wasmkit: wasmkit, module: wasmPath, seed: pointSeed, rate: rate, deviation: deviation,
          count: count)
        wasmTime += (clock.now - start).seconds
        frames += count
        points.append(Point(rate: rate, cn0: cn0, trials: count, native: native, wasm: wasm))
        if !json {
          print(
            String(
              format: "%6.0f Hz  C/N0 %4.1f dB-Hz  native %3d/%d  wasm %3d/%d", rate, cn0, native,
              count, wasm, count))
        }
      }
    }
    var thresholds: [String: [String: Double]] = [:]
    for rate in ModemVectors.sampleRates {
      let curve = points.filter { $0.rate == rate }
      thresholds["\(Int(rate))"] = [
        "native": Self.threshold(curve.map { ($0.cn0, Double($0.native) / Double($0.trials)) }),
        "wasm": Self.threshold(curve.map { ($0.cn0, Double($0.wasm) / Double($0.trials)) }),
      ]
    }
    let results = Results(
      files: files, servedTotal: total, servedModem: modem, points: points,
      threshold99: thresholds, nativeSecondsPerFrame: nativeTime / Double(max(frames, 1)),
      wasmkitSecondsPerFrame: wasmTime / Double(max(frames, 1)))
    if json {
      print(JSONLine.encode(results))
    } else {
      for file in files {
        print("\(file.name): \(file.bytes) bytes, \(file.served) served (gzip)")
      }
      print(
        "page: \(total) bytes served (goal ≤ 150 KB), modem \(modem) (goal ≤ 60 KB)")
      for (rate, values) in thresholds.sorted(by: { $0.key < $1.key }) {
        print(
          "\(rate) Hz: 99 % at \(Self.text(values["native"])) dB-Hz native, "
            + "\(Self.text(values["wasm"])) wasm (goal: within 0.5 dB)")
      }
      print(
        String(
          format: "a frame decoded in %.1f ms native, %.1f ms in wasmkit (an interpreter)",
          results.nativeSecondsPerFrame * 1000, results.wasmkitSecondsPerFrame * 1000))
    }
    let disagreements = points.filter { $0.native != $0.wasm }
    if !disagreements.isEmpty {
      throw CommandFailure(
        "the WebAssembly modem and the native one disagree at \(disagreements.count) points "
          + "(same samples, same sources): \(disagreements.map { "\(Int($0.rate)) Hz \($0.cn0)" })")
    }
  }

  /// The mean square of a frame of peak 0.5 at `rate` (C of C/N0).
  static func framePower(rate: Double) throws -> Double {
    let samples = try AudioModemEncoder(sampleRate: rate, level: 0.5)
      .samples(for: Token(value: 0x0123_4567_89ab_cdef))
    return samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(samples.count)
  }

  /// The first C/N0 where the rate reaches 99 %, interpolated between points; nil if never.
  static func threshold(_ curve: [(Double, Double)]) -> Double {
    for (index, point) in curve.enumerated() where point.1 >= 0.99 {
      guard index > 0 else { return point.0 }
      let previous = curve[index - 1]
      let fraction = (0.99 - previous.1) / max(point.1 - previous.1, 1e-9)
      return previous.0 + fraction * (point.0 - previous.0)
    }
    return .infinity
  }

  static func text(_ value: Double?) -> String {
    guard let value, value.isFinite else { return "never" }
    return String(format: "%.2f", value)
  }

  /// `wasmkit` from the toolchain: next to `swift`, else on PATH.
  static func wasmkit() throws -> String {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
    for folder in path.split(separator: ":") {
      let candidate = "\(folder)/wasmkit"
      if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    }
    throw CommandFailure("wasmkit is not on PATH: it comes with the Swift toolchain (6.2+)")
  }

  /// `nearby_modem_successes` run by wasmkit on the served module.
  static func wasmSuccesses(
    wasmkit: String, module: String, seed: UInt64, rate: Double, deviation: Double, count: Int
  ) async throws -> Int {
    let result = try await ChildProcess.run(
      URL(fileURLWithPath: wasmkit),
      [
        "run", module, "nearby_modem_successes", "i64:\(seed)", "f64:\(rate)",
        "f64:\(deviation)", "i32:\(count)",
      ], timeout: 3600)
    let text = result.outText
    guard let range = text.range(of: #"i32\((-?\d+)\)"#, options: .regularExpression),
      let value = Int(text[range].dropFirst(4).dropLast())
    else {
      throw CommandFailure("wasmkit gave no result for nearby_modem_successes: \(text)")
    }
    guard value >= 0 else { throw CommandFailure("the module refused the rate \(rate)") }
    return value
  }
}
