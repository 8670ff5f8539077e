import DBus

/// An advertisement a client registered, as the double read it from the client's object.
struct RegisteredAdvert: Sendable {
  var owner: String
  var path: DBusObjectPath
  var type: String
  var serviceData: [String: [UInt8]]
  var manufacturerData: [UInt16: [UInt8]]
  var serviceUUIDs: [String]
  var localName: String?
  var txPower: Int16?
  var includesTxPower: Bool

  /// Reads `org.bluez.LEAdvertisement1` properties the way bluetoothd does.
  init(owner: String, path: DBusObjectPath, properties: [String: DBusValue]) throws(DBusError) {
    self.owner = owner
    self.path = path
    guard let type = properties["Type"]?.string, ["broadcast", "peripheral"].contains(type) else {
      throw DBusError(BlueZErrors.invalidArguments, "Type must be broadcast or peripheral")
    }
    self.type = type
    var serviceData: [String: [UInt8]] = [:]
    if let value = properties["ServiceData"] {
      guard let map = value.stringDictionary else {
        throw DBusError(BlueZErrors.invalidArguments, "ServiceData must be a{sv}")
      }
      for (uuid, data) in map {
        guard let bytes = data.bytes else {
          throw DBusError(BlueZErrors.invalidArguments, "ServiceData values must be ay")
        }
        serviceData[shortUUID(uuid)] = bytes
      }
    }
    self.serviceData = serviceData
    var manufacturerData: [UInt16: [UInt8]] = [:]
    if let value = properties["ManufacturerData"] {
      guard let entries = value.entries, value.type == .dictionary(key: .uint16, value: .variant)
      else {
        throw DBusError(BlueZErrors.invalidArguments, "ManufacturerData must be a{qv}")
      }
      for entry in entries {
        guard case .uint16(let id) = entry.key, let bytes = entry.value.bytes else {
          throw DBusError(BlueZErrors.invalidArguments, "ManufacturerData values must be ay")
        }
        manufacturerData[id] = bytes
      }
    }
    self.manufacturerData = manufacturerData
    serviceUUIDs = properties["ServiceUUIDs"]?.elements?.compactMap(\.string) ?? []
    localName = properties["LocalName"]?.string
    let includes = properties["Includes"]?.elements?.compactMap(\.string) ?? []
    includesTxPower = includes.contains("tx-power")
    txPower = properties["TxPower"]?.integer.map { Int16(clamping: $0) }
  }

  /// The AD structures bluetoothd builds for the advert's data (type, bytes after the type),
  /// which a monitor's patterns are matched against: service data (0x16/0x20/0x21: UUID
  /// little-endian, then the data) and manufacturer data (0xFF: company identifier
  /// little-endian, then the data).
  var adStructures: [(type: UInt8, bytes: [UInt8])] {
    serviceData.map { serviceDataStructure(uuid: $0.key, data: $0.value) }
      + manufacturerData.map { (0xff, [UInt8($0.key & 0xff), UInt8($0.key >> 8)] + $0.value) }
  }

  /// The legacy advertising payload length bluetoothd would build: flags, service UUIDs,
  /// service data, manufacturer data, TX power, local name.
  var payloadLength: Int {
    var length = type == "peripheral" ? 3 : 0
    func uuidSize(_ uuid: String) -> Int { uuid.count <= 4 ? 2 : uuid.count <= 8 ? 4 : 16 }
    if !serviceUUIDs.isEmpty { length += 2 + serviceUUIDs.map(uuidSize).reduce(0, +) }
    for (uuid, data) in serviceData { length += 2 + uuidSize(uuid) + data.count }
    for (_, data) in manufacturerData { length += 2 + 2 + data.count }
    if includesTxPower { length += 3 }
    if let localName { length += 2 + localName.utf8.count }
    return length
  }
}

/// BlueZ's error names (org.bluez.Error.*).
enum BlueZErrors {
  static let inProgress = DBusError.Name("org.bluez.Error.InProgress")
  static let notReady = DBusError.Name("org.bluez.Error.NotReady")
  static let failed = DBusError.Name("org.bluez.Error.Failed")
  static let invalidArguments = DBusError.Name("org.bluez.Error.InvalidArguments")
  static let invalidLength = DBusError.Name("org.bluez.Error.InvalidLength")
  static let notPermitted = DBusError.Name("org.bluez.Error.NotPermitted")
  static let alreadyExists = DBusError.Name("org.bluez.Error.AlreadyExists")
  static let doesNotExist = DBusError.Name("org.bluez.Error.DoesNotExist")
  static let notSupported = DBusError.Name("org.bluez.Error.NotSupported")
  static let notAuthorized = DBusError.Name("org.bluez.Error.NotAuthorized")
  static let notConnected = DBusError.Name("org.bluez.Error.NotConnected")
}

/// A service UUID as a client may give it (`FEAA`, `0xfeaa`, `0000feaa-…`), lower case without
/// a `0x`.
func shortUUID(_ uuid: String) -> String {
  let lower = uuid.lowercased()
  return lower.hasPrefix("0x") ? String(lower.dropFirst(2)) : lower
}

/// A service UUID as bluetoothd reports it in `Device1.ServiceData`: 16- and 32-bit UUIDs
/// expanded on the Bluetooth base UUID, the full 128-bit form, lower case.
func fullUUID(_ uuid: String) -> String {
  let short = shortUUID(uuid)
  switch short.count {
  case 4: return "0000\(short)-0000-1000-8000-00805f9b34fb"
  case 8: return "\(short)-0000-1000-8000-00805f9b34fb"
  default: return short
  }
}

/// The AD structure bluetoothd builds for service data: its AD type and its bytes after the
/// type (UUID little-endian, then the data).
func serviceDataStructure(uuid: String, data: [UInt8]) -> (type: UInt8, bytes: [UInt8]) {
  let hex = shortUUID(uuid).replacingOccurrences(of: "-", with: "")
  var uuidBytes: [UInt8] = []
  var index = hex.startIndex
  while index < hex.endIndex, let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex) {
    uuidBytes.append(UInt8(hex[index..<next], radix: 16) ?? 0)
    index = next
  }
  let type: UInt8 = uuidBytes.count == 2 ? 0x16 : uuidBytes.count == 4 ? 0x20 : 0x21
  return (type, uuidBytes.reversed() + data)
}
