public import Foundation

/// The ids that a set of Eddystone-EID beacons broadcast around a moment, so an observed id is
/// resolved with one dictionary look-up instead of AES work per beacon.
///
/// Built at `builtAt`, it holds each beacon's ids for every rotation period within its
/// window (``EddystoneEIDRegistration/window(at:)``, which only grows with time) of any time
/// up to ``validUntil``; ``match(for:at:)`` still checks the window at the time asked, so an
/// index answers exactly as a fresh computation would until then.
public struct EddystoneEIDIndex<Beacon: Hashable & Sendable>: Sendable {
  /// When the index was built.
  public let builtAt: Date
  /// The last moment the index answers for; build a new one after it.
  public let validUntil: Date
  private var entries: [[UInt8]: [(beacon: Beacon, periodStart: Int64, registration: Int)]] = [:]
  private let registrations: [EddystoneEIDRegistration]

  /// Computes the ids of `beacons` for `now` through `now + lookahead`.
  public init(
    beacons: [(beacon: Beacon, registration: EddystoneEIDRegistration)], at now: Date,
    lookahead: TimeInterval = 60
  ) {
    builtAt = now
    validUntil = now.addingTimeInterval(lookahead)
    registrations = beacons.map(\.registration)
    for (position, entry) in beacons.enumerated() {
      let registration = entry.registration
      let time = registration.beaconTime(at: now)
      let (behind, ahead) = registration.window(at: validUntil)
      let first = time - behind
      let last = time + Int64(lookahead.rounded(.up)) + ahead
      for (periodStart, eid) in registration.generator.eids(overlapping: first...last) {
        entries[eid, default: []].append((entry.beacon, periodStart, position))
      }
    }
  }

  /// The number of ids held.
  public var count: Int { entries.count }

  /// Whether the index answers for `date`.
  public func covers(_ date: Date) -> Bool { date >= builtAt && date <= validUntil }

  /// The beacon broadcasting `eid` at `date` within its window, if any.
  public func beacon(for eid: [UInt8], at date: Date) -> Beacon? {
    match(for: eid, at: date)?.beacon
  }

  /// The beacon broadcasting `eid` at `date` within its window, with the start of the rotation
  /// period (beacon time) that `eid` belongs to and the registration it matched, for learning
  /// the beacon's clock (``EddystoneEIDRegistration/matched(periodStart:at:)``).
  public func match(for eid: [UInt8], at date: Date) -> (
    beacon: Beacon, periodStart: Int64, registration: EddystoneEIDRegistration
  )? {
    guard
      let candidate = entries[eid]?.first(where: {
        registrations[$0.registration].accepts(periodStart: $0.periodStart, at: date)
      })
    else { return nil }
    return (candidate.beacon, candidate.periodStart, registrations[candidate.registration])
  }
}
