public import Foundation

/// What a resolver keeps of a registered Eddystone-EID beacon: its generator (identity key and
/// rotation exponent) and how its clock relates to real time.
///
/// The beacon's time now is `clockValue` plus the whole seconds since `registeredAt`. Matching
/// allows for drift and power-loss recovery: an id counts when its rotation period overlaps
/// ``tolerance`` seconds either side of that time, which is one period but at least 60 s.
public struct EddystoneEIDRegistration: Sendable, Hashable {
  /// The least clock drift, in seconds either way, that matching allows.
  public static let minimumTolerance: Int64 = 60

  /// The beacon's identity key and rotation exponent.
  public var generator: EddystoneEIDGenerator
  /// The beacon's time counter (seconds) at ``registeredAt``.
  public var clockValue: UInt32
  /// When the resolver registered the beacon.
  public var registeredAt: Date

  /// - Throws: ``EddystoneEIDError/invalid(_:)`` for a key that is not 16 bytes or an exponent
  ///   outside 0…15.
  public init(
    identityKey: [UInt8], rotationExponent: Int, clockValue: UInt32, registeredAt: Date
  ) throws(EddystoneEIDError) {
    generator = try EddystoneEIDGenerator(
      identityKey: identityKey, rotationExponent: rotationExponent)
    self.clockValue = clockValue
    self.registeredAt = registeredAt
  }

  /// Seconds either way of the beacon's time within which an id still matches: one rotation
  /// period, but at least ``minimumTolerance``.
  public var tolerance: Int64 { max(generator.period, Self.minimumTolerance) }

  /// The beacon's time counter at `date` (not wrapped: the caller wraps to 32 bits).
  public func beaconTime(at date: Date) -> Int64 {
    Int64(clockValue) + Int64(date.timeIntervalSince(registeredAt).rounded(.down))
  }

  /// The id the beacon broadcasts at `date` by its registered clock.
  public func eid(at date: Date) -> [UInt8] {
    generator.eid(beaconTime: UInt32(truncatingIfNeeded: beaconTime(at: date)))
  }

  /// Whether a period starting at `periodStart` is within the tolerance of `beaconTime`.
  func accepts(periodStart: Int64, beaconTime: Int64) -> Bool {
    periodStart + generator.period > beaconTime - tolerance
      && periodStart <= beaconTime + tolerance
  }

  /// Checks that `eid` is what the beacon broadcasts at ``clockValue``, within the tolerance
  /// (registration).
  /// - Throws: ``EddystoneEIDError`` naming the problem: an id that is not 8 bytes, or one
  ///   these parameters do not produce.
  public func verify(eid: [UInt8]) throws(EddystoneEIDError) {
    guard eid.count == EddystoneEIDGenerator.eidByteCount else {
      throw .invalid("an Eddystone-EID is 8 bytes (16 hex digits), got \(eid.count) bytes")
    }
    let time = Int64(clockValue)
    let candidates = generator.eids(overlapping: (time - tolerance)...(time + tolerance))
    guard candidates.contains(where: { $0.eid == eid }) else {
      throw .mismatch(
        "the EID is not one this identity key and rotation exponent \(generator.rotationExponent) "
          + "produce at clock value \(clockValue) (±\(tolerance) s); check the key, the exponent "
          + "and the beacon's current clock value")
    }
  }
}
