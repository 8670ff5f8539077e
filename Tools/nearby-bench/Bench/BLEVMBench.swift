import ArgumentParser
import BLEBlueZ
import CommandLineSupport
import Core
import Foundation
import Logging
import Synchronization
import Tokens

/// Advert → sighting latency and lost adverts between two real adapters: the BlueZ medium
/// transmits on one, another BlueZ medium scans on the other. Made for the BlueZ VM
/// (Tools/scripts/bluez-vm/run.sh: btvirt's hci0 and hci1 in one emulated air, the real
/// bluetoothd), where it measures what the double's `ble` benchmark cannot: bluetoothd, the
/// kernel and the (emulated) controllers.
struct BLEVMBench: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "ble-vm",
    abstract: "Advert → sighting latency and lost adverts between two real adapters (BlueZ VM).",
    discussion: """
      Two BlueZ mediums on the system bus: one transmits on --advertiser, one scans on \
      --scanner. After a warm-up token is heard, each of --rotations rotations transmits a new \
      token (the medium replaces its advert, as a token rotation does) and waits until the \
      scanner's sightings carry it or --hold seconds pass (then it counts as lost). Latency = \
      sighting received − transmit called (both in this process); the registration time \
      (transmit called → returned) is reported apart. --scan discovery forces active \
      discovery instead of the pattern monitor the medium uses where bluetoothd offers one. \
      In the VM: Tools/scripts/bluez-vm/run.sh RESULTS .build/debug/nearby-bench ble-vm --json
      """)

  enum ScanKind: String, ExpressibleByArgument, CaseIterable, Encodable {
    case monitor, discovery
  }

  @Option(help: "Adapter that advertises.")
  var advertiser = "hci0"

  @Option(help: "Adapter that scans.")
  var scanner = "hci1"

  @Option(help: "Tokens transmitted (after the warm-up).")
  var rotations = 40

  @Option(help: "Seconds a token may take to be heard before it counts as lost.")
  var hold = 5

  @Flag(
    help: """
      A short run for the test command (the BlueZ VM stage), so the benchmark cannot rot: 3 \
      rotations (replaces --rotations).
      """)
  var short = false

  @Option(help: "How the scanner scans: monitor (the medium's choice where offered) or discovery.")
  var scan = ScanKind.monitor

  @Flag(help: "Print the results as one JSON object.")
  var json = false

  struct Results: Encodable {
    var advertiser: String
    var scanner: String
    var scan: ScanKind
    var rotations: Int
    var heard: Int
    var lost: Int
    var holdSeconds: Int
    var warmUpMilliseconds: Double
    var latencyP50Milliseconds: Double
    var latencyP90Milliseconds: Double
    var latencyP99Milliseconds: Double
    var latencyMaxMilliseconds: Double
    var registrationP50Milliseconds: Double
    var registrationP99Milliseconds: Double
    /// Sightings of the previous token that arrived after the next one was registered.
    var staleSightings: Int
  }

  func validate() throws {
    guard rotations > 0, hold > 0 else {
      throw ValidationError("--rotations and --hold must be > 0")
    }
    guard advertiser != scanner else {
      throw ValidationError("--advertiser and --scanner must be different adapters")
    }
  }

  func run() async throws {
    let rotations = short ? 3 : self.rotations
    var logger = Logger(label: "nearby.bench.ble-vm")
    logger.logLevel = .warning
    var speakerConfiguration = BlueZConfiguration(bus: .system, adapter: advertiser)
    speakerConfiguration.scanWatchdog = .seconds(3600)
    var listenerConfiguration = BlueZConfiguration(bus: .system, adapter: scanner)
    listenerConfiguration.scanWatchdog = .seconds(3600)
    // Every advertisement reported: the medium then always scans with discovery.
    listenerConfiguration.reportsAllAdvertisements = scan == .discovery
    let speaker = try await BlueZMedium(configuration: speakerConfiguration, logger: logger)
    let listener = try await BlueZMedium(configuration: listenerConfiguration, logger: logger)
    let heard = HeardTokens()
    let reader = Task {
      for await sighting in listener.sightings { heard.record(sighting.token) }
    }
    defer { reader.cancel() }
    try await listener.startScanning()

    let warmUp = Token.random()
    let warmUpStart = ContinuousClock.now
    try await speaker.transmit(warmUp)
    guard let warmUpHeard = await heard.wait(for: warmUp, until: warmUpStart + .seconds(30)) else {
      await speaker.shutdown()
      await listener.shutdown()
      throw BenchError("\(scanner) did not hear the warm-up token from \(advertiser) within 30 s")
    }
    progress("warm-up heard after \(milliseconds(warmUpHeard - warmUpStart)) ms")

    var latencies: [Double] = []
    var registrations: [Double] = []
    var stale = 0
    var previous = warmUp
    for rotation in 1...rotations {
      let token = Token.random()
      let start = ContinuousClock.now
      try await speaker.transmit(token)
      let registered = ContinuousClock.now
      registrations.append(milliseconds(registered - start))
      if let at = await heard.wait(for: token, until: start + .seconds(hold)) {
        latencies.append(milliseconds(at - start))
      } else {
        progress("rotation \(rotation): token not heard within \(hold) s")
      }
      stale += heard.count(of: previous, after: registered)
      previous = token
    }
    await speaker.shutdown()
    await listener.shutdown()

    latencies.sort()
    registrations.sort()
    let results = Results(
      advertiser: advertiser, scanner: scanner, scan: scan, rotations: rotations,
      heard: latencies.count, lost: rotations - latencies.count, holdSeconds: hold,
      warmUpMilliseconds: milliseconds(warmUpHeard - warmUpStart),
      latencyP50Milliseconds: percentile(latencies, 50),
      latencyP90Milliseconds: percentile(latencies, 90),
      latencyP99Milliseconds: percentile(latencies, 99),
      latencyMaxMilliseconds: latencies.last ?? .nan,
      registrationP50Milliseconds: percentile(registrations, 50),
      registrationP99Milliseconds: percentile(registrations, 99), staleSightings: stale)
    if json {
      print(JSONLine.encode(results))
    } else {
      print(
        "\(advertiser) → \(scanner) (\(scan)): \(results.heard) of \(rotations) tokens heard, "
          + "\(results.lost) lost (hold \(hold) s), \(stale) stale sightings")
      print(
        String(
          format: "transmit → sighting: p50 %.0f ms, p90 %.0f ms, p99 %.0f ms, max %.0f ms; "
            + "registration p50 %.0f ms, p99 %.0f ms",
          results.latencyP50Milliseconds, results.latencyP90Milliseconds,
          results.latencyP99Milliseconds, results.latencyMaxMilliseconds,
          results.registrationP50Milliseconds, results.registrationP99Milliseconds))
    }
  }

  /// The value below which `percent` % of the sorted `values` fall (nearest rank); NaN if none.
  private func percentile(_ values: [Double], _ percent: Int) -> Double {
    guard !values.isEmpty else { return .nan }
    let rank = Int((Double(percent) / 100 * Double(values.count)).rounded(.up))
    return values[min(values.count - 1, max(0, rank - 1))]
  }

  private func milliseconds(_ duration: Duration) -> Double {
    Double(duration / .microseconds(1)) / 1000
  }

  private func progress(_ text: String) {
    StandardStreams.error("bench: \(text)\n")
  }
}

/// When each token was heard, first and every time, written by the sightings reader.
private final class HeardTokens: Sendable {
  private let heard = Mutex<[Token: [ContinuousClock.Instant]]>([:])

  func record(_ token: Token) {
    let now = ContinuousClock.now
    heard.withLock { $0[token, default: []].append(now) }
  }

  /// When `token` was first heard, waiting (polling every 2 ms) until `deadline`.
  func wait(for token: Token, until deadline: ContinuousClock.Instant) async -> ContinuousClock
    .Instant?
  {
    while true {
      if let first = heard.withLock({ $0[token]?.first }) { return first }
      if ContinuousClock.now >= deadline { return nil }
      try? await Task.sleep(for: .milliseconds(2))
    }
  }

  /// How many times `token` was heard after `instant`.
  func count(of token: Token, after instant: ContinuousClock.Instant) -> Int {
    heard.withLock { $0[token]?.filter { $0 > instant }.count ?? 0 }
  }
}
