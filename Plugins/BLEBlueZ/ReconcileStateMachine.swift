import Core
import DBus
import Tokens

/// What the medium decides to make BlueZ match the wishes again, apart from D-Bus
/// (BlueZEngine+Reconcile.swift performs it): why the adapter cannot be used, the status to
/// tell, the steps from BlueZ's advert to the wanted one, and whether a failed call to
/// bluetoothd is tried again and after how long. Facts and events in, the decision out.
///
/// - The problem (``problem(_:)``), first that applies: bluetoothd refused access; bluetoothd
///   is not on the bus; no adapter (the configured one missing, or none at all); the adapter
///   is powered off. None: the adapter can be used.
/// - The status (``update(_:)``): `ready` without a problem, else the problem's status; told
///   once per change, never after ``shutDown()``.
/// - The advert (``nextAdvertStep(advertised:wanted:facts:)``): withdraw an advert whose token
///   is no longer wanted or that BlueZ can no longer hold (unregistering it at BlueZ only when
///   BlueZ can be reached), then register the wanted token, or say why it cannot be.
/// - A call that failed (``retryDelay(after:member:attempt:)``): `NotReady`, and `InProgress`
///   except for `StartDiscovery` (which answers it for a session already running), is tried
///   again up to ``Configuration/retries`` times, first after ``Configuration/retryDelay``,
///   then after twice the previous delay, at most ``Configuration/maximumRetryDelay``; never
///   once the medium shut down.
///
/// Events: ``update(_:)``, ``shutDown()``; decisions: ``problem(_:)``,
/// ``nextAdvertStep(advertised:wanted:facts:)``, ``retryDelay(after:member:attempt:)``.
struct ReconcileStateMachine: Sendable {
  struct Configuration: Sendable, Hashable {
    /// The adapter asked for by name (``BlueZConfiguration/adapter``), `nil` for any.
    var adapter: String?
    /// How many times a failed call is tried again (``BlueZConfiguration/retries``).
    var retries = 5
    /// The wait before the first new try (``BlueZConfiguration/retryDelay``).
    var retryDelay: Duration = .milliseconds(100)
    /// The longest wait between two tries after the first.
    var maximumRetryDelay: Duration = .seconds(2)
  }

  /// What the engine knows of bluetoothd and the adapter it chose.
  struct Facts: Sendable, Hashable {
    /// The adapter the medium uses.
    struct Adapter: Sendable, Hashable {
      var name: String
      var powered: Bool
      /// Whether it offers `LEAdvertisingManager1`.
      var hasAdvertising: Bool
    }

    /// How bluetoothd stands with the medium.
    enum Daemon: Sendable, Hashable {
      /// Not on the bus.
      case absent
      /// It refused our access (it may have left the bus since: the refusal still applies
      /// until it answers again).
      case refusedAccess
      /// On the bus, answering.
      case present
    }

    var daemon = Daemon.absent
    /// The chosen adapter, `nil` when there is none.
    var adapter: Adapter?
  }

  /// A step towards the wanted advert.
  enum AdvertStep: Equatable, Sendable {
    /// Withdraw the advert exported at this path: unregister it at BlueZ when `atBlueZ` (BlueZ
    /// cannot be reached otherwise), then unexport it; then ask again.
    case withdraw(DBusObjectPath, atBlueZ: Bool)
    /// Export and register an advert carrying this token.
    case register(Token)
    /// A token is wanted but cannot be advertised now: the caller that asks learns why.
    case cannotAdvertise(BlueZMediumError)
  }

  /// Running, or shut down (no status is told and no call tried again any more); either way
  /// with the status last told, `nil` before the first.
  private enum Phase: Sendable {
    case running(told: MediumStatus?)
    case shutDown(told: MediumStatus?)
  }

  let configuration: Configuration
  private var phase = Phase.running(told: nil)

  /// The status last told, `nil` before the first.
  var status: MediumStatus? {
    switch phase {
    case .running(let told), .shutDown(let told): told
    }
  }

  /// Whether the medium shut down.
  var isShutDown: Bool {
    if case .shutDown = phase { return true }
    return false
  }

  init(configuration: Configuration = Configuration()) {
    self.configuration = configuration
  }

  // MARK: Events

  /// The facts changed (or may have): the status to tell, `nil` when it is the one told last
  /// or the medium shut down.
  mutating func update(_ facts: Facts) -> MediumStatus? {
    let next: MediumStatus =
      switch problem(facts) {
      case nil: .ready
      case .poweredOff: .poweredOff
      case .permissionDenied(let fix): .permissionDenied(fix)
      case let other?: .unavailable(other.description)
      }
    guard case .running(let told) = phase, next != told else { return nil }
    phase = .running(told: next)
    return next
  }

  /// The medium shut down.
  mutating func shutDown() { phase = .shutDown(told: status) }

  // MARK: Decisions

  /// Why nothing can be done with these facts, or `nil` when the adapter can be used.
  func problem(_ facts: Facts) -> BlueZMediumError? {
    switch facts.daemon {
    case .refusedAccess: return .permissionDenied(BlueZFix.permission)
    case .absent: return .bluetoothdUnavailable(BlueZFix.noDaemon)
    case .present: break
    }
    guard let adapter = facts.adapter else {
      return .poweredOff(BlueZFix.noAdapter(configuration.adapter))
    }
    if !adapter.powered { return .poweredOff(BlueZFix.off(adapter.name)) }
    return nil
  }

  /// The next step from BlueZ's advert (`advertised`: its path and token) to the `wanted`
  /// token, `nil` when they match.
  func nextAdvertStep(
    advertised: (path: DBusObjectPath, token: Token)?, wanted: Token?, facts: Facts
  ) -> AdvertStep? {
    let problem = problem(facts)
    if let advertised, advertised.token != wanted || problem != nil {
      return .withdraw(advertised.path, atBlueZ: problem == nil)
    }
    guard let wanted, advertised == nil else { return nil }
    if let problem { return .cannotAdvertise(problem) }
    guard let adapter = facts.adapter, adapter.hasAdvertising else {
      let name = facts.adapter?.name ?? configuration.adapter ?? "no adapter"
      return .cannotAdvertise(
        .bluez(
          DBusError(.notSupported, "adapter \(name) cannot advertise (no LEAdvertisingManager1)")))
    }
    return .register(wanted)
  }

  /// How long to wait before trying again the call of `member` that failed with `error` on
  /// its `attempt`-th new try (0 for the first failure), `nil` to give up.
  func retryDelay(after error: DBusError.Name, member: String, attempt: Int) -> Duration? {
    let retriable =
      error == .bluezNotReady || (error == .bluezInProgress && member != "StartDiscovery")
    guard retriable, attempt < configuration.retries, !isShutDown else { return nil }
    var delay = configuration.retryDelay
    for _ in 0..<attempt { delay = min(delay * 2, configuration.maximumRetryDelay) }
    return delay
  }
}
