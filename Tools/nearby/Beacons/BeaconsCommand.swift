import ArgumentParser

/// `nearby beacons …`: BLE beacons (Eddystone, iBeacon, AltBeacon).
struct BeaconsCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "beacons",
    abstract: "BLE beacons: decode Eddystone, iBeacon and AltBeacon frames.",
    subcommands: [BeaconsParseCommand.self])
}
