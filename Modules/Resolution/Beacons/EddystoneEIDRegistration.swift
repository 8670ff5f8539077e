public import Foundation

/// What a resolver keeps of a registered Eddystone-EID beacon: its generator (identity key and
/// rotation exponent) and how its clock relates to real time.
///
/// The beacon's time now is `clockValue` plus the whole seconds since `registeredAt`, plus
/// ``clockOffset``, which a resolver learns from matches. Matching allows for drift and
/// power-loss recovery (``window(at:)``): an id counts when its rotation period overlaps
/// ``tolerance`` seconds either side of that time (one period, but at least 60 s), widened the
/// longer the beacon goes unmatched: by 100 ppm of that time either way (crystal drift), and
/// behind by that time itself, up to ``maximumLagPeriods`` periods (a clock restored after a
/// power loss lags by about as long as the beacon was off).
public struct EddystoneEIDRegistration: Sendable, Hashable {
  /// The least clock drift, in seconds either way, that matching allows.
  public static let minimumTolerance: Int64 = 60
  /// The drift allowed per second unmatched: 100 ppm (8.64 s a day), over the ±20–50 ppm of
  /// the crystals beacons use.
  public static let driftAllowance = 100e-6
  /// How many rotation periods behind the window reaches at most for a beacon unmatched for
  /// long (each is one more id in a resolver's index).
  public static let maximumLagPeriods: Int64 = 32

  /// The beacon's identity key and rotation exponent.
  public var generator: EddystoneEIDGenerator
  /// The beacon's time counter (seconds) at ``registeredAt``.
  public var clockValue: UInt32
  /// When the resolver registered the beacon.
  public var registeredAt: Date
  /// Seconds added to the registered clock, learned from matches (``matched(periodStart:at:)``).
  public var clockOffset: Int64 = 0
  /// When the beacon was last matched; `nil` if never since it was registered.
  public var lastMatchedAt: Date?

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
    Int64(clockValue) + Int64(date.timeIntervalSince(registeredAt).rounded(.down)) + clockOffset
  }

  /// How far behind and ahead of ``beaconTime(at:)`` a matching rotation period may lie at
  /// `date`: ``tolerance``, plus ``driftAllowance`` of the time since the beacon was last
  /// matched (or registered) either way, plus that time itself behind (at most
  /// ``maximumLagPeriods`` periods). Both grow with `date`.
  public func window(at date: Date) -> (behind: Int64, ahead: Int64) {
    let unmatched = max(0, date.timeIntervalSince(lastMatchedAt ?? registeredAt))
    let drift = Int64((unmatched * Self.driftAllowance).rounded(.up))
    let lag = min(Int64(unmatched), Self.maximumLagPeriods * generator.period)
    return (tolerance + drift + lag, tolerance + drift)
  }

  /// The registration after a match at `date` of the id of the period starting at
  /// `periodStart`: its clock moved by the least that puts its time at `date` in that period,
  /// and ``lastMatchedAt`` set to `date` (the window narrows again).
  public func matched(periodStart: Int64, at date: Date) -> EddystoneEIDRegistration {
    var next = self
    let time = beaconTime(at: date)
    if time < periodStart {
      next.clockOffset += periodStart - time
    } else if time >= periodStart + generator.period {
      next.clockOffset -= time - (periodStart + generator.period - 1)
    }
    next.lastMatchedAt = date
    return next
  }

  /// The id the beacon broadcasts at `date` by its registered clock.
  public func eid(at date: Date) -> [UInt8] {
    generator.eid(beaconTime: UInt32(truncatingIfNeeded: beaconTime(at: date)))
  }

  /// Whether a period starting at `periodStart` is within the window at `date`.
  func accepts(periodStart: Int64, at date: Date) -> Bool {
    let time = beaconTime(at: date)
    let (behind, ahead) = window(at: date)
    return periodStart + generator.period > time - behind && periodStart <= time + ahead
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
