public import Core

/// The `PeerAddress` (Core) form of a Bluetooth LE device for peer resolution over GATT: the
/// kind `"ble"` and eight bytes, a role ‖ the device address (six bytes, most significant
/// first, as written `AA:BB:…`) ‖ its type (0 public, 1 random).
///
/// The role says how a datagram reaches the device: an **advertiser** (a token heard on its
/// advert) is connected to and written; a **client** (a device connected to our GATT service)
/// reads what is queued for it.
public enum BLEPeerAddress {
  /// The transport kind of Bluetooth LE addresses.
  public static let kind = "ble"

  /// How a datagram reaches the device.
  public enum Role: UInt8, Sendable {
    /// Connect to its GATT service and write the inbox.
    case advertiser = 0
    /// Queue in its outbox, which it reads while connected to us.
    case client = 1
  }

  /// The parts of a BLE peer address.
  public struct Parts: Sendable, Hashable {
    public var role: Role
    /// `AA:BB:CC:DD:EE:FF`, upper case.
    public var address: String
    public var isRandom: Bool
  }

  /// The address of the device `address` (`AA:BB:CC:DD:EE:FF`), or nil when it is not one.
  public static func make(role: Role, address: String, isRandom: Bool) -> PeerAddress? {
    guard let bytes = addressBytes(address) else { return nil }
    return PeerAddress(transport: kind, bytes: [role.rawValue] + bytes + [isRandom ? 1 : 0])
  }

  /// The parts of a BLE peer address; nil for another kind or a malformed one.
  public static func parts(_ address: PeerAddress) -> Parts? {
    let bytes = address.bytes
    guard address.transport == kind, bytes.count == 8, let role = Role(rawValue: bytes[0]),
      bytes[7] <= 1
    else { return nil }
    let text = bytes[1..<7].map { byte in
      let hex = String(byte, radix: 16, uppercase: true)
      return byte < 16 ? "0" + hex : hex
    }.joined(separator: ":")
    return Parts(role: role, address: text, isRandom: bytes[7] == 1)
  }

  /// The six bytes of `AA:BB:CC:DD:EE:FF`; nil when the text is not such an address.
  static func addressBytes(_ text: String) -> [UInt8]? {
    let parts = text.split(separator: ":", omittingEmptySubsequences: false)
    guard parts.count == 6 else { return nil }
    var bytes: [UInt8] = []
    for part in parts {
      guard part.count == 2, let byte = UInt8(part, radix: 16) else { return nil }
      bytes.append(byte)
    }
    return bytes
  }

  /// The address a BlueZ device object stands for (`…/dev_AA_BB_CC_DD_EE_FF`), nil for
  /// another path.
  static func address(ofDevicePath path: String) -> String? {
    guard let last = path.split(separator: "/").last, last.hasPrefix("dev_") else { return nil }
    let address = String(last.dropFirst(4).map { $0 == "_" ? ":" : $0 }).uppercased()
    return addressBytes(address) == nil ? nil : address
  }

  /// The object path BlueZ gives the device `address` under `adapterPath`.
  static func devicePath(adapterPath: String, address: String) -> String {
    adapterPath + "/dev_" + String(address.uppercased().map { $0 == ":" ? "_" : $0 })
  }
}
