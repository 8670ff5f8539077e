import ArgumentParser

/// `nearby beacons …`: BLE beacons (Eddystone, iBeacon, AltBeacon).
struct BeaconsCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "beacons",
    abstract:
      "BLE beacons: scan for and decode Eddystone, iBeacon and AltBeacon frames; register beacons and their attachments on the resolver server; read their diagnostics.",
    subcommands: [
      BeaconsScanCommand.self, BeaconsParseCommand.self, BeaconsRegisterCommand.self,
      BeaconsAttachCommand.self, BeaconsListCommand.self, BeaconsUpdateCommand.self,
      BeaconsDeleteCommand.self, BeaconsAttachmentsCommand.self, BeaconsDetachCommand.self,
      BeaconsDiagnosticsCommand.self, BeaconsEIDParamsCommand.self,
    ])
}
