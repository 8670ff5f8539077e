public import DBus
import Foundation

/// Where the BlueZ double runs: the private system bus `Tools/scripts/test.sh` starts
/// (Tools/scripts/services/dbus.sh and double-bluez.sh).
public enum DoubleBus {
  /// The private system bus's address, once the double owns org.bluez on it.
  /// - Throws: ``DoubleMissing`` when the tests run without the services of `test.sh`.
  public static func address() throws -> String {
    let environment = ProcessInfo.processInfo.environment
    guard let address = environment["NEARBY_TEST_DBUS_SYSTEM_ADDRESS"],
      environment["NEARBY_TEST_BLUEZ_DOUBLE"] == "1"
    else { throw DoubleMissing() }
    return address
  }

  /// The private system bus, once the double owns org.bluez on it.
  /// - Throws: ``DoubleMissing`` when the tests run without the services of `test.sh`.
  public static func bus() throws -> DBusBus { .address(try address()) }
}

/// The tests were run without the BlueZ double (a plain `swift test`).
public struct DoubleMissing: Error, CustomStringConvertible {
  public init() {}

  public var description: String {
    "NEARBY_TEST_BLUEZ_DOUBLE is not set: run the tests with Tools/scripts/test.sh, which starts "
      + "the private system bus and the BlueZ double (Tools/scripts/services/double-bluez.sh)"
  }
}
