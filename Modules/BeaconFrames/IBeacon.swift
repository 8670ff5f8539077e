/// An Apple iBeacon advertisement, carried as manufacturer data of Apple (company 0x004C).
///
/// Layout of the manufacturer data after the company identifier (big-endian): type 0x02 ‖
/// length 0x15 (21) ‖ proximity UUID (16) ‖ major (2) ‖ minor (2) ‖ measured power at 1 m
/// (signed dBm).
public struct IBeacon: Sendable, Hashable {
  /// Apple's Bluetooth company identifier.
  public static let companyID: UInt16 = 0x004c
  /// The two bytes that start an iBeacon's manufacturer data: type 0x02, length 0x15.
  public static let prefix: [UInt8] = [0x02, 0x15]
  /// The manufacturer data's length after the company identifier.
  public static let length = 23

  /// The 16-byte proximity UUID.
  public let proximityUUID: BeaconBytes
  /// The major number.
  public var major: UInt16
  /// The minor number.
  public var minor: UInt16
  /// The calibrated received power at 1 m, in dBm.
  public var measuredPower: Int8

  /// An advertisement.
  /// - Throws: ``BeaconFrameError/wrongFieldLength(field:count:expected:)`` unless
  ///   `proximityUUID` is 16 bytes.
  public init(proximityUUID: BeaconBytes, major: UInt16, minor: UInt16, measuredPower: Int8)
    throws(BeaconFrameError)
  {
    guard proximityUUID.count == 16 else {
      throw .wrongFieldLength(field: "proximity UUID", count: proximityUUID.count, expected: 16)
    }
    self.proximityUUID = proximityUUID
    self.major = major
    self.minor = minor
    self.measuredPower = measuredPower
  }

  /// Reads the manufacturer data after Apple's company identifier (starting 0x02 0x15).
  /// - Throws: ``BeaconFrameError/wrongLength(_:count:expected:)`` unless 23 bytes long or
  ///   when it does not start with 0x02 0x15.
  @inlinable
  public init(manufacturerData: some Collection<UInt8>) throws(BeaconFrameError) {
    self = try withBuffer(manufacturerData) { buffer in
      capture { () throws(BeaconFrameError) in try Self(buffer) }
    }
  }

  @usableFromInline
  init(_ data: UnsafeBufferPointer<UInt8>) throws(BeaconFrameError) {
    guard data.count == Self.length, data[0] == 0x02, data[1] == 0x15 else {
      throw .wrongLength(.iBeacon, count: data.count, expected: Self.length)
    }
    proximityUUID = BeaconBytes(data, from: 2, count: 16)
    major = data.uint16(at: 18)
    minor = data.uint16(at: 20)
    measuredPower = data.int8(at: 22)
  }

  /// The manufacturer data after the company identifier (23 bytes).
  public var manufacturerData: [UInt8] {
    var out = Self.prefix + proximityUUID
    out.appendBigEndian(major)
    out.appendBigEndian(minor)
    out.append(UInt8(bitPattern: measuredPower))
    return out
  }
}
