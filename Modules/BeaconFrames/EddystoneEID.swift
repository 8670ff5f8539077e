/// An Eddystone-EID frame: an 8-byte ephemeral identifier that rotates, resolvable only by a
/// server that knows the beacon's identity key.
///
/// Layout: frame type 0x30 ‖ TX power at 0 m (signed dBm) ‖ ephemeral id (8).
public struct EddystoneEID: Sendable, Hashable {
  /// The frame type byte.
  public static let frameType: UInt8 = 0x30
  /// The frame's length.
  public static let length = 10

  /// The calibrated TX power at 0 m, in dBm.
  public var txPower: Int8
  /// The 8-byte ephemeral identifier.
  public let ephemeralID: BeaconBytes

  /// A frame.
  /// - Throws: ``BeaconFrameError/wrongFieldLength(field:count:expected:)`` unless
  ///   `ephemeralID` is 8 bytes.
  public init(ephemeralID: BeaconBytes, txPower: Int8) throws(BeaconFrameError) {
    guard ephemeralID.count == 8 else {
      throw .wrongFieldLength(field: "ephemeral id", count: ephemeralID.count, expected: 8)
    }
    self.ephemeralID = ephemeralID
    self.txPower = txPower
  }

  /// Reads a frame (the Eddystone service data, starting with the frame type).
  /// - Throws: ``BeaconFrameError/wrongLength(_:count:expected:)`` unless 10 bytes long,
  ///   ``BeaconFrameError/unknownEddystoneFrameType(_:)`` for another frame type.
  @inlinable
  public init(frame: some Collection<UInt8>) throws(BeaconFrameError) {
    self = try withBuffer(frame) { buffer in
      capture { () throws(BeaconFrameError) in try Self(buffer) }
    }
  }

  @usableFromInline
  init(_ frame: UnsafeBufferPointer<UInt8>) throws(BeaconFrameError) {
    try frame.checkEddystoneHeader(.fixed(.eddystoneEID, Self.length), frameType: Self.frameType)
    txPower = frame.int8(at: 1)
    ephemeralID = BeaconBytes(frame, from: 2, count: 8)
  }

  /// The frame's 10 bytes.
  public var frame: [UInt8] {
    [Self.frameType, UInt8(bitPattern: txPower)] + ephemeralID
  }
}
