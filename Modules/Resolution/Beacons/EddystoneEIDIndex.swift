public import Foundation

/// The ids that a set of Eddystone-EID beacons broadcast around a moment, so an observed id is
/// resolved with one dictionary look-up instead of AES work per beacon.
///
/// Built at `builtAt`, it holds each beacon's ids for every rotation period within its
/// window (``EddystoneEIDRegistration/window(at:)``, which only grows with time) of any time
/// up to ``validUntil``; ``match(for:at:)`` still checks the window at the time asked, so an
/// index answers exactly as a fresh computation would until then. One beacon is added,
/// replaced or removed in place (``update(_:registration:)``) for the AES work of that beacon
/// alone, so a change to one beacon does not cost the whole project's index.
public struct EddystoneEIDIndex<Beacon: Hashable & Sendable>: Sendable {
  /// When the index was built.
  public let builtAt: Date
  /// The last moment the index answers for; build a new one after it.
  public let validUntil: Date
  private let lookahead: TimeInterval
  private var entries: [[UInt8]: [(beacon: Beacon, periodStart: Int64)]] = [:]
  private var registrations: [Beacon: EddystoneEIDRegistration] = [:]
  /// The ids held for each beacon, to remove them.
  private var idsByBeacon: [Beacon: [[UInt8]]] = [:]

  /// Computes the ids of `beacons` for `now` through `now + lookahead`.
  public init(
    beacons: [(beacon: Beacon, registration: EddystoneEIDRegistration)], at now: Date,
    lookahead: TimeInterval = 60
  ) {
    builtAt = now
    validUntil = now.addingTimeInterval(lookahead)
    self.lookahead = lookahead
    for entry in beacons { insert(entry.beacon, entry.registration) }
  }

  /// The number of ids held.
  public var count: Int { entries.count }

  /// Whether the index answers for `date`.
  public func covers(_ date: Date) -> Bool { date >= builtAt && date <= validUntil }

  /// Replaces what the index holds for `beacon` by the ids of `registration`, or removes the
  /// beacon (nil).
  public mutating func update(_ beacon: Beacon, registration: EddystoneEIDRegistration?) {
    remove(beacon)
    if let registration { insert(beacon, registration) }
  }

  private mutating func insert(_ beacon: Beacon, _ registration: EddystoneEIDRegistration) {
    if registrations[beacon] != nil { remove(beacon) }
    registrations[beacon] = registration
    let time = registration.beaconTime(at: builtAt)
    let (behind, ahead) = registration.window(at: validUntil)
    let first = time - behind
    let last = time + Int64(lookahead.rounded(.up)) + ahead
    var ids: [[UInt8]] = []
    for (periodStart, eid) in registration.generator.eids(overlapping: first...last) {
      entries[eid, default: []].append((beacon, periodStart))
      ids.append(eid)
    }
    idsByBeacon[beacon] = ids
  }

  private mutating func remove(_ beacon: Beacon) {
    guard registrations.removeValue(forKey: beacon) != nil else { return }
    for eid in idsByBeacon.removeValue(forKey: beacon) ?? [] {
      entries[eid]?.removeAll { $0.beacon == beacon }
      if entries[eid]?.isEmpty == true { entries[eid] = nil }
    }
  }

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
    for candidate in entries[eid] ?? [] {
      guard let registration = registrations[candidate.beacon],
        registration.accepts(periodStart: candidate.periodStart, at: date)
      else { continue }
      return (candidate.beacon, candidate.periodStart, registration)
    }
    return nil
  }
}
