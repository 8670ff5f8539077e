import ArgumentParser
import BLEBlueZ
import DBus
import Logging

struct BLECommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "ble",
    abstract: "Bluetooth LE through BlueZ: scan for advertisements, show adapters.",
    subcommands: [BLEScanCommand.self, BLEStatusCommand.self])
}

/// Options every `nearby ble` command shares.
struct BLEOptions: ParsableArguments {
  @Option(help: "The adapter to use, such as hci0 (default: the first powered one).")
  var adapter: String?

  @Option(help: "The D-Bus address of the bus bluetoothd is on (default: the system bus).")
  var busAddress: String?

  @Flag(help: "Print JSON, one object a line.")
  var json = false

  func medium(reportAll: Bool) async throws -> BlueZMedium {
    var configuration = BlueZConfiguration(
      bus: busAddress.map(DBusBus.address) ?? .system, adapter: adapter)
    configuration.reportsAllAdvertisements = reportAll
    var logger = Logger(label: "nearby.ble")
    logger.logLevel = .error
    do {
      return try await BlueZMedium(configuration: configuration, logger: logger)
    } catch let error as DBusError {
      throw BLEFailure("cannot reach the D-Bus bus: \(error)")
    }
  }
}

/// Prints the status, or fails with the fix when the medium cannot work.
func requireReady(_ medium: BlueZMedium) async throws {
  var statuses = medium.statusUpdates.makeAsyncIterator()
  let status = await statuses.next()
  switch status {
  case .ready?: return
  case .poweredOff?:
    let adapters = await medium.adapters()
    throw BLEFailure(
      adapters.isEmpty
        ? "no Bluetooth adapter; check 'bluetoothctl list'"
        : "the Bluetooth adapter is off; turn it on with 'bluetoothctl power on'")
  case .permissionDenied(let fix)?: throw BLEFailure(fix)
  case .unavailable(let why)?: throw BLEFailure(why)
  case nil: throw BLEFailure("the medium ended before reporting its status")
  }
}

struct BLEFailure: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}
