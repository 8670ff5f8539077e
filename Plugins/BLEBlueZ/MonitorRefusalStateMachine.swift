import Core

/// What the medium decides about an adapter that refuses pattern monitors, apart from D-Bus
/// (docs/bluez-vm-findings.md item L; BlueZEngine+Monitor.swift performs it): whether a
/// `Release` was a refusal, how long to wait before the next try, and when to set monitors
/// aside and scan with discovery instead. An event and the instant in, the decision out.
///
/// - A monitor released within ``Configuration/quickRelease`` of its registration, or a
///   registration that fails, is a refusal. Refusals are retried after a growing delay (1 s,
///   2 s, 4 s, then 8 s), and after ``Configuration/refusalsBeforeDiscovery`` in a row monitors
///   are set aside for ``Configuration/fallback``.
/// - A monitor that reports a device, or lives past `quickRelease`, clears the count; so does a
///   new bluetoothd (``reset()``).
struct MonitorRefusalStateMachine: Sendable {
  struct Configuration: Sendable, Hashable {
    /// A `Release` this soon after the registration is the adapter refusing the monitor.
    var quickRelease: Duration = .seconds(5)
    /// Refusals in a row after which monitors are set aside.
    var refusalsBeforeDiscovery = 3
    /// How long monitors are set aside then (``BlueZConfiguration/monitorRefusalFallback``).
    var fallback: Duration = .seconds(60)
    /// The wait before scanning again after a monitor released late (not a refusal).
    var retryDelay: Duration = .milliseconds(100)
  }

  /// What a refusal or a release leads to.
  struct Decision: Equatable, Sendable {
    /// What a release or a failed registration counted as.
    enum Verdict: Equatable, Sendable {
      /// The adapter refused the monitor.
      case refusal
      /// A monitor that had lived released: not a refusal.
      case release
    }

    var verdict: Verdict
    /// Refusals in a row so far.
    var refusals: Int
    /// Set when this refusal set monitors aside: until when.
    var fallbackUntil: NearbyClock.Instant?
    /// How long to wait before scanning again.
    var delay: Duration
  }

  let configuration: Configuration
  private(set) var refusals = 0
  private(set) var refusedUntil: NearbyClock.Instant?
  private var registeredAt: NearbyClock.Instant?

  init(configuration: Configuration = Configuration()) {
    self.configuration = configuration
  }

  /// Whether monitors are set aside at `now`.
  func monitorsRefused(at now: NearbyClock.Instant) -> Bool {
    refusedUntil.map { now < $0 } ?? false
  }

  /// A monitor was registered at `now`.
  mutating func registered(at now: NearbyClock.Instant) {
    registeredAt = now
  }

  /// A registration failed at `now`: a refusal.
  mutating func registrationFailed(at now: NearbyClock.Instant) -> Decision {
    refused(at: now)
  }

  /// bluetoothd released the registered monitor at `now`: a refusal when it came within
  /// ``Configuration/quickRelease`` of the registration.
  mutating func released(at now: NearbyClock.Instant) -> Decision {
    if let registeredAt, now - registeredAt < configuration.quickRelease {
      return refused(at: now)
    }
    refusals = 0
    return Decision(
      verdict: .release, refusals: 0, fallbackUntil: nil, delay: configuration.retryDelay)
  }

  /// The monitor reported a device: it works.
  mutating func reported() { refusals = 0 }

  /// A new bluetoothd (or adapter set) has refused nothing yet.
  mutating func reset() {
    refusals = 0
    refusedUntil = nil
    registeredAt = nil
  }

  private mutating func refused(at now: NearbyClock.Instant) -> Decision {
    refusals += 1
    var fallbackUntil: NearbyClock.Instant?
    if refusals >= configuration.refusalsBeforeDiscovery {
      fallbackUntil = now + configuration.fallback
      refusedUntil = fallbackUntil
    }
    return Decision(
      verdict: .refusal, refusals: refusals, fallbackUntil: fallbackUntil,
      delay: .seconds(1) * (1 << min(refusals - 1, 3)))
  }
}
