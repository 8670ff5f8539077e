import CommandLineSupport
import ArgumentParser
import BLEBlueZ
import Foundation
import Tokens

/// `nearby ble scan`: every advertisement heard, with our token when it is one.
struct BLEScanCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "scan",
    abstract: "Print every BLE advertisement heard: address, RSSI, service and manufacturer data.",
    discussion: """
      Scans with BlueZ (LE discovery, duplicates reported) for --duration seconds and prints \
      each advertising report: the address, RSSI, TX power, service data by UUID and \
      manufacturer data by company id (hex), and our Nearby token when the service data is our \
      frame. With --json, one object a line: {"address","rssi","txPower","serviceData",\
      "manufacturerData","token"}.
      """)

  @OptionGroup var options: BLEOptions

  @Option(help: "How long to scan, in seconds.")
  var duration: Double = 10

  struct Line: Encodable {
    var address: String
    var rssi: Int?
    var txPower: Int?
    var serviceData: [String: String]
    var manufacturerData: [String: String]
    var token: String?
  }

  func validate() throws {
    guard duration > 0, duration <= 86_400 else {
      throw ValidationError("--duration must be between 0 and 86400 seconds")
    }
  }

  func run() async throws {
    let medium = try await options.medium(reportAll: true)
    do {
      try await requireReady(medium)
      try await medium.startScanning()
    } catch {
      await medium.shutdown()
      throw error
    }
    // Each line is written as it is heard, not held in stdio's buffer: a script reading the
    // scan through a pipe sees every report at once.
    let reader = Task {
      for await advertisement in medium.advertisements {
        StandardStreams.output(render(advertisement) + "\n")
      }
    }
    try? await Task.sleep(for: .seconds(duration))
    await medium.shutdown()
    await reader.value
  }

  private func render(_ advertisement: BlueZAdvertisement) -> String {
    let line = Line(
      address: advertisement.address, rssi: advertisement.rssi, txPower: advertisement.txPower,
      serviceData: advertisement.serviceData.mapValues { Hex.encode($0) },
      manufacturerData: Dictionary(
        uniqueKeysWithValues: advertisement.manufacturerData.map {
          (String(format: "0x%04x", $0.key), Hex.encode($0.value))
        }),
      token: advertisement.token?.description)
    if options.json { return JSONLine.encode(line) }
    var parts = [line.address, "rssi \(line.rssi.map(String.init) ?? "?")"]
    if let tx = line.txPower { parts.append("tx \(tx)") }
    for (uuid, data) in line.serviceData.sorted(by: { $0.key < $1.key }) {
      parts.append("service \(uuid)=\(data)")
    }
    for (id, data) in line.manufacturerData.sorted(by: { $0.key < $1.key }) {
      parts.append("manufacturer \(id)=\(data)")
    }
    if let token = line.token { parts.append("nearby token \(token)") }
    return parts.joined(separator: "  ")
  }
}
