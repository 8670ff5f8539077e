import Tokens

/// The Bluetooth advertising-data (AD) structures a beacon rides in, and how BlueZ names them.
///
/// An advertising payload is a run of structures `length ‖ type ‖ data` (`length` counts the
/// type byte and the data); a zero length ends the significant part. Beacons use three types:
/// service data with a 16-bit UUID (0x16, Eddystone under 0xFEAA), service data with a 128-bit
/// UUID (0x21) and manufacturer-specific data (0xFF, iBeacon and AltBeacon). UUIDs and company
/// identifiers are little-endian on the air; the frames' own fields are big-endian.
///
/// BlueZ reports the same content already split: `ServiceData` (`a{sv}`, keyed by 128-bit UUID
/// strings such as `0000feaa-0000-1000-8000-00805f9b34fb`) and `ManufacturerData` (`a{qv}`,
/// keyed by the company identifier). ``BeaconFrame/parse(serviceData:uuid:)`` and
/// ``BeaconFrame/parse(manufacturerData:companyID:)`` take those entries as they are.
public enum ADStructure {
  /// AD type "Flags".
  public static let flagsType: UInt8 = 0x01
  /// AD type "Complete List of 16-bit Service Class UUIDs".
  public static let completeUUID16ListType: UInt8 = 0x03
  /// AD type "Service Data - 16-bit UUID".
  public static let serviceData16Type: UInt8 = 0x16
  /// AD type "Service Data - 32-bit UUID".
  public static let serviceData32Type: UInt8 = 0x20
  /// AD type "Service Data - 128-bit UUID".
  public static let serviceData128Type: UInt8 = 0x21
  /// AD type "Manufacturer Specific Data".
  public static let manufacturerDataType: UInt8 = 0xff
  /// The Flags value beacons use: LE General Discoverable, BR/EDR not supported.
  public static let beaconFlags: UInt8 = 0x06

  /// The Bluetooth Base UUID's last 96 bits, after the 32-bit alias: 16-bit and 32-bit UUIDs
  /// stand for `0000xxxx-0000-1000-8000-00805f9b34fb`.
  static let baseUUIDLow: UInt128 = 0x0000_1000_8000_0080_5f9b_34fb

  /// The 16-bit alias of a Bluetooth UUID in any of its text forms — `feaa`, `0xFEAA`,
  /// `0000feaa`, `0000feaa-0000-1000-8000-00805f9b34fb` — or `nil` for a 128-bit UUID outside
  /// the Bluetooth base range or a 32-bit one above 0xFFFF (neither carries a beacon).
  /// - Throws: ``BeaconFrameError/invalidUUID(_:)`` for text that is no UUID.
  @inlinable
  public static func uuid16(_ text: some StringProtocol) throws(BeaconFrameError) -> UInt16? {
    var string = String(text)
    return try uuid16(string: &string)
  }

  @usableFromInline
  static func uuid16(string: inout String) throws(BeaconFrameError) -> UInt16? {
    // Read as UTF-8 in place: BlueZ keys every service-data entry this way, so this runs once
    // an advertisement.
    let result = string.withUTF8 { utf8 in
      capture { () throws(BeaconFrameError) in try uuid16(utf8: utf8) }
    }
    guard case .success(let value) = result else { throw .invalidUUID(string) }
    return value
  }

  /// `invalidUUID("")` stands for "invalid"; the caller puts the text in.
  static func uuid16(utf8 whole: UnsafeBufferPointer<UInt8>) throws(BeaconFrameError) -> UInt16? {
    var utf8 = whole[...]
    if utf8.count >= 2, utf8[utf8.startIndex] == UInt8(ascii: "0"),
      utf8[utf8.startIndex + 1] | 0x20 == UInt8(ascii: "x")
    {
      utf8 = utf8.dropFirst(2)
    }
    switch utf8.count {
    case 4, 8:
      var value: UInt32 = 0
      for char in utf8 {
        guard let nibble = Hex.value(ofDigit: char) else { throw .invalidUUID("") }
        value = value << 4 | UInt32(nibble)
      }
      return UInt16(exactly: value)
    case 36:
      // 8-4-4-4-12 hex digits.
      var value: UInt128 = 0
      for (position, char) in utf8.enumerated() {
        if position == 8 || position == 13 || position == 18 || position == 23 {
          guard char == UInt8(ascii: "-") else { throw .invalidUUID("") }
          continue
        }
        guard let nibble = Hex.value(ofDigit: char) else { throw .invalidUUID("") }
        value = value << 4 | UInt128(nibble)
      }
      guard value & ((1 << 96) - 1) == baseUUIDLow else { return nil }
      return UInt16(exactly: value >> 96)
    default:
      throw .invalidUUID("")
    }
  }

  /// The 128-bit text form BlueZ uses for a 16-bit UUID, e.g.
  /// `0000feaa-0000-1000-8000-00805f9b34fb`.
  public static func uuidString(_ uuid16: UInt16) -> String {
    let alias = Hex.encode([
      UInt8(truncatingIfNeeded: uuid16 >> 8), UInt8(truncatingIfNeeded: uuid16),
    ])
    return "0000" + alias + "-0000-1000-8000-00805f9b34fb"
  }

  /// Calls `body` with each structure's offset, type and data range, in order.
  /// - Throws: ``BeaconFrameError/truncatedADStructure(offset:length:available:)`` when a
  ///   length runs past the end, and whatever `body` throws.
  static func forEach(
    in buffer: UnsafeBufferPointer<UInt8>,
    _ body: (_ offset: Int, _ type: UInt8, _ data: Range<Int>) throws(BeaconFrameError) -> Void
  ) throws(BeaconFrameError) {
    var offset = 0
    while offset < buffer.count {
      let length = Int(buffer[offset])
      if length == 0 { return }  // zero padding ends the significant part
      let available = buffer.count - offset - 1
      guard length <= available else {
        throw .truncatedADStructure(offset: offset, length: length, available: available)
      }
      try body(offset, buffer[offset + 1], (offset + 2)..<(offset + 1 + length))
      offset += 1 + length
    }
  }
}
