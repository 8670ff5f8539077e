public import DBus

/// Why the BlueZ medium could not do what it was asked.
public enum BlueZMediumError: Error, Sendable, Hashable {
  /// The advertisement does not fit a legacy 31-byte advertisement; refused before BlueZ saw
  /// it.
  case advertisementTooLong(bytes: Int, limit: Int)
  /// No adapter, or it is not powered.
  case poweredOff(String)
  /// bluetoothd refused access; the text says how to fix it.
  case permissionDenied(String)
  /// bluetoothd is not on the bus.
  case bluetoothdUnavailable(String)
  /// BlueZ answered with an error.
  case bluez(DBusError)
}

extension BlueZMediumError: CustomStringConvertible {
  public var description: String {
    switch self {
    case .advertisementTooLong(let bytes, let limit):
      "the advertisement needs \(bytes) bytes, more than the \(limit) of a legacy BLE "
        + "advertisement; drop the local name or other extra data"
    case .poweredOff(let text), .permissionDenied(let text), .bluetoothdUnavailable(let text):
      text
    case .bluez(let error): "BlueZ: \(error)"
    }
  }
}

/// BlueZ's error names.
extension DBusError.Name {
  public static let bluezInProgress = Self("org.bluez.Error.InProgress")
  public static let bluezNotReady = Self("org.bluez.Error.NotReady")
  public static let bluezFailed = Self("org.bluez.Error.Failed")
  public static let bluezNotPermitted = Self("org.bluez.Error.NotPermitted")
  public static let bluezInvalidLength = Self("org.bluez.Error.InvalidLength")
  public static let bluezAlreadyExists = Self("org.bluez.Error.AlreadyExists")
  public static let bluezDoesNotExist = Self("org.bluez.Error.DoesNotExist")
}

enum BlueZFix {
  static let permission =
    "bluetoothd refused access over D-Bus (org.freedesktop.DBus.Error.AccessDenied). Run as a "
    + "user in the 'bluetooth' group ('sudo usermod -aG bluetooth $USER', then log in again), "
    + "or allow it in a D-Bus policy file under /etc/dbus-1/system.d/ "
    + "(<allow send_destination=\"org.bluez\"/>)."
  static let noDaemon =
    "bluetoothd (org.bluez) is not on the system bus; start it with "
    + "'sudo systemctl start bluetooth' (package bluez)"
  static func noAdapter(_ wanted: String?) -> String {
    if let wanted { return "Bluetooth adapter \(wanted) is missing; check 'bluetoothctl list'" }
    return "no Bluetooth adapter; plug one in or check 'bluetoothctl list'"
  }
  static func off(_ name: String) -> String {
    "Bluetooth adapter \(name) is off; turn it on with 'bluetoothctl power on'"
  }
}
