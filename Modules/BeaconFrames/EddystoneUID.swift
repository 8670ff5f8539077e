/// An Eddystone-UID frame: a beacon's fixed identity, a 10-byte namespace and a 6-byte
/// instance.
///
/// Layout (big-endian): frame type 0x00 ‖ TX power at 0 m (signed dBm) ‖ namespace (10) ‖
/// instance (6) ‖ reserved (2, zero). Legacy beacons send the 18-byte frame without the
/// reserved bytes; ``reserved`` is `nil` for those, so that a frame rebuilds byte for byte.
public struct EddystoneUID: Sendable, Hashable {
  /// The frame type byte.
  public static let frameType: UInt8 = 0x00
  /// The frame's length with its reserved bytes.
  public static let length = 20
  /// The legacy frame's length, without the reserved bytes.
  public static let legacyLength = 18

  /// The calibrated TX power at 0 m, in dBm.
  public var txPower: Int8
  /// The 10-byte namespace.
  public let namespace: BeaconBytes
  /// The 6-byte instance.
  public let instance: BeaconBytes
  /// The two reserved bytes (0 from conforming beacons, kept as sent); `nil` for a legacy
  /// 18-byte frame.
  public var reserved: UInt16?

  /// A frame.
  /// - Throws: ``BeaconFrameError/wrongFieldLength(field:count:expected:)`` unless
  ///   `namespace` is 10 bytes and `instance` 6.
  public init(
    namespace: BeaconBytes, instance: BeaconBytes, txPower: Int8, reserved: UInt16? = 0
  ) throws(BeaconFrameError) {
    guard namespace.count == 10 else {
      throw .wrongFieldLength(field: "namespace", count: namespace.count, expected: 10)
    }
    guard instance.count == 6 else {
      throw .wrongFieldLength(field: "instance", count: instance.count, expected: 6)
    }
    self.namespace = namespace
    self.instance = instance
    self.txPower = txPower
    self.reserved = reserved
  }

  /// Reads a frame (the Eddystone service data, starting with the frame type).
  /// - Throws: ``BeaconFrameError/wrongLength(_:count:expected:)`` unless 20 or 18 bytes
  ///   long, ``BeaconFrameError/unknownEddystoneFrameType(_:)`` for another frame type.
  @inlinable
  public init(frame: some Collection<UInt8>) throws(BeaconFrameError) {
    self = try withBuffer(frame) { buffer in
      capture { () throws(BeaconFrameError) in try Self(buffer) }
    }
  }

  @usableFromInline
  init(_ frame: UnsafeBufferPointer<UInt8>) throws(BeaconFrameError) {
    try frame.checkEddystoneHeader(
      .fixed(.eddystoneUID, Self.length, legacy: Self.legacyLength), frameType: Self.frameType)
    txPower = frame.int8(at: 1)
    namespace = BeaconBytes(frame, from: 2, count: 10)
    instance = BeaconBytes(frame, from: 12, count: 6)
    reserved = frame.count == Self.length ? frame.uint16(at: 18) : nil
  }

  /// The frame's bytes (18 when ``reserved`` is `nil`, else 20).
  public var frame: [UInt8] {
    var out: [UInt8] = [Self.frameType, UInt8(bitPattern: txPower)]
    out.reserveCapacity(Self.length)
    out += namespace
    out += instance
    if let reserved { out.appendBigEndian(reserved) }
    return out
  }
}
