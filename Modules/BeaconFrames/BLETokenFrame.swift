public import Tokens

/// The token frame carried in a BLE advertisement (contract §6).
///
/// On the air it is the payload of a Service Data AD structure (type 0x21) for the 128-bit
/// service UUID ``serviceUUID``; the payload is 10 bytes:
/// version/flags (1: version in the high nibble, flags in the low) ‖ token (8) ‖
/// TX power at 0 m (1, signed dBm).
public struct BLETokenFrame: Sendable, Hashable {
  /// The service UUID our frames are sent under.
  public static let serviceUUID = "ad1cf74e-c1af-499e-bb67-00374f1e8f82"
  /// The service UUID's 16 bytes in little-endian order, as they appear in an AD structure.
  public static let serviceUUIDLittleEndian: [UInt8] = [
    0x82, 0x8f, 0x1e, 0x4f, 0x37, 0x00, 0x67, 0xbb, 0x9e, 0x49, 0xaf, 0xc1, 0x4e, 0xf7, 0x1c, 0xad,
  ]
  /// The frame version this code writes and reads.
  public static let version: UInt8 = 1
  /// The payload length in bytes.
  public static let payloadLength = 10
  /// AD type "Service Data - 128-bit UUID".
  public static let serviceData128ADType: UInt8 = 0x21

  /// The low 4 bits of the first byte; reserved, 0 today, carried unchanged. Only the low
  /// 4 bits are kept (the high 4 are the version).
  public var flags: UInt8 {
    didSet { flags &= 0x0f }
  }
  /// The token being advertised.
  public var token: Token
  /// The transmitter's power at 0 m in dBm, used for distance estimates.
  public var txPower: Int8

  /// A frame. `flags` keeps its low 4 bits only.
  public init(token: Token, txPower: Int8, flags: UInt8 = 0) {
    self.token = token
    self.txPower = txPower
    self.flags = flags & 0x0f
  }

  /// The 10-byte service-data payload.
  public var payload: [UInt8] {
    [Self.version << 4 | flags] + token.bytes + [UInt8(bitPattern: txPower)]
  }

  /// Reads a 10-byte service-data payload.
  /// - Throws: ``BLETokenFrameError`` for a short or long payload or an unknown version.
  public init(payload: some Collection<UInt8>) throws(BLETokenFrameError) {
    let bytes = Array(payload)
    guard bytes.count >= Self.payloadLength else {
      throw .tooShort(count: bytes.count, expected: Self.payloadLength)
    }
    guard bytes.count == Self.payloadLength else {
      throw .tooLong(count: bytes.count, expected: Self.payloadLength)
    }
    let version = bytes[0] >> 4
    guard version == Self.version else { throw .unsupportedVersion(version) }
    self.flags = bytes[0] & 0x0f
    self.token = Token(value: bytes[1...8].reduce(0) { ($0 << 8) | UInt64($1) })
    self.txPower = Int8(bitPattern: bytes[9])
  }

  /// The whole Service Data AD structure: length, type 0x21, the UUID (little-endian), payload.
  /// 28 bytes, which with a 3-byte Flags structure fills a legacy 31-byte advertisement.
  public var adStructure: [UInt8] {
    let body = [Self.serviceData128ADType] + Self.serviceUUIDLittleEndian + payload
    return [UInt8(body.count)] + body
  }

  /// Finds our frame in a whole advertising payload (a sequence of AD structures).
  /// - Throws: ``BLETokenFrameError/malformedADStructure(offset:)`` when a structure's
  ///   length runs past the end, ``BLETokenFrameError/notFound`` when no structure carries
  ///   our service UUID, and the payload errors when ours is malformed.
  public init(advertisement: some Collection<UInt8>) throws(BLETokenFrameError) {
    let bytes = Array(advertisement)
    var offset = 0
    while offset < bytes.count {
      let length = Int(bytes[offset])
      if length == 0 { break }  // zero padding ends the significant part
      guard offset + 1 + length <= bytes.count else { throw .malformedADStructure(offset: offset) }
      let type = bytes[offset + 1]
      let data = bytes[(offset + 2)..<(offset + 1 + length)]
      if type == Self.serviceData128ADType, data.count >= 16,
        Array(data.prefix(16)) == Self.serviceUUIDLittleEndian
      {
        try self.init(payload: data.dropFirst(16))
        return
      }
      offset += 1 + length
    }
    throw .notFound
  }
}

/// Why bytes are not a valid ``BLETokenFrame``.
public enum BLETokenFrameError: Error, Sendable, Hashable {
  /// Fewer bytes than the 10-byte payload.
  case tooShort(count: Int, expected: Int)
  /// More bytes than the 10-byte payload.
  case tooLong(count: Int, expected: Int)
  /// A version this code does not read (it reads version 1).
  case unsupportedVersion(UInt8)
  /// An AD structure whose length runs past the end of the advertisement.
  case malformedADStructure(offset: Int)
  /// The advertisement has no service data for our UUID.
  case notFound
}

extension BLETokenFrameError: CustomStringConvertible {
  public var description: String {
    switch self {
    case .tooShort(let count, let expected):
      "BLE token frame too short: \(count) bytes, expected \(expected)"
    case .tooLong(let count, let expected):
      "BLE token frame too long: \(count) bytes, expected \(expected)"
    case .unsupportedVersion(let version):
      "BLE token frame version \(version) is not supported (this reads version \(BLETokenFrame.version))"
    case .malformedADStructure(let offset):
      "malformed advertisement: the AD structure at byte \(offset) runs past the end"
    case .notFound:
      "the advertisement carries no service data for \(BLETokenFrame.serviceUUID)"
    }
  }
}
