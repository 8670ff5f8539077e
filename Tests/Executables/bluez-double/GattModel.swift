import DBus

/// A GATT application a client registered with `GattManager1.RegisterApplication`, as the
/// double read it from the client's ObjectManager (bluetoothd keeps the same: the services and
/// their characteristics, by the client's object paths).
struct GattApp: Sendable {
  var owner: String
  var root: DBusObjectPath
  var services: [Service]

  struct Service: Sendable {
    var path: DBusObjectPath
    var uuid: String
    var primary: Bool
    var characteristics: [Characteristic]
  }

  struct Characteristic: Sendable {
    var path: DBusObjectPath
    var uuid: String
    /// The app's `Flags` ("read", "write", "notify", "encrypt-read", …).
    var flags: [String]
  }

  /// Reads the app's `GattService1` and `GattCharacteristic1` objects below `root`; a
  /// characteristic whose `Service` is not one of them is left out. Services and
  /// characteristics are kept in path order (handles are given in that order).
  init(owner: String, root: DBusObjectPath, objects: DBusConnection.ManagedObjects) {
    self.owner = owner
    self.root = root
    let below = objects.filter { $0.key.isDescendant(of: root) || $0.key == root }
    var services: [Service] = []
    for (path, interfaces) in below.sorted(by: { $0.key < $1.key }) {
      guard let service = interfaces["org.bluez.GattService1"],
        let uuid = service["UUID"]?.string
      else { continue }
      services.append(
        Service(
          path: path, uuid: uuid.lowercased(), primary: service["Primary"]?.bool ?? true,
          characteristics: []))
    }
    for (path, interfaces) in below.sorted(by: { $0.key < $1.key }) {
      guard let characteristic = interfaces["org.bluez.GattCharacteristic1"],
        let uuid = characteristic["UUID"]?.string,
        let service = characteristic["Service"]?.objectPath,
        let index = services.firstIndex(where: { $0.path == service })
      else { continue }
      services[index].characteristics.append(
        Characteristic(
          path: path, uuid: uuid.lowercased(),
          flags: characteristic["Flags"]?.elements?.compactMap(\.string) ?? []))
    }
    self.services = services
  }
}

/// A characteristic of the remote GATT database a device object shows (below
/// `<device>/serviceXXXX`), and the app's characteristic it stands for.
struct RemoteCharacteristic: Sendable {
  var owner: String
  var appPath: DBusObjectPath
  /// The app's flags (the server's view: its permissions and properties).
  var appFlags: [String]
  /// The flags the client sees: the characteristic's ATT properties, as bluetoothd's
  /// gatt-client names them.
  var flags: [String] { Self.clientFlags(appFlags) }

  /// The app's flags that are ATT characteristic properties (and extended properties), in the
  /// order bluetoothd's gatt-client lists them; permissions such as "encrypt-read" are not
  /// visible to the client.
  static func clientFlags(_ flags: [String]) -> [String] {
    let properties = [
      "broadcast", "read", "write-without-response", "write", "notify", "indicate",
      "authenticated-signed-writes",
    ]
    let extended = ["reliable-write", "writable-auxiliaries"]
    var out = properties.filter(flags.contains)
    let extendedSet = extended.filter(flags.contains)
    if !extendedSet.isEmpty { out += ["extended-properties"] + extendedSet }
    return out
  }

  /// Whether the server (bluetoothd's gatt-database) lets a client write it at all.
  var writable: Bool {
    ["write", "write-without-response", "reliable-write", "authenticated-signed-writes"]
      .contains(where: appFlags.contains)
  }
}

/// One end of an LE link: the adapter and the device object on it that stands for the other
/// end, with the remote GATT objects exported below that device.
struct LinkEnd: Sendable {
  var adapter: String
  var device: DBusObjectPath
  /// The exported remote objects (services and characteristics), in export order.
  var objects: [DBusObjectPath] = []
  var characteristics: [DBusObjectPath: RemoteCharacteristic] = [:]
  var servicesResolved = false
}

/// An LE link made by `Device1.Connect` on the central's device object for a connectable
/// advert of the peripheral's adapter. Each end's remote objects mirror the GATT apps
/// registered on the other end's adapter (bluetoothd discovers the peer's database both ways:
/// `ReverseServiceDiscovery` is on by default).
struct GattLink: Sendable {
  enum Side: Sendable, CaseIterable {
    case central, peripheral
    var other: Side { self == .central ? .peripheral : .central }
  }

  var id: Int
  var central: LinkEnd
  var peripheral: LinkEnd
  var mtu: UInt16
  /// The peripheral's server takes the central as change-unaware (its database changed and
  /// the central did not learn it): every read and write on the link is answered Database
  /// Out of Sync until the link drops. A new link starts aware (an unbonded client's state
  /// is not kept across connections).
  var outOfSync = false

  subscript(side: Side) -> LinkEnd {
    get { side == .central ? central : peripheral }
    set {
      if side == .central { central = newValue } else { peripheral = newValue }
    }
  }

  /// The side whose device object is `device`.
  func side(of device: DBusObjectPath) -> Side? {
    central.device == device ? .central : peripheral.device == device ? .peripheral : nil
  }

  /// The side that shows the remote characteristic at `path`.
  func side(showing path: DBusObjectPath) -> Side? {
    Side.allCases.first { self[$0].characteristics[path] != nil }
  }
}

/// The double's GATT state: apps by adapter, links, the MTU new links negotiate, counters.
struct GattState: Sendable {
  static let defaultMTU: UInt16 = 517
  var apps: [String: [BlueZDouble.AdvertKey: GattApp]] = [:]
  var links: [Int: GattLink] = [:]
  var nextLink = 1
  var mtu = defaultMTU
  /// Device objects the double exported for the central of a link on the peripheral's adapter
  /// (when that adapter did not already have one from hearing the central's advert).
  var peerDevices: Set<DBusObjectPath> = []
  var connects: UInt32 = 0
  var reads: UInt32 = 0
  var writes: UInt32 = 0

  /// Every device path that is an end of a link (bluetoothd keeps connected devices).
  var linkedDevices: Set<DBusObjectPath> {
    Set(links.values.flatMap { [$0.central.device, $0.peripheral.device] })
  }

  func link(at device: DBusObjectPath) -> GattLink? {
    links.values.first { $0.side(of: device) != nil }
  }
}

/// ATT error codes and the D-Bus errors both sides of bluetoothd 5.66 translate them from and
/// to (src/gatt-database.c `dbus_error_to_att_ecode`, src/gatt-client.c
/// `create_gatt_dbus_error`).
enum ATTError {
  static let readNotPermitted: UInt8 = 0x02
  static let writeNotPermitted: UInt8 = 0x03
  static let invalidOffset: UInt8 = 0x07
  static let invalidValueLength: UInt8 = 0x0d
  static let unlikely: UInt8 = 0x0e
  static let databaseOutOfSync: UInt8 = 0x12
  /// BT_ATT_MAX_VALUE_LEN.
  static let maxValueLength = 512

  /// The ATT error the server answers for an app's D-Bus error (`permission` is the "not
  /// permitted" code of the operation, read or write). Any error that is not one of BlueZ's
  /// names (such as a NoReply) is Unlikely Error.
  static func code(for error: DBusError, permission: UInt8) -> UInt8 {
    switch error.name.rawValue {
    case "org.bluez.Error.Failed":
      // strtol(message, &end, 0): an application error code 0x80…0x9F in the message.
      guard let code = cNumber(error.message) else { return 0x80 }
      return (0x80...0x9f).contains(code) ? UInt8(code) : unlikely
    case "org.bluez.Error.NotSupported": return 0x06
    case "org.bluez.Error.NotAuthorized": return 0x08
    case "org.bluez.Error.InvalidValueLength": return invalidValueLength
    case "org.bluez.Error.InvalidOffset": return invalidOffset
    case "org.bluez.Error.InProgress": return 0xfe
    case "org.bluez.Error.NotPermitted": return permission
    default: return unlikely
    }
  }

  /// The D-Bus error the client side answers `ReadValue`/`WriteValue` with for an ATT error.
  static func clientError(_ code: UInt8) -> DBusError {
    switch code {
    case readNotPermitted: DBusError(BlueZErrors.notPermitted, "Read not permitted")
    case writeNotPermitted: DBusError(BlueZErrors.notPermitted, "Write not permitted")
    case 0x05, 0x0f, 0x0c: DBusError(BlueZErrors.notPermitted, "Not paired")
    case invalidOffset: DBusError(BlueZErrors.invalidArguments, "Invalid offset")
    case invalidValueLength: DBusError(BlueZErrors.invalidArguments, "Invalid Length")
    case 0x08: DBusError(BlueZErrors.notAuthorized, "Operation Not Authorized")
    case 0x06: DBusError(BlueZErrors.notSupported, "Operation is not supported")
    case 0: DBusError(BlueZErrors.failed, "Operation failed")
    default:
      DBusError(
        BlueZErrors.failed,
        "Operation failed with ATT error: 0x" + String(code, radix: 16).leftPadded(to: 2))
    }
  }

  /// The number C's `strtol(text, &end, 0)` reads when it reads all of `text` (an empty text
  /// reads as 0), else nil.
  static func cNumber(_ text: String) -> Int? {
    let trimmed = text.drop { $0 == " " || $0 == "\t" || $0 == "\n" }
    guard !trimmed.isEmpty else { return text.isEmpty ? 0 : nil }
    let lower = trimmed.lowercased()
    if lower.hasPrefix("0x") { return Int(lower.dropFirst(2), radix: 16) }
    if lower.hasPrefix("0"), lower.count > 1 { return Int(lower.dropFirst(), radix: 8) }
    return Int(lower)
  }
}

extension String {
  fileprivate func leftPadded(to width: Int) -> String {
    String(repeating: "0", count: Swift.max(0, width - count)) + self
  }
}
