/// An unencrypted Eddystone-TLM frame: the beacon's telemetry.
///
/// Layout (big-endian): frame type 0x20 ‖ version 0x00 ‖ battery voltage (2, mV) ‖
/// temperature (2, signed 8.8 fixed point, °C) ‖ advertising PDU count (4) ‖ time since
/// power-on (4, 0.1 s units). A battery voltage of 0 and a temperature of 0x8000 mean "not
/// supported"; the raw fields are kept so that a frame rebuilds byte for byte.
public struct EddystoneTLM: Sendable, Hashable {
  /// The frame type byte (shared with ``EddystoneEncryptedTLM``).
  public static let frameType: UInt8 = 0x20
  /// The version byte of the unencrypted frame.
  public static let version: UInt8 = 0x00
  /// The frame's length.
  public static let length = 14
  /// The raw temperature that means "not supported" (0x8000, -128 °C).
  public static let temperatureNotSupported = Int16.min

  /// Battery voltage in millivolts; 0 when the beacon does not report it.
  public var batteryMillivolts: UInt16
  /// Temperature in signed 8.8 fixed point (1/256 °C per bit); ``temperatureNotSupported``
  /// when the beacon does not report it.
  public var temperatureRaw: Int16
  /// Advertising PDUs sent since power-on or reboot.
  public var advertisingCount: UInt32
  /// Time since power-on or reboot, in tenths of a second.
  public var uptimeDeciseconds: UInt32

  /// A frame from its raw fields.
  public init(
    batteryMillivolts: UInt16, temperatureRaw: Int16, advertisingCount: UInt32,
    uptimeDeciseconds: UInt32
  ) {
    self.batteryMillivolts = batteryMillivolts
    self.temperatureRaw = temperatureRaw
    self.advertisingCount = advertisingCount
    self.uptimeDeciseconds = uptimeDeciseconds
  }

  /// A frame from values in natural units: `nil` for a field the beacon does not report.
  /// The temperature is rounded to the nearest 1/256 °C and clamped to -127.996…127.996 °C.
  public init(
    batteryMillivolts: UInt16?, temperatureCelsius: Double?, advertisingCount: UInt32,
    uptimeDeciseconds: UInt32
  ) {
    let raw: Int16 =
      if let celsius = temperatureCelsius, celsius.isFinite {
        Int16((min(max(celsius, -32767 / 256), 32767 / 256) * 256).rounded())
      } else {
        Self.temperatureNotSupported
      }
    self.init(
      batteryMillivolts: batteryMillivolts ?? 0, temperatureRaw: raw,
      advertisingCount: advertisingCount, uptimeDeciseconds: uptimeDeciseconds)
  }

  /// Battery voltage in millivolts, `nil` when not supported (raw 0).
  public var battery: UInt16? { batteryMillivolts == 0 ? nil : batteryMillivolts }

  /// Temperature in °C, `nil` when not supported (raw 0x8000).
  public var temperatureCelsius: Double? {
    temperatureRaw == Self.temperatureNotSupported ? nil : Double(temperatureRaw) / 256
  }

  /// Time since power-on or reboot.
  public var uptime: Duration { .milliseconds(Int64(uptimeDeciseconds) * 100) }

  /// Reads a frame (the Eddystone service data, starting with the frame type).
  /// - Throws: ``BeaconFrameError/wrongLength(_:count:expected:)`` unless 14 bytes long,
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
      .fixed(.eddystoneTLM, Self.length), frameType: Self.frameType, version: Self.version)
    batteryMillivolts = frame.uint16(at: 2)
    temperatureRaw = Int16(bitPattern: frame.uint16(at: 4))
    advertisingCount = frame.uint32(at: 6)
    uptimeDeciseconds = frame.uint32(at: 10)
  }

  /// The frame's 14 bytes.
  public var frame: [UInt8] {
    var out: [UInt8] = [Self.frameType, Self.version]
    out.reserveCapacity(Self.length)
    out.appendBigEndian(batteryMillivolts)
    out.appendBigEndian(UInt16(bitPattern: temperatureRaw))
    out.appendBigEndian(advertisingCount)
    out.appendBigEndian(uptimeDeciseconds)
    return out
  }
}
