import DBus
import Foundation
import Logging

// bluez-double --address ADDRESS [--adapters N] [--ready-file PATH]
// Serves a BlueZ stand-in on the bus at ADDRESS until killed; writes PATH once it owns
// org.bluez (Tools/scripts/services/double-bluez.sh starts it for the tests).
let arguments = Array(CommandLine.arguments.dropFirst())
@MainActor func option(_ name: String) -> String? {
  guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
  return arguments[index + 1]
}
guard
  let address = option("--address")
    ?? ProcessInfo.processInfo.environment["DBUS_SYSTEM_BUS_ADDRESS"]
else {
  FileHandle.standardError.write(
    Data("usage: bluez-double --address ADDRESS [--adapters N] [--ready-file PATH]\n".utf8))
  exit(64)
}
var logger = Logger(label: "bluez-double")
logger.logLevel = .info
let double = BlueZDouble(
  bus: .address(address), adapters: Int(option("--adapters") ?? "3") ?? 3,
  reportInterval: .milliseconds(100), logger: logger)
do {
  try await double.start()
} catch {
  FileHandle.standardError.write(Data("bluez-double: \(error)\n".utf8))
  exit(1)
}
if let ready = option("--ready-file") {
  _ = FileManager.default.createFile(atPath: ready, contents: Data("ready\n".utf8))
}
// Serves until SIGTERM or SIGINT, then ends its tasks and leaves the bus.
let (signals, received) = AsyncStream.makeStream(of: Int32.self)
let sources = [SIGTERM, SIGINT].map { number -> any DispatchSourceSignal in
  signal(number, SIG_IGN)
  let source = DispatchSource.makeSignalSource(signal: number)
  source.setEventHandler { received.yield(number) }
  source.resume()
  return source
}
let number = await signals.first { _ in true } ?? SIGTERM
logger.info("bluez double stopping on signal \(number)")
await double.stop()
withExtendedLifetime(sources) {}
exit(0)
