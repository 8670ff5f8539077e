import DBus
import Foundation
import Testing
import TestSupport
import NearbyTesting

/// The private buses `Tools/scripts/test.sh` starts (Tools/scripts/services/dbus.sh).
enum TestBus {
  static func address(_ variable: String) throws -> DBusBus {
    guard let address = ProcessInfo.processInfo.environment[variable], !address.isEmpty else {
      throw TestBusMissing(variable: variable)
    }
    return .address(address)
  }

  /// The private "system" bus.
  static var system: DBusBus { get throws { try address("NEARBY_TEST_DBUS_SYSTEM_ADDRESS") } }
  /// The private session bus.
  static var session: DBusBus { get throws { try address("NEARBY_TEST_DBUS_SESSION_ADDRESS") } }

  static func connect(_ bus: DBusBus? = nil) async throws -> DBusConnection {
    try await DBusConnection(bus ?? system)
  }
}

struct TestBusMissing: Error, CustomStringConvertible {
  var variable: String
  var description: String {
    "\(variable) is not set: run the tests with Tools/scripts/test.sh, which starts the private "
      + "D-Bus daemons (Tools/scripts/services/dbus.sh)"
  }
}

/// Runs a command to its end on a thread of its own (never on the cooperative pool); returns
/// its exit status and standard output.
func runCommand(_ executable: String, _ arguments: [String]) async throws -> (Int32, String) {
  let result = try await ChildProcess.run(
    URL(fileURLWithPath: executable), arguments, combineOutput: true)
  return (result.status, result.outText)
}

/// The first element of a stream, or `nil` after `timeout` or when it finishes first.
func first<T: Sendable>(of stream: AsyncStream<T>, within timeout: Duration = .seconds(5))
  async -> T?
{
  let recorder = StreamRecorder(stream)
  // The outer optional says whether the wait is over: an element came, or the stream finished.
  let outcome: T?? = await waitForValue(timeout: timeout, interval: .milliseconds(5)) {
    if let element = recorder.elements.first { return element }
    return recorder.isFinished ? .some(nil) : nil
  }
  return outcome ?? nil
}
