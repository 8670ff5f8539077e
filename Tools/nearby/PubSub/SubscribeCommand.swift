import ArgumentParser
import BackgroundPersistence
import Core
import Foundation
import Glibc
import PermissionStore
import Strategy

/// `nearby subscribe`: a live table of the messages present nearby, or one JSON event a line.
struct SubscribeCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "subscribe",
    abstract: "Show the messages of nearby devices as they are found and lost, until Ctrl-C.",
    discussion: """
      On a terminal it keeps a live table (message, type, namespace, medium, since, signal) \
      that updates as messages are found and lost; when stdout is not a terminal it prints \
      one line per change, and with --json one JSON object a line (event found or lost, \
      text, base64 content, type, namespace, mediums, time). Mediums and the resolver are \
      chosen as for `nearby publish`.

      \(ExitCodes.help)

      Examples:
        nearby subscribe
        nearby subscribe --type menu --namespace com.example.cafe
        nearby subscribe --mediums lan --lan-interface eth0 --json | jq .text
        nearby subscribe --server http://resolver.local:7171 --api-key KEY
        nearby subscribe --background --mediums ble --type offer --app com.example.kiosk
        nearby subscribe --beacons --namespace com.example --type menu
        nearby subscribe --beacons --no-ibeacons --beacon-filter uid:edd1ebeac04e5defa017

      With --beacons it subscribes to BLE beacons instead (Eddystone, iBeacon, AltBeacon): \
      the attachments registered for them on the server (`nearby beacons register`, \
      `nearby beacons attach`) are found and lost as messages, with the smoothed signal and \
      the distance; --json adds `distance` and `signal` lines.
      """)

  @Option(help: "Only messages of this type (default: every type).") var type: String?
  @Option(help: "Messages of this namespace (default: the project's).") var namespace = ""
  @Flag(
    help: """
      Record the subscription for background restore (nearby-restore) instead of running it \
      here; BLE-only, as in the original API.
      """)
  var background = false
  @Option(help: "The app id whose store keeps --background work.") var app = StoreOptions.defaultApp
  @Flag(help: "Subscribe to the attachments of BLE beacons instead of nearby devices.")
  var beacons = false
  @Flag(help: "With --beacons: Eddystone and AltBeacon only, no iBeacons.") var noIbeacons = false
  @Flag(help: "With --beacons: active discovery even where passive scanning is offered.")
  var activeScan = false
  @Option(
    help: """
      With --beacons: only beacons matching one of these (repeatable): \
      uid:NAMESPACE[:INSTANCE] (20 and 12 hex digits) or ibeacon:UUID[:MAJOR[:MINOR]].
      """)
  var beaconFilter: [String] = []
  @OptionGroup var options: DiscoveryOptions

  func validate() throws {
    if let type {
      do { try Message.validate(type: type) } catch { throw ValidationError("--type: \(error)") }
    }
    do { try Message.validate(namespace: namespace) } catch {
      throw ValidationError("--namespace: \(error)")
    }
    if beacons {
      if background, !beaconFilter.isEmpty {
        throw ValidationError("--beacon-filter is not recorded for --background subscriptions")
      }
      if let mediums = try options.requestedMediums(), mediums != .ble {
        throw ValidationError("--beacons scans BLE only: drop --mediums or use --mediums ble")
      }
      _ = try beaconFilters()
    } else if noIbeacons || activeScan || !beaconFilter.isEmpty {
      throw ValidationError("--no-ibeacons, --active-scan and --beacon-filter need --beacons")
    }
    if background, !beacons, try options.requestedMediums() != .ble {
      throw ValidationError(
        "--background work is BLE-only (as in the original API): add --mediums ble")
    }
  }

  func run() async throws {
    do {
      if background {
        try await recordBackground()
        return
      }
      try await subscribe()
    } catch let failure as ExitFailure {
      FileHandle.standardError.write(Data("error: \(failure.description)\n".utf8))
      throw failure.code
    }
  }

  /// Records the subscription in the app's store for `nearby-restore` to run.
  private func recordBackground() async throws {
    var strategy = try options.strategy()
    strategy.mediums = .ble
    let store = BackgroundPersistence(store: try await DefaultsStore(appID: app))
    let beaconStrategy =
      beacons
      ? BeaconStrategy(
        includeIBeacons: !noIbeacons, lowPowerPreferred: !activeScan, allowInBackground: true)
      : nil
    let recorded = try await store.add(
      BackgroundSubscription(
        namespace: namespace, type: type, strategy: strategy, beaconStrategy: beaconStrategy))
    EventOutput(json: options.json).note(
      "recorded background subscription \(recorded.id) for app \(app); nearby-restore "
        + "--app \(app) runs it (`nearby background on --app \(app)` enables restore)")
  }

  /// The `--beacon-filter` values as filters.
  func beaconFilters() throws -> [BeaconFilter] {
    try beaconFilter.map { text in
      let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
      do {
        switch (parts.first, parts.count) {
        case ("uid", 2), ("uid", 3):
          return try .eddystoneUID(
            namespaceHex: parts[1], instanceHex: parts.count == 3 ? parts[2] : nil)
        case ("ibeacon", 2...4):
          let numbers = try parts.dropFirst(2).map { part in
            guard let value = UInt16(part) else {
              throw ValidationError("--beacon-filter \(text): major and minor are 0…65535")
            }
            return value
          }
          return try .iBeacon(
            uuid: parts[1], major: numbers.first, minor: numbers.dropFirst().first)
        default:
          throw ValidationError(
            "--beacon-filter \(text): use uid:NAMESPACE[:INSTANCE] or ibeacon:UUID[:MAJOR[:MINOR]]")
        }
      } catch let error as BeaconFilterError {
        throw ValidationError("--beacon-filter \(text): \(error)")
      }
    }
  }

  private enum Step {
    case event(SubscriptionEvent)
    case tick
    case stop(String)
  }

  private func subscribe() async throws {
    let signals = SignalStream.make()
    let session = try await DiscoverySession.start(
      options, label: "nearby.subscribe", mediums: beacons ? .ble : nil)
    let output = session.output
    let strategy = try session.strategy(options)
    let (type, namespace, beacons) = (type, namespace, beacons)
    let beaconStrategy = BeaconStrategy(
      includeIBeacons: !noIbeacons, lowPowerPreferred: !activeScan)
    let filters = try beaconFilters()
    let subscription: Subscription
    do {
      subscription = try await session.manager.subscribe(configure: { params in
        params.strategy = strategy
        params.type = type
        params.namespace = namespace
        if beacons {
          params.deviceTypes = .bleBeacons
          params.beaconStrategy = beaconStrategy
          params.beaconFilters = filters
        }
      })
    } catch {
      await session.manager.shutdown()
      throw ExitFailure("cannot subscribe: \(error)", code: ExitCodes.failure)
    }
    let errors = session.followMediumErrors()
    let live = !options.json && isatty(STDOUT_FILENO) == 1
    let (steps, step) = AsyncStream.makeStream(of: Step.self, bufferingPolicy: .unbounded)
    let events = subscription.events
    let reader = Task {
      for await event in events { step.yield(.event(event)) }
      step.yield(.stop("the subscription ended"))
    }
    let waiter = Task {
      for await number in signals {
        step.yield(.stop(number == SIGINT ? "interrupted" : "terminated"))
        return
      }
    }
    let ticker = Task {
      while live, !Task.isCancelled {
        try? await Task.sleep(for: .seconds(1))
        step.yield(.tick)
      }
    }
    var table = LiveTable(mediums: strategy.mediums)
    func write(_ text: String) { FileHandle.standardOutput.write(Data((text + "\n").utf8)) }
    // Home, clear the screen, then the table.
    func draw() { write("\u{1B}[H\u{1B}[2J" + table.render()) }
    if live { draw() }
    var reason = "stopped"
    loop: for await next in steps {
      switch next {
      case .event(.found(let message)):
        table.found(message)
        if options.json {
          output.message("found", message, mediums: strategy.mediums)
        } else if live {
          draw()
        } else {
          write("found \(EventOutput.preview(message)) type=\"\(message.type)\"")
        }
      case .event(.lost(let message)):
        table.lost(message)
        if options.json {
          output.message("lost", message, mediums: strategy.mediums)
        } else if live {
          draw()
        } else {
          write("lost \(EventOutput.preview(message)) type=\"\(message.type)\"")
        }
      case .event(.expired):
        reason = "the subscription's TTL ran out"
        break loop
      case .event(let update):
        // Beacon attachments: distance and signal changes.
        table.update(update)
        if options.json { output.beaconUpdate(update) }
      case .tick:
        if live { draw() }
      case .stop(let why):
        reason = why
        break loop
      }
    }
    waiter.cancel()
    ticker.cancel()
    reader.cancel()
    errors.cancel()
    await subscription.cancel()
    await session.manager.shutdown()
    output.note("unsubscribed (\(reason))")
  }
}
