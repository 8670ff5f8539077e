import CommandLineSupport
import ArgumentParser
import BLEBlueZ
import Core

/// `nearby ble status`: adapters, power, advertising capacity, and the medium's status.
struct BLEStatusCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "status",
    abstract: "Print BlueZ's adapters: power, advertising capacity, and whether BLE is usable.",
    discussion: """
      Exit status 0 when the BLE medium is ready, 1 when it is not (the output says why and \
      how to fix it). With --json: {"status","problem","adapters":[{"name","path","powered",\
      "canAdvertise","supportedAdvertisements","activeAdvertisements","inUse"}]}.
      """)

  @OptionGroup var options: BLEOptions

  struct Output: Encodable {
    var status: String
    var problem: String?
    var adapters: [BlueZAdapterInfo]
  }

  func run() async throws {
    let medium = try await options.medium(reportAll: false)
    var statuses = medium.statusUpdates.makeAsyncIterator()
    let status = await statuses.next()
    let adapters = await medium.adapters()
    await medium.shutdown()
    let (name, problem): (String, String?) =
      switch status {
      case .ready?: ("ready", nil)
      case .poweredOff?: ("poweredOff", "no adapter, or it is off: 'bluetoothctl power on'")
      case .permissionDenied(let fix)?: ("permissionDenied", fix)
      case .unavailable(let why)?: ("unavailable", why)
      case nil: ("unknown", "no status")
      }
    if options.json {
      print(JSONLine.encode(Output(status: name, problem: problem, adapters: adapters)))
    } else {
      print("BLE: \(name)\(problem.map { " — \($0)" } ?? "")")
      for adapter in adapters {
        let capacity =
          adapter.canAdvertise
          ? "adverts \(adapter.activeAdvertisements.map(String.init) ?? "?")/"
            + "\(adapter.supportedAdvertisements.map(String.init) ?? "?")"
          : "cannot advertise"
        print(
          "\(adapter.inUse ? "*" : " ") \(adapter.name)  \(adapter.powered ? "powered" : "off")  "
            + capacity)
      }
    }
    if status != .ready { throw ExitCode(1) }
  }
}
