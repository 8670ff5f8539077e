import CommandLineSupport
import Foundation

/// One wrk run and what its `--latency` report says.
struct WrkRun {
  var requestsPerSecond: Double
  var p50Milliseconds: Double
  var p99Milliseconds: Double
  var requests: Int
  var non2xx: Int
  var socketErrors: String?

  var dictionary: [String: Any] {
    [
      "requests_per_second": requestsPerSecond, "p50_ms": p50Milliseconds,
      "p99_ms": p99Milliseconds, "requests": requests, "non_2xx": non2xx,
    ]
  }

  func line(_ name: String) -> String {
    String(
      format: "%@: %.0f requests/s, p50 %.2f ms, p99 %.2f ms, %d requests, %d not 2xx%@",
      name, requestsPerSecond, p50Milliseconds, p99Milliseconds, requests, non2xx,
      socketErrors.map { ", \($0)" } ?? "")
  }

  /// Runs wrk on a thread of its own (never blocking Swift's pool) and parses its report.
  static func run(_ wrk: String, arguments: [String]) async throws -> WrkRun {
    let output: String = try await withCheckedThrowingContinuation { continuation in
      Thread.detachNewThread {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: wrk)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        do {
          try process.run()
          let data = pipe.fileHandleForReading.readDataToEndOfFile()
          process.waitUntilExit()
          continuation.resume(returning: String(decoding: data, as: UTF8.self))
        } catch {
          continuation.resume(throwing: error)
        }
      }
    }
    return try parse(output)
  }

  static func parse(_ output: String) throws -> WrkRun {
    /// The value of a `--latency` distribution line such as "     99%    1.23ms".
    func percentile(_ label: String) -> Double? {
      for line in output.split(separator: "\n") {
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        if fields.count == 2, fields[0] == label { return milliseconds(String(fields[1])) }
      }
      return nil
    }
    guard
      let rpsLine = output.split(separator: "\n").first(where: { $0.hasPrefix("Requests/sec:") }),
      let rps = Double(rpsLine.split(separator: " ").last ?? "")
    else { throw CommandFailure("could not read wrk's output:\n\(output)") }
    let requests =
      output.split(separator: "\n").first { $0.contains("requests in") }
      .flatMap { Int($0.split(separator: " ").first ?? "") } ?? 0
    let non2xx =
      output.split(separator: "\n").first { $0.contains("Non-2xx") }
      .flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
    let socket = output.split(separator: "\n").first { $0.contains("Socket errors") }
      .map { $0.trimmingCharacters(in: .whitespaces) }
    return WrkRun(
      requestsPerSecond: rps, p50Milliseconds: percentile("50%") ?? .nan,
      p99Milliseconds: percentile("99%") ?? .nan, requests: requests, non2xx: non2xx,
      socketErrors: socket)
  }

  /// "1.23ms", "850.00us", "1.02s" → milliseconds.
  static func milliseconds(_ text: String) -> Double? {
    if text.hasSuffix("us"), let value = Double(text.dropLast(2)) { return value / 1000 }
    if text.hasSuffix("ms"), let value = Double(text.dropLast(2)) { return value }
    if text.hasSuffix("s"), let value = Double(text.dropLast(1)) { return value * 1000 }
    return nil
  }
}
