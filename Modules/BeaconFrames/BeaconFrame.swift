public import Tokens

/// One beacon frame of any kind this module reads, and the three ways a scanner meets one.
///
/// - A whole advertising payload (a run of AD structures, e.g. from a raw HCI scan):
///   ``frames(inAdvertisement:)``.
/// - A service-data entry as BlueZ reports it (`ServiceData`, keyed by UUID string):
///   ``parse(serviceData:uuid:)``.
/// - A manufacturer-data entry as BlueZ reports it (`ManufacturerData`, keyed by company
///   identifier): ``parse(manufacturerData:companyID:)``.
///
/// Parsing is pure and allocation-light (identifiers are kept inline in ``BeaconBytes``); it
/// never traps on any input: malformed bytes give a ``BeaconFrameError`` naming what is wrong.
/// Safe to call from any thread.
public enum BeaconFrame: Sendable, Hashable {
  /// Eddystone-UID: namespace and instance.
  case eddystoneUID(EddystoneUID)
  /// Eddystone-URL: a compressed URL.
  case eddystoneURL(EddystoneURL)
  /// Eddystone-TLM version 0: plain telemetry.
  case eddystoneTLM(EddystoneTLM)
  /// Eddystone-TLM version 1: encrypted telemetry of an EID beacon.
  case eddystoneEncryptedTLM(EddystoneEncryptedTLM)
  /// Eddystone-EID: a rotating ephemeral identifier.
  case eddystoneEID(EddystoneEID)
  /// Apple iBeacon.
  case iBeacon(IBeacon)
  /// AltBeacon.
  case altBeacon(AltBeacon)

  /// The frame's kind (plain and encrypted TLM are both ``BeaconKind/eddystoneTLM``).
  public var kind: BeaconKind {
    switch self {
    case .eddystoneUID: .eddystoneUID
    case .eddystoneURL: .eddystoneURL
    case .eddystoneTLM, .eddystoneEncryptedTLM: .eddystoneTLM
    case .eddystoneEID: .eddystoneEID
    case .iBeacon: .iBeacon
    case .altBeacon: .altBeacon
    }
  }

  /// The power the beacon declares for distance estimates, `nil` for telemetry frames.
  public var referencePower: ReferencePower? {
    switch self {
    case .eddystoneUID(let frame): .atZeroMetres(frame.txPower)
    case .eddystoneURL(let frame): .atZeroMetres(frame.txPower)
    case .eddystoneEID(let frame): .atZeroMetres(frame.txPower)
    case .iBeacon(let frame): .atOneMetre(frame.measuredPower)
    case .altBeacon(let frame): .atOneMetre(frame.referenceRSSI)
    case .eddystoneTLM, .eddystoneEncryptedTLM: nil
    }
  }
}

// MARK: - Parsing

extension BeaconFrame {
  /// Every beacon frame in a whole advertising payload (AD structures), in order; empty when
  /// the payload is well formed but carries no beacon. Structures of other types, service data
  /// for other UUIDs and manufacturer data that is neither iBeacon nor AltBeacon are skipped.
  /// - Throws: ``BeaconFrameError/truncatedADStructure(offset:length:available:)``,
  ///   ``BeaconFrameError/adStructureTooShort(offset:type:length:minimum:)``, and the frame
  ///   errors of a beacon structure that is malformed.
  @inlinable
  public static func frames(inAdvertisement payload: some Collection<UInt8>)
    throws(BeaconFrameError) -> [BeaconFrame]
  {
    try withBuffer(payload) { buffer in
      capture { () throws(BeaconFrameError) in try frames(in: buffer) }
    }
  }

  @usableFromInline
  static func frames(in buffer: UnsafeBufferPointer<UInt8>) throws(BeaconFrameError)
    -> [BeaconFrame]
  {
    var frames: [BeaconFrame] = []
    try forEach(in: buffer) { frames.append($0) }
    return frames
  }

  /// Calls `body` with each beacon frame of a whole advertising payload, in order, without
  /// collecting them in an array: the allocation-free form of ``frames(inAdvertisement:)`` for
  /// a scanner's hot path. Frames before a malformed structure have been passed to `body`
  /// when it throws.
  /// - Throws: as ``frames(inAdvertisement:)``.
  @inlinable
  public static func forEach(
    inAdvertisement payload: some Collection<UInt8>, _ body: (BeaconFrame) -> Void
  ) throws(BeaconFrameError) {
    try withBuffer(payload) { buffer in
      capture { () throws(BeaconFrameError) in try forEach(in: buffer, body) }
    }
  }

  @usableFromInline
  static func forEach(in buffer: UnsafeBufferPointer<UInt8>, _ body: (BeaconFrame) -> Void)
    throws(BeaconFrameError)
  {
    try ADStructure.forEach(in: buffer) { offset, type, data throws(BeaconFrameError) in
      if let frame = try frame(in: buffer, offset: offset, type: type, data: data) {
        body(frame)
      }
    }
  }

  /// The beacon frame one AD structure carries, or `nil`.
  static func frame(
    in buffer: UnsafeBufferPointer<UInt8>, offset: Int, type: UInt8, data: Range<Int>
  ) throws(BeaconFrameError) -> BeaconFrame? {
    let minimum: Int
    switch type {
    case ADStructure.serviceData16Type: minimum = 2
    case ADStructure.serviceData32Type: minimum = 4
    case ADStructure.serviceData128Type: minimum = 16
    case ADStructure.manufacturerDataType: minimum = 2
    default: return nil
    }
    guard data.count >= minimum else {
      throw .adStructureTooShort(offset: offset, type: type, length: data.count, minimum: minimum)
    }
    // 16-bit aliases and company identifiers are little-endian on the air.
    let uuid16: UInt16?
    switch type {
    case ADStructure.serviceData16Type:
      uuid16 = UInt16(buffer[data.lowerBound]) | UInt16(buffer[data.lowerBound + 1]) << 8
    case ADStructure.serviceData32Type:
      let high = UInt16(buffer[data.lowerBound + 2]) | UInt16(buffer[data.lowerBound + 3]) << 8
      uuid16 =
        high == 0
        ? UInt16(buffer[data.lowerBound]) | UInt16(buffer[data.lowerBound + 1]) << 8 : nil
    case ADStructure.serviceData128Type:
      // Little-endian on the air: the 16-bit alias is in bytes 12–13, the base UUID below.
      var value: UInt128 = 0
      for index in data.prefix(16).reversed() { value = value << 8 | UInt128(buffer[index]) }
      let isBase = value & ((1 << 96) - 1) == ADStructure.baseUUIDLow && value >> 112 == 0
      uuid16 = isBase ? UInt16(truncatingIfNeeded: value >> 96) : nil
    default:
      let companyID = UInt16(buffer[data.lowerBound]) | UInt16(buffer[data.lowerBound + 1]) << 8
      return try manufacturerFrame(
        companyID: companyID,
        UnsafeBufferPointer(rebasing: buffer[(data.lowerBound + 2)..<data.upperBound]))
    }
    guard uuid16 == Eddystone.serviceUUID else { return nil }
    return try Eddystone.parse(
      UnsafeBufferPointer(rebasing: buffer[(data.lowerBound + minimum)..<data.upperBound]))
  }

  /// The beacon in a service-data entry as BlueZ reports it (`ServiceData`: UUID → bytes), or
  /// `nil` when the UUID is not Eddystone's (0xFEAA).
  /// - Parameters:
  ///   - serviceData: the entry's bytes, the frame after the UUID.
  ///   - uuid: the entry's key: `0000feaa-0000-1000-8000-00805f9b34fb`, `feaa` or `0xFEAA`.
  /// - Throws: ``BeaconFrameError/invalidUUID(_:)`` for a key that is no UUID, and the
  ///   Eddystone frame errors for Eddystone data that is malformed.
  @inlinable
  public static func parse(serviceData: some Collection<UInt8>, uuid: some StringProtocol)
    throws(BeaconFrameError) -> BeaconFrame?
  {
    guard try ADStructure.uuid16(uuid) == Eddystone.serviceUUID else { return nil }
    return try Eddystone.parse(frame: serviceData)
  }

  /// The beacon in a manufacturer-data entry as BlueZ reports it (`ManufacturerData`:
  /// company identifier → bytes after it), or `nil` when the bytes are neither an iBeacon
  /// (company 0x004C, starting 0x02 0x15) nor an AltBeacon (starting 0xBE 0xAC).
  /// - Throws: ``BeaconFrameError/wrongLength(_:count:expected:)`` when the bytes start like
  ///   a beacon but are not as long as one.
  @inlinable
  public static func parse(manufacturerData: some Collection<UInt8>, companyID: UInt16)
    throws(BeaconFrameError) -> BeaconFrame?
  {
    try withBuffer(manufacturerData) { buffer in
      capture { () throws(BeaconFrameError) in try manufacturerFrame(companyID: companyID, buffer) }
    }
  }

  @usableFromInline
  static func manufacturerFrame(companyID: UInt16, _ data: UnsafeBufferPointer<UInt8>)
    throws(BeaconFrameError) -> BeaconFrame?
  {
    guard data.count >= 2 else { return nil }
    if companyID == IBeacon.companyID, data[0] == 0x02, data[1] == 0x15 {
      return .iBeacon(try IBeacon(data))
    }
    if data.uint16(at: 0) == AltBeacon.beaconCode {
      return .altBeacon(try AltBeacon(companyID: companyID, data))
    }
    return nil
  }
}

// MARK: - Building

extension BeaconFrame {
  /// For Eddystone frames, the service data after the UUID 0xFEAA; `nil` otherwise.
  public var serviceData: [UInt8]? {
    switch self {
    case .eddystoneUID(let frame): frame.frame
    case .eddystoneURL(let frame): frame.frame
    case .eddystoneTLM(let frame): frame.frame
    case .eddystoneEncryptedTLM(let frame): frame.frame
    case .eddystoneEID(let frame): frame.frame
    case .iBeacon, .altBeacon: nil
    }
  }

  /// For iBeacon and AltBeacon, the company identifier and the manufacturer data after it;
  /// `nil` otherwise.
  public var manufacturerData: (companyID: UInt16, data: [UInt8])? {
    switch self {
    case .iBeacon(let frame): (IBeacon.companyID, frame.manufacturerData)
    case .altBeacon(let frame): (frame.companyID, frame.manufacturerData)
    default: nil
    }
  }

  /// A whole advertising payload that carries this frame, as a beacon sends it: Flags (0x06),
  /// then for Eddystone the 16-bit UUID list (0xFEAA) and the service data, for the others the
  /// manufacturer data. At most 31 bytes, a legacy advertisement.
  public var advertisement: [UInt8] {
    var out: [UInt8] = [2, ADStructure.flagsType, ADStructure.beaconFlags]
    if let data = serviceData {
      let uuid: [UInt8] = [UInt8(Eddystone.serviceUUID & 0xff), UInt8(Eddystone.serviceUUID >> 8)]
      out += [3, ADStructure.completeUUID16ListType] + uuid
      out += [UInt8(data.count + 3), ADStructure.serviceData16Type] + uuid + data
    } else if let (companyID, data) = manufacturerData {
      out += [UInt8(data.count + 3), ADStructure.manufacturerDataType]
      out += [UInt8(companyID & 0xff), UInt8(companyID >> 8)] + data
    }
    return out
  }
}
