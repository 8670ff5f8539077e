/// An encrypted Eddystone-TLM frame (ETLM), sent by EID beacons instead of plain telemetry.
///
/// Layout: frame type 0x20 ‖ version 0x01 ‖ encrypted TLM (12) ‖ salt (2) ‖ message
/// integrity check (2). Decrypting needs the beacon's identity key, which only the server
/// holds, so every field is kept as bytes.
public struct EddystoneEncryptedTLM: Sendable, Hashable {
  /// The version byte of the encrypted frame.
  public static let version: UInt8 = 0x01
  /// The frame's length.
  public static let length = 18

  /// The 12 encrypted bytes (the plain frame's battery, temperature and counters).
  public let encrypted: BeaconBytes
  /// The 2-byte salt.
  public let salt: BeaconBytes
  /// The 2-byte message integrity check.
  public let mic: BeaconBytes

  /// A frame.
  /// - Throws: ``BeaconFrameError/wrongFieldLength(field:count:expected:)`` unless
  ///   `encrypted` is 12 bytes and `salt` and `mic` 2 each.
  public init(encrypted: BeaconBytes, salt: BeaconBytes, mic: BeaconBytes)
    throws(BeaconFrameError)
  {
    guard encrypted.count == 12 else {
      throw .wrongFieldLength(field: "encrypted TLM", count: encrypted.count, expected: 12)
    }
    guard salt.count == 2 else {
      throw .wrongFieldLength(field: "salt", count: salt.count, expected: 2)
    }
    guard mic.count == 2 else {
      throw .wrongFieldLength(field: "MIC", count: mic.count, expected: 2)
    }
    self.encrypted = encrypted
    self.salt = salt
    self.mic = mic
  }

  /// Reads a frame (the Eddystone service data, starting with the frame type).
  /// - Throws: ``BeaconFrameError/wrongLength(_:count:expected:)`` unless 18 bytes long,
  ///   ``BeaconFrameError/unknownEddystoneFrameType(_:)`` or
  ///   ``BeaconFrameError/unknownTLMVersion(_:)`` for another frame.
  @inlinable
  public init(frame: some Collection<UInt8>) throws(BeaconFrameError) {
    self = try withBuffer(frame) { buffer in
      capture { () throws(BeaconFrameError) in try Self(buffer) }
    }
  }

  @usableFromInline
  init(_ frame: UnsafeBufferPointer<UInt8>) throws(BeaconFrameError) {
    try frame.checkEddystoneHeader(
      .fixed(.eddystoneTLM, Self.length), frameType: EddystoneTLM.frameType,
      version: Self.version)
    encrypted = BeaconBytes(frame, from: 2, count: 12)
    salt = BeaconBytes(frame, from: 14, count: 2)
    mic = BeaconBytes(frame, from: 16, count: 2)
  }

  /// The frame's 18 bytes.
  public var frame: [UInt8] {
    [EddystoneTLM.frameType, Self.version] + encrypted + salt + mic
  }
}
