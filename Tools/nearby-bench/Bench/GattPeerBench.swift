import ArgumentParser
import BLEBlueZ
import CommandLineSupport
import Core
import Foundation
import Logging
import PeerResolution
import Resolution
import Strategy
import Synchronization
import Tokens

/// Heard → found over GATT between two real adapters, with no network: peer resolution over
/// BLE. Made for the BlueZ VM (btvirt's hci0 and hci1, the real bluetoothd).
struct GattPeerBench: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "gatt-peer",
    abstract: "Heard → found over GATT between two real adapters (BlueZ VM), 1 KiB and 100 KiB.",
    discussion: """
      Each round makes two managers, each with a peer resolver whose only transport is GATT \
      and a BlueZ medium: the publisher on --advertiser (broadcast only, connectable advert) \
      publishes a message of each --sizes, the subscriber on --scanner (scan only) subscribes. \
      Heard = the subscriber's medium first reports the publisher's token; found = the \
      subscriber's onFound with the whole content. The difference is the GATT exchange: \
      connect, services, write the question, read the answer (1 KiB: one datagram; 100 KiB: \
      7 of 16 KiB, in 512-byte chunks). Goal: 1 KiB within 3 s. Then both keep running for \
      --refresh-seconds, the subscriber still hearing the publisher: its refreshes (a question \
      every 3 s) and the bytes it read from the publisher meanwhile are counted. Goal: a \
      refresh of an unchanged publication reads none of it (the answers say "unchanged"). \
      --modes notify (the subscriber subscribes to the publisher's notifications: the answer \
      streams) and read (every chunk read: the baseline), measured in the same run. \
      In the VM: \
      Tools/scripts/bluez-vm/run.sh RESULTS .build/debug/nearby-bench gatt-peer --json
      """)

  @Option(help: "Adapter of the publisher.")
  var advertiser = "hci0"

  @Option(help: "Adapter of the subscriber.")
  var scanner = "hci1"

  @Option(help: "Rounds per size.")
  var rounds = 3

  @Option(help: "Message sizes in bytes, comma-separated.")
  var sizes = "1024,102400"

  @Option(
    help: ArgumentHelp(
      "How answers cross, comma-separated: notify (the default: subscribed to the owner's "
        + "notifications), read (every chunk read, the baseline).",
      valueName: "modes"))
  var modes: String?

  @Option(
    help:
      "How long both keep running after the found, refreshes counted (seconds; default 10, 4 with --short)."
  )
  var refreshSeconds: Int?

  /// ``refreshSeconds`` or its default: one refresh (3 s) in the short run.
  var refreshWindow: Int { refreshSeconds ?? (short ? 4 : 10) }

  @Flag(help: "One round per size (the test command's run, so the benchmark cannot rot).")
  var short = false

  @Flag(help: "Print the results as one JSON object.")
  var json = false

  @Option(help: "The nodes' log level on standard error (debug shows each GATT operation).")
  var logLevel = "warning"

  struct SizeResult: Encodable {
    var mode: String
    var bytes: Int
    var rounds: Int
    var heardToFoundMilliseconds: [Double]
    var p50Milliseconds: Double
    var maxMilliseconds: Double
    var publishToHeardMilliseconds: [Double]
    /// Per round, until the found: datagrams the subscriber sent (its questions, a retry
    /// among them) and bytes it read from the publisher (the answer once, or more).
    var findQuestions: [Int]
    var findBytesRead: [Int]
    /// Per round, after the found: questions the subscriber sent, bytes it read from the
    /// publisher, and answers the publisher sent without publications (unchanged).
    var refreshQuestions: [Int]
    var refreshBytesRead: [Int]
    var refreshUnchangedAnswers: [Int]
  }

  struct Results: Encodable {
    var advertiser: String
    var scanner: String
    var sizes: [SizeResult]
  }

  func validate() throws {
    guard Logger.Level(rawValue: logLevel) != nil else {
      throw ValidationError(
        "--log-level must be one of "
          + "\(Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")), got \(logLevel)")
    }
    guard rounds > 0 else { throw ValidationError("--rounds must be > 0") }
    guard (0...600).contains(refreshWindow) else {
      throw ValidationError("--refresh-seconds must be from 0 to 600, got \(refreshWindow)")
    }
    guard advertiser != scanner else {
      throw ValidationError("--advertiser and --scanner must be different adapters")
    }
    guard !parsedModes.isEmpty, parsedModes.allSatisfy({ ["notify", "read"].contains($0) }) else {
      throw ValidationError(
        "--modes takes notify and read, comma-separated, got \(modes ?? "")")
    }
    guard let list = parsedSizes, !list.isEmpty,
      list.allSatisfy({ (1...Message.maximumContentBytes).contains($0) })
    else {
      throw ValidationError(
        "--sizes takes sizes from 1 to \(Message.maximumContentBytes) bytes, comma-separated")
    }
  }

  /// --modes, or by default both, but only read in the short run: bluetoothd in the VM died
  /// under a notified 100 KiB answer in two test runs of about ten, and the short run is the
  /// test command's.
  var parsedModes: [String] {
    (modes ?? (short ? "read" : "notify,read")).split(separator: ",").map {
      $0.trimmingCharacters(in: .whitespaces)
    }
  }

  var parsedSizes: [Int]? {
    let parts = sizes.split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
    return parts.contains(nil) ? nil : parts.compactMap { $0 }
  }

  func run() async throws {
    var results = Results(advertiser: advertiser, scanner: scanner, sizes: [])
    for size in parsedSizes ?? [] {
      for mode in parsedModes {
        results.sizes.append(try await measure(size: size, mode: mode))
      }
    }
    if json {
      print(JSONLine.encode(results))
    } else {
      for size in results.sizes {
        print(
          String(
            format: "%@ → %@, %d bytes, %@: heard → found p50 %.0f ms, max %.0f ms (%d rounds); "
              + "until found: %@ questions, %@ bytes read; "
              + "refreshes over %d s: %@ questions, %@ bytes read, %@ unchanged",
            advertiser, scanner, size.bytes, size.mode, size.p50Milliseconds,
            size.maxMilliseconds, size.rounds, "\(size.findQuestions)", "\(size.findBytesRead)",
            refreshWindow, "\(size.refreshQuestions)",
            "\(size.refreshBytesRead)", "\(size.refreshUnchangedAnswers)"))
      }
    }
  }

  /// The rounds of one size and mode.
  private func measure(size: Int, mode: String) async throws -> SizeResult {
    var heardToFound: [Double] = []
    var publishToHeard: [Double] = []
    var finds: [Refreshes] = []
    var refreshes: [Refreshes] = []
    for round in 1...(short ? 1 : rounds) {
      let (heard, found, find, refreshed) = try await measure(
        size: size, notifications: mode == "notify")
      heardToFound.append(milliseconds(found))
      publishToHeard.append(milliseconds(heard))
      finds.append(find)
      refreshes.append(refreshed)
      progress(
        "\(size) bytes, \(mode), round \(round): heard \(milliseconds(heard)) ms after publishing, "
          + "found \(milliseconds(found)) ms after that (\(find.questions) questions, "
          + "\(find.bytesRead) bytes read); then in \(refreshWindow) s "
          + "\(refreshed.questions) questions, \(refreshed.bytesRead) bytes read, "
          + "\(refreshed.unchanged) answers unchanged")
    }
    let sorted = heardToFound.sorted()
    return SizeResult(
      mode: mode, bytes: size, rounds: sorted.count, heardToFoundMilliseconds: heardToFound,
      p50Milliseconds: sorted[(sorted.count - 1) / 2], maxMilliseconds: sorted.last ?? .nan,
      publishToHeardMilliseconds: publishToHeard, findQuestions: finds.map(\.questions),
      findBytesRead: finds.map(\.bytesRead),
      refreshQuestions: refreshes.map(\.questions),
      refreshBytesRead: refreshes.map(\.bytesRead),
      refreshUnchangedAnswers: refreshes.map(\.unchanged))
  }

  /// What the find, or the refreshes after it, cost.
  struct Refreshes {
    /// Questions the subscriber sent (datagrams, as its resolver counted them).
    var questions: Int
    /// Bytes the subscriber's GATT transport read from the publisher.
    var bytesRead: Int
    /// Answers the publisher sent without publications.
    var unchanged: Int
  }

  /// One round: (publish → heard, heard → found, the find's cost, the refreshes after it).
  private func measure(size: Int, notifications: Bool) async throws -> (
    Duration, Duration, Refreshes, Refreshes
  ) {
    let heardAt = Mutex<ContinuousClock.Instant?>(nil)
    let foundAt = Mutex<ContinuousClock.Instant?>(nil)
    let level = Logger.Level(rawValue: logLevel) ?? .warning
    let content = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) })
    let publisher = try await Node(
      adapter: advertiser, notifications: notifications, logLevel: level, onSighting: nil)
    let subscriber = try await Node(
      adapter: scanner, notifications: notifications, logLevel: level
    ) { _ in
      heardAt.withLock { if $0 == nil { $0 = .now } }
    }
    let published = ContinuousClock.now
    let publication = try await publisher.manager.publish(Message(content: content, type: "bench"))
    {
      $0.strategy = Strategy(mediums: .ble, mode: .broadcast)
    }
    let subscription = try await subscriber.manager.subscribe(
      onFound: { message in
        if message.content == content { foundAt.withLock { if $0 == nil { $0 = .now } } }
      }
    ) {
      $0.type = "bench"
      $0.strategy = Strategy(mediums: .ble, mode: .scan)
    }
    let deadline = ContinuousClock.now + .seconds(90)
    while foundAt.withLock({ $0 }) == nil, ContinuousClock.now < deadline {
      try await Task.sleep(for: .milliseconds(5))
    }
    var refreshes = Refreshes(questions: 0, bytesRead: 0, unchanged: 0)
    // Both nodes are new this round: what they counted so far is the find's.
    let before = (
      await subscriber.resolver.counters(), await subscriber.transport.counters(),
      await publisher.resolver.counters()
    )
    let find = Refreshes(
      questions: before.0.sent, bytesRead: before.1.bytesRead,
      unchanged: before.2.unchangedAnswers)
    if foundAt.withLock({ $0 }) != nil, refreshWindow > 0 {
      try await Task.sleep(for: .seconds(refreshWindow))
      let after = (
        await subscriber.resolver.counters(), await subscriber.transport.counters(),
        await publisher.resolver.counters()
      )
      refreshes = Refreshes(
        questions: after.0.sent - before.0.sent, bytesRead: after.1.bytesRead - before.1.bytesRead,
        unchanged: after.2.unchangedAnswers - before.2.unchangedAnswers)
    }
    await subscription.cancel()
    await publication.cancel()
    // Read before the shutdown: what each side counted says where a lost answer went.
    let counted = (await publisher.counted(), await subscriber.counted())
    await publisher.shutdown()
    await subscriber.shutdown()
    guard let heard = heardAt.withLock({ $0 }), let found = foundAt.withLock({ $0 }) else {
      throw BenchError(
        "\(scanner) did not find the \(size)-byte message of \(advertiser) within 90 s "
          + "(heard: \(heardAt.withLock { $0 } != nil)); publisher \(counted.0); "
          + "subscriber \(counted.1)")
    }
    return (heard - published, found - heard, find, refreshes)
  }

  /// A manager whose peer resolver's only transport is GATT on `adapter`, with a BlueZ medium
  /// whose sightings are also passed to `onSighting`.
  private struct Node {
    let manager: MessageManager
    let resolver: PeerResolver
    let transport: BlueZPeerTransport

    init(
      adapter: String, notifications: Bool, logLevel: Logger.Level,
      onSighting: (@Sendable (Sighting) -> Void)?
    ) async throws {
      var logger = Logger(label: "nearby.bench.gatt-peer.\(adapter)")
      logger.logLevel = logLevel
      var configuration = BlueZConfiguration(bus: .system, adapter: adapter)
      configuration.scanWatchdog = .seconds(3600)
      var transport = BlueZPeerTransportConfiguration(bluez: configuration)
      transport.notifications = notifications
      let carrier = PeerCarrier.bluez(transport).wrapped(medium: { provider in
        MediumProvider(name: "\(provider.name) (observed)") { context in
          ObservedMedium(try await provider.make(context), onSighting: onSighting)
        }
      })
      let assembly = try await PeerResolver.assemble([carrier], logger: logger)
      guard let transport = assembly.transports.first as? BlueZPeerTransport else {
        await assembly.resolver.shutdown()
        throw BenchError(
          "the GATT transport did not open: \(assembly.failures.map { "\($0.error)" })")
      }
      self.transport = transport
      resolver = assembly.resolver
      manager = try await MessageManager(
        apiKey: "gatt-peer-bench",
        configuration: .init(resolver: .peer(resolver), mediums: assembly.mediums, logger: logger))
    }

    /// The GATT transport's and the resolver's counters, for a failure's message.
    func counted() async -> String {
      "gatt \(await transport.counters()), resolver \(await resolver.counters())"
    }

    func shutdown() async {
      await manager.shutdown()
      await resolver.shutdown()
    }
  }

  private func milliseconds(_ duration: Duration) -> Double {
    (Double(duration / .microseconds(1)) / 1000).rounded()
  }

  private func progress(_ text: String) {
    StandardStreams.error("bench: \(text)\n")
  }
}

/// A medium whose sightings are also shown to an observer as they pass.
private final class ObservedMedium: Medium {
  let inner: any Medium
  let sightings: AsyncStream<Sighting>
  private let forward: Task<Void, Never>

  init(_ inner: any Medium, onSighting: (@Sendable (Sighting) -> Void)?) {
    self.inner = inner
    let (stream, continuation) = AsyncStream.makeStream(
      of: Sighting.self, bufferingPolicy: .bufferingNewest(4096))
    sightings = stream
    forward = Task {
      for await sighting in inner.sightings {
        onSighting?(sighting)
        continuation.yield(sighting)
      }
      continuation.finish()
    }
  }

  var kind: DiscoveryMediums { inner.kind }
  var name: String { inner.name }
  var capabilities: MediumCapabilities { inner.capabilities }
  var statusUpdates: AsyncStream<MediumStatus> { inner.statusUpdates }
  func transmit(_ token: Token) async throws { try await inner.transmit(token) }
  func transmit(_ token: Token, digest: HandlesDigest?) async throws {
    try await inner.transmit(token, digest: digest)
  }
  func setPace(_ pace: TransmitPace, for token: Token) async {
    await inner.setPace(pace, for: token)
  }
  func stopTransmitting() async { await inner.stopTransmitting() }
  func startScanning() async throws { try await inner.startScanning() }
  func stopScanning() async { await inner.stopScanning() }
  func shutdown() async {
    await inner.shutdown()
    await forward.value
  }
}
