public import Logging
public import Tokens

extension MessageManager {
  /// How a manager is set up: its resolver, its mediums, its logger and the seed's three
  /// error handlers.
  public struct Configuration: Sendable {
    /// The resolver to register with and report to.
    public var resolver: ResolverChoice
    /// The mediums to discover with; each plugin adds a factory (`.bluez()`, `.pulseAudio()`).
    public var mediums: [MediumProvider]
    /// Where the manager and its mediums log. Its level is raised to `.debug` when
    /// ``MessageManager/setDebugLoggingEnabled(_:)`` was called with `true` beforehand.
    public var logger: Logger
    /// Called with `true` when the microphone cannot be used, `false` when it can again.
    /// Runs on the manager's actor; return quickly.
    public var microphonePermissionErrorHandler: (@Sendable (Bool) -> Void)?
    /// Called with `true` when Bluetooth is off or missing, `false` when it is back.
    public var bluetoothPowerErrorHandler: (@Sendable (Bool) -> Void)?
    /// Called with `true` when Bluetooth access is refused, `false` when it is allowed again.
    public var bluetoothPermissionErrorHandler: (@Sendable (Bool) -> Void)?
    /// Where the user's Nearby permission is kept and asked for (`NearbyPermission` of the
    /// PermissionStore module). `nil` (the default): permission is granted.
    public var permission: (any PermissionGate)?
    /// How long a ``PermissionRequestHandler`` may take to answer before the request counts
    /// as denied. Default 60 s.
    public var permissionRequestTimeout: Duration = .seconds(60)
    /// A beacon attachment is lost when its beacon has not been heard for this long.
    /// Default 10 s; must be longer than zero, as must the two settings below
    /// (``MessageManager/init(apiKey:configuration:)`` throws otherwise).
    public var beaconLostAfter: Duration = .seconds(10)
    /// How far back a beacon's received power is smoothed (a windowed median). Default 5 s.
    public var beaconSmoothingWindow: Duration = .seconds(5)
    /// How long the resolver's answer for an observed beacon id is kept (a beacon it does not
    /// know: a fifth of this). Default 5 min.
    public var beaconCacheTTL: Duration = .seconds(300)
    /// Turns a beacon's received power into a distance (see Tokens' `PathLossModel`).
    public var pathLossModel = PathLossModel()
    /// The clock the manager's timers wait on and its decisions are timed by: token
    /// rotation, the TTL of beacon subscriptions, the beacon cache, smoothing and lost check,
    /// and the permission request timeout. Default: `ContinuousClock()`. Tests inject a clock
    /// they step by hand (MediumTestKit's `ManualClock`) instead of sleeping. Beacon
    /// sightings are timed on it as they arrive.
    public var clock: any Clock<Duration> = ContinuousClock()

    public init(
      resolver: ResolverChoice,
      mediums: [MediumProvider] = [],
      logger: Logger = Logger(label: "nearby"),
      microphonePermissionErrorHandler: (@Sendable (Bool) -> Void)? = nil,
      bluetoothPowerErrorHandler: (@Sendable (Bool) -> Void)? = nil,
      bluetoothPermissionErrorHandler: (@Sendable (Bool) -> Void)? = nil,
      permission: (any PermissionGate)? = nil
    ) {
      self.resolver = resolver
      self.mediums = mediums
      self.logger = logger
      self.microphonePermissionErrorHandler = microphonePermissionErrorHandler
      self.bluetoothPowerErrorHandler = bluetoothPowerErrorHandler
      self.bluetoothPermissionErrorHandler = bluetoothPermissionErrorHandler
      self.permission = permission
    }
  }
}
