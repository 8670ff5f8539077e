public import Core
import Tokens

/// The server's text forms of a beacon id: its kind and hex bytes as an API call sends them,
/// and its name, `kind!hex`.
extension BeaconID {
  /// The longest beacon name: `eddystone-eid!` or `altbeacon!` with its id.
  public static let maximumNameBytes = 64

  /// Parses the id from hex digits (either case), strictly over ASCII: any other character
  /// (fullwidth digits included, which `Character.isHexDigit` accepts) is refused.
  /// - Throws: ``BeaconInputError`` naming the expected length or the bad text.
  public init(kind: Kind, hex: String) throws(BeaconInputError) {
    let utf8 = hex.utf8
    guard utf8.count == kind.byteCount * 2 else {
      throw .invalid(
        "a \(kind.rawValue) advertisedId.id is \(kind.byteCount * 2) hex digits "
          + "(\(kind.byteCount) bytes), got \(utf8.count) bytes of text")
    }
    guard let bytes = Hex.decode(hex), let id = BeaconID(kind: kind, bytes: bytes) else {
      throw .invalid("advertisedId.id must be hex digits [0-9a-fA-F], got '\(hex.prefix(64))'")
    }
    self = id
  }

  /// Parses a beacon's name (`kind!hex`, as ``name`` writes it: lower-case hex).
  /// - Throws: ``BeaconInputError`` saying what is malformed.
  public init(name: String) throws(BeaconInputError) {
    guard name.utf8.count <= Self.maximumNameBytes, let bang = name.firstIndex(of: "!"),
      let kind = Kind(rawValue: String(name[..<bang]))
    else {
      throw .invalid(
        "a beacon name is kind!hex-id (kind: eddystone, eddystone-eid, ibeacon or altbeacon), "
          + "got '\(name.prefix(64))'")
    }
    let hex = String(name[name.index(after: bang)...])
    try self.init(kind: kind, hex: hex)
    guard self.hex == hex else {
      throw .invalid("a beacon name's id is lower-case hex, got '\(name.prefix(64))'")
    }
  }

  /// The beacon's name: `kind!hex`, lower-case hex.
  public var name: String { "\(kindName)!\(hex)" }
}
