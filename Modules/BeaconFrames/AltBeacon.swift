/// An AltBeacon advertisement (the open beacon format of Radius Networks), carried as
/// manufacturer data of any company.
///
/// Layout of the manufacturer data after the company identifier (big-endian): beacon code
/// 0xBEAC (2) ‖ beacon id (20) ‖ reference RSSI at 1 m (signed dBm) ‖ manufacturer reserved
/// (1).
public struct AltBeacon: Sendable, Hashable {
  /// The beacon code that starts the manufacturer data.
  public static let beaconCode: UInt16 = 0xbeac
  /// The manufacturer data's length after the company identifier.
  public static let length = 24

  /// The company identifier of the beacon's manufacturer (the manufacturer data's key).
  public var companyID: UInt16
  /// The 20-byte beacon id. By convention the first 16 bytes identify the organisation and the
  /// last 4 are two 2-byte numbers (see ``AltBeacon/id1``, ``AltBeacon/id2``, ``AltBeacon/id3``).
  public let beaconID: BeaconBytes
  /// The average received power at 1 m, in dBm.
  public var referenceRSSI: Int8
  /// The manufacturer's reserved byte, kept as sent.
  public var manufacturerReserved: UInt8

  /// An advertisement.
  /// - Throws: ``BeaconFrameError/wrongFieldLength(field:count:expected:)`` unless `beaconID`
  ///   is 20 bytes.
  public init(
    companyID: UInt16, beaconID: BeaconBytes, referenceRSSI: Int8, manufacturerReserved: UInt8 = 0
  ) throws(BeaconFrameError) {
    guard beaconID.count == 20 else {
      throw .wrongFieldLength(field: "beacon id", count: beaconID.count, expected: 20)
    }
    self.companyID = companyID
    self.beaconID = beaconID
    self.referenceRSSI = referenceRSSI
    self.manufacturerReserved = manufacturerReserved
  }

  /// Reads the manufacturer data after the company identifier (starting 0xBE 0xAC).
  /// - Throws: ``BeaconFrameError/wrongLength(_:count:expected:)`` unless 24 bytes long or
  ///   when it does not start with the beacon code.
  @inlinable
  public init(companyID: UInt16, manufacturerData: some Collection<UInt8>)
    throws(BeaconFrameError)
  {
    self = try withBuffer(manufacturerData) { buffer in
      capture { () throws(BeaconFrameError) in try Self(companyID: companyID, buffer) }
    }
  }

  @usableFromInline
  init(companyID: UInt16, _ data: UnsafeBufferPointer<UInt8>) throws(BeaconFrameError) {
    guard data.count == Self.length, data.uint16(at: 0) == Self.beaconCode else {
      throw .wrongLength(.altBeacon, count: data.count, expected: Self.length)
    }
    self.companyID = companyID
    beaconID = BeaconBytes(data, from: 2, count: 20)
    referenceRSSI = data.int8(at: 22)
    manufacturerReserved = data[23]
  }

  /// The first 16 bytes of the beacon id (the organisational unit, usually shown as a UUID).
  public var id1: BeaconBytes {
    beaconID.bytes.withUnsafeBufferPointer { BeaconBytes($0, from: 0, count: 16) }
  }
  /// Bytes 16–17 of the beacon id as a big-endian number.
  public var id2: UInt16 { UInt16(beaconID[16]) << 8 | UInt16(beaconID[17]) }
  /// Bytes 18–19 of the beacon id as a big-endian number.
  public var id3: UInt16 { UInt16(beaconID[18]) << 8 | UInt16(beaconID[19]) }

  /// The manufacturer data after the company identifier (24 bytes).
  public var manufacturerData: [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(Self.length)
    out.appendBigEndian(Self.beaconCode)
    out += beaconID
    out.append(UInt8(bitPattern: referenceRSSI))
    out.append(manufacturerReserved)
    return out
  }
}
