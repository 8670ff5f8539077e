/// Eddystone: Google's beacon format, carried as service data for the 16-bit UUID 0xFEAA.
///
/// The first byte of the service data is the frame type: 0x00 UID (``EddystoneUID``), 0x10
/// URL (``EddystoneURL``), 0x20 TLM (``EddystoneTLM`` version 0x00,
/// ``EddystoneEncryptedTLM`` version 0x01), 0x30 EID (``EddystoneEID``). All multi-byte fields
/// are big-endian.
public enum Eddystone {
  /// The Eddystone service UUID (16-bit).
  public static let serviceUUID: UInt16 = 0xfeaa

  /// Reads one Eddystone frame (the service data after the UUID).
  /// - Throws: ``BeaconFrameError/emptyEddystoneFrame``,
  ///   ``BeaconFrameError/unknownEddystoneFrameType(_:)``, and the frame kind's own errors.
  @inlinable
  public static func parse(frame: some Collection<UInt8>) throws(BeaconFrameError) -> BeaconFrame {
    try withBuffer(frame) { buffer in capture { () throws(BeaconFrameError) in try parse(buffer) } }
  }

  @usableFromInline
  static func parse(_ frame: UnsafeBufferPointer<UInt8>) throws(BeaconFrameError) -> BeaconFrame {
    guard let type = frame.first else { throw .emptyEddystoneFrame }
    switch type {
    case EddystoneUID.frameType: return .eddystoneUID(try EddystoneUID(frame))
    case EddystoneURL.frameType: return .eddystoneURL(try EddystoneURL(frame))
    case EddystoneTLM.frameType:
      guard frame.count >= 2 else {
        throw .wrongLength(.eddystoneTLM, count: frame.count, expected: EddystoneTLM.length)
      }
      switch frame[1] {
      case EddystoneTLM.version: return .eddystoneTLM(try EddystoneTLM(frame))
      case EddystoneEncryptedTLM.version:
        return .eddystoneEncryptedTLM(try EddystoneEncryptedTLM(frame))
      default: throw .unknownTLMVersion(frame[1])
      }
    case EddystoneEID.frameType: return .eddystoneEID(try EddystoneEID(frame))
    default: throw .unknownEddystoneFrameType(type)
    }
  }
}
