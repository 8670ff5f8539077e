import Core

/// How the medium scans at BlueZ, apart from D-Bus (BlueZEngine+ScanPlan.swift performs it):
/// the wishes (token scanning, beacon scanning and whether in low power), the plan they need
/// on the adapter (a pattern monitor, discovery with a monitor beside it, or discovery alone),
/// the steps that make BlueZ's scan match it, and the watchdog that restarts a scan showing no
/// life. An event and the instant in, the actions out; the machine reads no clock.
///
/// - The plan (``wanted(on:)``): none when nothing is wished; a pattern monitor where the
///   adapter offers "or_patterns" monitors and every wish allows passive scanning (token
///   scanning always does, beacon scanning when low power is asked); else discovery, with the
///   same patterns in a monitor beside it where the adapter offers monitors. Always discovery
///   alone when every advertisement is to be reported
///   (``Configuration/reportsAllAdvertisements``) or while the adapter refuses monitors.
/// - The steps (``next(active:on:)``): stop a scan that is unwanted, of the wrong kind, or on
///   an adapter that cannot be used; then start the wanted plan, or say that it cannot start.
/// - The watchdog (``watchdog(at:active:on:anyPresent:)``): when BlueZ's scan is not the wanted
///   one (a start failed, or the plan changed with time), apply the plan again; when a scan has
///   shown no life (``life(at:)``: an advertising report or a device held present, and a
///   start or a wish to scan) for more than ``Configuration/scanWatchdog`` and no device is
///   held present, restart it. The deadline is exclusive: exactly `scanWatchdog` of silence is
///   not yet too long.
///
/// Events: ``startTokens(at:)``, ``stopTokens()``, ``startBeacons(lowPower:at:)``,
/// ``stopBeacons()``, ``stopAll()``, ``started(_:at:)``, ``life(at:)``; decisions:
/// ``wanted(on:)``, ``next(active:on:)``, ``watchdog(at:active:on:anyPresent:)``.
struct ScanPlanStateMachine: Sendable {
  struct Configuration: Sendable, Hashable {
    /// A scan that has shown no life for longer than this is restarted
    /// (``BlueZConfiguration/scanWatchdog``).
    var scanWatchdog: Duration = .seconds(15)
    /// Every advertisement is to be reported: discovery alone, as a monitor hears only what its
    /// patterns match (``BlueZConfiguration/reportsAllAdvertisements``).
    var reportsAllAdvertisements = false
  }

  /// What the chosen adapter offers for scanning now.
  struct Adapter: Sendable, Hashable {
    /// Whether it offers pattern monitors.
    enum Monitors: Sendable, Hashable {
      /// It offers no "or_patterns" monitors.
      case unsupported
      /// It offers them but refused them lately: set aside (``MonitorRefusalStateMachine``).
      case refused
      /// It offers them.
      case offered
    }

    var monitors: Monitors
  }

  /// A step towards the wanted scan.
  enum Action: Equatable, Sendable {
    /// End this scan at BlueZ (unregister its monitor, stop discovery), then ask again.
    case stop(ScanPlan)
    /// Start this plan at BlueZ; report ``ScanPlanStateMachine/started(_:at:)`` when it did.
    case start(ScanPlan)
    /// A scan is wished but the adapter cannot be used now: the caller that asks for one
    /// learns why.
    case cannotStart
  }

  /// What the watchdog asks.
  enum WatchdogAction: Equatable, Sendable {
    /// BlueZ's scan is not the wanted one: apply the plan (``next(active:on:)``).
    case apply
    /// The scan has shown no life for too long: stop it and start it again.
    case restart
  }

  let configuration: Configuration
  /// Whether token scanning is wished.
  private(set) var wantsTokens = false
  /// The beacon-scanning wish: `nil` when off.
  private(set) var wantsBeacons: BeaconWish?
  /// The last sign of life of the scan (see the type's documentation).
  private(set) var lastLife: NearbyClock.Instant
  /// How many times the watchdog restarted the scan (for tests).
  private(set) var watchdogRestarts = 0

  init(configuration: Configuration = Configuration(), at now: NearbyClock.Instant) {
    self.configuration = configuration
    lastLife = now
  }

  // MARK: Events

  /// Token scanning is wished from `now`; the watchdog counts from then.
  mutating func startTokens(at now: NearbyClock.Instant) {
    wantsTokens = true
    lastLife = now
  }

  /// Token scanning is no longer wished.
  mutating func stopTokens() { wantsTokens = false }

  /// Beacon scanning is wished from `now`, in low power or not; the watchdog counts from then
  /// when it was not wished before.
  mutating func startBeacons(lowPower: Bool, at now: NearbyClock.Instant) {
    if wantsBeacons == nil { lastLife = now }
    wantsBeacons = BeaconWish(lowPower: lowPower)
  }

  /// Beacon scanning is no longer wished.
  mutating func stopBeacons() { wantsBeacons = nil }

  /// Nothing is wished any more (the medium shuts down).
  mutating func stopAll() {
    wantsTokens = false
    wantsBeacons = nil
  }

  /// The plan started at BlueZ at `now`: the watchdog counts from then.
  mutating func started(_ plan: ScanPlan, at now: NearbyClock.Instant) { lastLife = now }

  /// The scan showed life at `now`: an advertising report, or a device held present. Life
  /// reported out of order keeps the latest instant.
  mutating func life(at now: NearbyClock.Instant) { lastLife = max(lastLife, now) }

  // MARK: Decisions

  /// The plan the wishes need on `adapter` (`nil`: none chosen), `nil` when nothing is wished.
  func wanted(on adapter: Adapter?) -> ScanPlan? {
    guard wantsTokens || wantsBeacons != nil else { return nil }
    var patterns: MonitorPatterns = []
    if wantsTokens { patterns.insert(.tokens) }
    if wantsBeacons != nil { patterns.insert(.beacons) }
    guard let adapter, adapter.monitors == .offered, !configuration.reportsAllAdvertisements
    else {
      return .discovery(beside: nil)
    }
    guard wantsBeacons?.lowPower ?? true else { return .discovery(beside: patterns) }
    return .monitor(patterns)
  }

  /// The next step to make BlueZ's scan (`active`) match the wanted one on `adapter` (`nil`:
  /// the adapter cannot be used now), `nil` when it does: a stop first, then a start.
  func next(active: ScanPlan?, on adapter: Adapter?) -> Action? {
    let plan = wanted(on: adapter)
    if let active, adapter == nil || active != plan { return .stop(active) }
    guard let plan, active == nil else { return nil }
    return adapter == nil ? .cannotStart : .start(plan)
  }

  /// What the watchdog does at `now` (it runs every third of `scanWatchdog`), given BlueZ's
  /// scan (`active`), the adapter (`nil`: it cannot be used now) and whether any device is held
  /// present; `nil`: nothing. A restart is counted.
  mutating func watchdog(
    at now: NearbyClock.Instant, active: ScanPlan?, on adapter: Adapter?, anyPresent: Bool
  ) -> WatchdogAction? {
    guard adapter != nil else { return nil }
    if active != wanted(on: adapter) { return .apply }
    guard active != nil, now - lastLife > configuration.scanWatchdog, !anyPresent else {
      return nil
    }
    watchdogRestarts += 1
    return .restart
  }
}
