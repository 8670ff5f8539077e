import Core
import DBus

/// What the suites that test a decision on instants share: time as seconds past `start`, and
/// the device paths on two adapters (hci1 the scanning one, hci0 elsewhere).
protocol DecidedOnInstants {
  var start: NearbyClock.Instant { get }
}

extension DecidedOnInstants {
  func at(_ seconds: Double) -> NearbyClock.Instant { start + .seconds(seconds) }

  static var adapter: DBusObjectPath { try! DBusObjectPath("/org/bluez/hci1") }
  static var path: DBusObjectPath { try! DBusObjectPath("/org/bluez/hci1/dev_C0_DE_00_00_00_01") }
  static var other: DBusObjectPath { try! DBusObjectPath("/org/bluez/hci1/dev_C0_DE_00_00_00_02") }
  static var elsewhere: DBusObjectPath {
    try! DBusObjectPath("/org/bluez/hci0/dev_C0_DE_00_00_00_03")
  }
}
