import BLEBlueZ
import Core
import DBus
import Foundation
import Logging
import Resolution
import TestSupport
import Tokens
import BeaconFrames

/// What the scenario tests of the BlueZ VM do to its stack besides our medium: adverts added
/// with `btmgmt` (the kernel's management interface, not bluetoothd's D-Bus API, as any other
/// program or device would), an adapter's state read from bluetoothd, and managers on one
/// adapter each with the in-process resolver.
enum VMStack {
  struct Failure: Error, CustomStringConvertible {
    var description: String
  }

  /// btmgmt runs under coreutils' `timeout`, which ends it (exit 124) if the kernel never
  /// answers.
  static let timeout = URL(fileURLWithPath: "/usr/bin/timeout")

  /// Runs `btmgmt --index INDEX ARGUMENTS…` (root in the VM) and returns its output.
  ///
  /// Its standard input is a pipe held open until it exits: btmgmt quits as soon as its input
  /// ends, before the kernel answers (with /dev/null it printed nothing and did nothing).
  /// - Throws: ``Failure`` when it exits non-zero, does not exit within 30 s, or its output
  ///   does not contain `expecting`.
  @discardableResult
  static func btmgmt(_ index: Int, _ arguments: [String], expecting: String? = nil) async throws
    -> String
  {
    let process = Process()
    process.executableURL = timeout
    process.arguments =
      ["--kill-after=5", "30", "/usr/bin/btmgmt", "--index", "\(index)"] + arguments
    let input = Pipe()
    let output = Pipe()
    process.standardInput = input
    process.standardOutput = output
    process.standardError = output
    let (ended, end) = AsyncStream.makeStream(of: Int32.self, bufferingPolicy: .bufferingNewest(1))
    process.terminationHandler = { end.yield($0.terminationStatus) }
    try process.run()
    // Only the child writes to the output pipe: its end of file comes when btmgmt exits.
    try? output.fileHandleForWriting.close()
    var iterator = ended.makeAsyncIterator()
    let status = await iterator.next() ?? -1
    try? input.fileHandleForWriting.close()
    let text = String(
      decoding: (try? output.fileHandleForReading.readToEnd()) ?? Data(), as: UTF8.self)
    guard status == 0, expecting.map(text.contains) ?? true else {
      throw Failure(
        description: "btmgmt --index \(index) \(arguments.joined(separator: " ")) exited "
          + "\(status): \(text)")
    }
    return text
  }

  /// Adds advertising instance `instance` on adapter `index` carrying `frame`, as a beacon
  /// sends it but without the Flags (the kernel adds none for a non-connectable, non-
  /// discoverable instance; our frames then still fit in 31 bytes). btvirt's controllers
  /// offer 5 instances.
  static func addBeacon(_ frame: BeaconFrame, instance: Int, on index: Int = 0) async throws {
    let data = Array(frame.advertisement.dropFirst(3))
    try await btmgmt(
      index, ["add-adv", "-d", data.map { String(format: "%02x", $0) }.joined(), "\(instance)"],
      expecting: "Instance added: \(instance)")
  }

  /// Removes advertising instance `instance` of adapter `index`.
  static func removeAdvert(_ instance: Int, on index: Int = 0) async throws {
    try await btmgmt(index, ["rm-adv", "\(instance)"], expecting: "Instance removed: \(instance)")
  }

  /// Removes every advertising instance of adapter `index` (those `btmgmt` added; bluetoothd's
  /// own come back when their clients re-register). Never throws (cleanup), but says on
  /// standard error when it failed: the instances it leaves take the adapter's advertising
  /// from the tests that follow (finding K: this called `clear-adv`, which btmgmt does not
  /// know, and every test after the beacon suite advertised beside 5 stale instances).
  static func clearAdverts(on index: Int = 0) async {
    do { try await btmgmt(index, ["clr-adv"], expecting: "Instance removed") } catch {
      // The kernel also refuses to clear when there is nothing to clear.
      FileHandle.standardError.write(Data("note: clearing adverts: \(error)\n".utf8))
    }
  }

  /// A property of `org.bluez.Adapter1` of `adapter`, from bluetoothd.
  static func adapterProperty(_ name: String, of adapter: String) async throws -> DBusValue {
    let connection = try await DBusConnection(.system)
    defer { connection.close() }
    return try await connection.property(
      name, interface: "org.bluez.Adapter1", of: "org.bluez",
      at: try DBusObjectPath("/org/bluez/\(adapter)"), timeout: .seconds(10))
  }

  /// A manager with only a BlueZ medium on `adapter` and the in-process `resolver`.
  static func manager(
    _ adapter: String, resolver: InProcessResolver, apiKey: String = VMStack.apiKey,
    configure: (inout MessageManager.Configuration) -> Void = { _ in }
  ) async throws -> MessageManager {
    var logger = Logger(label: "vm.manager.\(adapter)")
    logger.logLevel = .warning
    var medium = BlueZConfiguration(bus: .system, adapter: adapter)
    medium.scanWatchdog = .seconds(30)
    var configuration = MessageManager.Configuration(
      resolver: .inProcess(resolver), mediums: [.bluez(medium)], logger: logger)
    configure(&configuration)
    return try await MessageManager(apiKey: apiKey, configuration: configuration)
  }

  static let apiKey = "ble-vm"
}
