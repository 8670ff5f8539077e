import ArgumentParser

/// `nearby beacons …`: BLE beacons (Eddystone, iBeacon, AltBeacon).
struct BeaconsCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "beacons",
    abstract: "BLE beacons: scan for and decode Eddystone, iBeacon and AltBeacon frames.",
    subcommands: [BeaconsScanCommand.self, BeaconsParseCommand.self])
}
