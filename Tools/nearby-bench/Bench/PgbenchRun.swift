import CommandLineSupport
import Foundation
import ServerStorage
import TestSupport

/// pgbench's built-in TPC-B-like transaction against the PostgreSQL the server uses: the
/// reference a report's throughput is compared with. A report does about as much work (a few
/// keyed reads and upserts and an insert), so it says what the database itself can do here.
struct PgbenchRun {
  var transactionsPerSecond: Double
  var averageLatencyMilliseconds: Double
  var transactions: Int
  var scale: Int

  var dictionary: [String: Any] {
    [
      "tps": transactionsPerSecond, "latency_average_ms": averageLatencyMilliseconds,
      "transactions": transactions, "scale": scale,
    ]
  }

  func line() -> String {
    String(
      format:
        "pgbench tpcb-like (scale %d): %.0f transactions/s, average latency %.2f ms, %d transactions",
      scale, transactionsPerSecond, averageLatencyMilliseconds, transactions)
  }

  /// Creates pgbench's tables (scale `scale`) in the database of `url`, runs `-b tpcb-like`
  /// with `clients` connections for `seconds`, and drops the tables again (also on failure).
  /// - Throws: ``CommandFailure`` naming the step when pgbench fails or its output is unreadable.
  static func run(
    pgbench: String, url given: String, scale: Int, clients: Int, threads: Int, seconds: Int
  ) async throws -> PgbenchRun {
    let url = libpqURL(given)
    _ = try await step(pgbench, ["-i", "-q", "-s", "\(scale)", "-I", "dtgvp", url], what: "init")
    let output: String
    do {
      output = try await step(
        pgbench,
        [
          "-b", "tpcb-like", "-n", "-c", "\(clients)", "-j", "\(threads)", "-T", "\(seconds)",
          url,
        ], what: "run", timeout: TimeInterval(seconds + 120))
    } catch {
      _ = try? await step(pgbench, ["-i", "-I", "d", url], what: "drop")
      throw error
    }
    _ = try await step(pgbench, ["-i", "-I", "d", url], what: "drop")
    var run = try parse(output)
    run.scale = scale
    return run
  }

  /// The URL without the query items only nearby reads (`PostgresStorage.nearbyQueryItems`),
  /// which libpq refuses.
  static func libpqURL(_ text: String) -> String {
    guard var components = URLComponents(string: text), let items = components.queryItems
    else { return text }
    let kept = items.filter { !PostgresStorage.nearbyQueryItems.contains($0.name) }
    components.queryItems = kept.isEmpty ? nil : kept
    return components.string ?? text
  }

  /// Reads "tps = 4076.123 (without initial connection time)", "latency average = 15.7 ms"
  /// and "number of transactions actually processed: 40761".
  static func parse(_ output: String) throws -> PgbenchRun {
    func number(after prefix: String) -> Double? {
      for line in output.split(separator: "\n") where line.hasPrefix(prefix) {
        let rest = line.dropFirst(prefix.count).split(separator: " ").first ?? ""
        return Double(rest.split(separator: "/").first ?? rest)
      }
      return nil
    }
    guard let tps = number(after: "tps = "), let latency = number(after: "latency average = ")
    else { throw CommandFailure("could not read pgbench's output:\n\(output)") }
    let transactions = number(after: "number of transactions actually processed: ") ?? 0
    return PgbenchRun(
      transactionsPerSecond: tps, averageLatencyMilliseconds: latency,
      transactions: Int(transactions), scale: 0)
  }

  private static func step(
    _ pgbench: String, _ arguments: [String], what: String, timeout: TimeInterval = 600
  ) async throws -> String {
    let result = try await ChildProcess.run(
      URL(fileURLWithPath: pgbench), arguments, combineOutput: true, timeout: timeout)
    let output = String(decoding: result.out, as: UTF8.self)
    guard result.status == 0 else {
      throw CommandFailure("pgbench (\(what)) exited with \(result.status):\n\(output)")
    }
    return output
  }
}
