import CommandLineSupport
import ArgumentParser
import BackgroundPersistence
import Core
import Foundation
import Glibc
import PermissionStore
import Strategy
import BeaconFrames

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
      chosen as for `nearby publish` (peer resolution with no server given).

      \(ExitCodes.help)

      Examples:
        nearby subscribe                   # peer resolution: no server anywhere
        nearby subscribe --api-key "our project" --lan-interface eth0
        nearby subscribe --type menu --namespace com.example.cafe
        nearby subscribe --mediums lan --lan-interface eth0 --json | jq .text
        nearby subscribe --mediums ble --ble-adapter hci1
        nearby subscribe --server http://resolver.local:7171 --api-key KEY
        nearby subscribe --resolver local  # the server on this host, started if needed
        nearby subscribe --background --mediums ble --type offer --app com.example.kiosk
        nearby subscribe --beacons --namespace com.example --type menu
        nearby subscribe --beacons --no-ibeacons --beacon-filter uid:edd1ebeac04e5defa017

      With --beacons it subscribes to BLE beacons instead (Eddystone, iBeacon, AltBeacon): \
      the attachments registered for them on the server (`nearby beacons register`, \
      `nearby beacons attach`) are found and lost as messages, with the smoothed signal and \
      the distance; --json adds `distance` and `signal` lines. Beacon attachments live on \
      a server, so --beacons uses the local one (--resolver local) unless --server is given.
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
    _ = try options.resolverMode(beacons: beacons)
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
    if background, options.bleAdapter != nil {
      throw ValidationError(
        "--ble-adapter is not recorded for --background work (nearby-restore picks the adapter)")
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
      StandardStreams.error("error: \(failure.description)\n")
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
}
