public import Core
public import DBus

/// How a ``BlueZMedium`` finds and uses BlueZ.
public struct BlueZConfiguration: Sendable {
  /// The bus bluetoothd is on: the system bus (the default), or an address.
  public var bus: DBusBus = .system
  /// The adapter to use, such as `"hci0"`; `nil` picks the first powered adapter (or the
  /// first adapter when none is powered).
  public var adapter: String?
  /// The transmitter's power at 0 m written into our frame (dBm), for distance estimates.
  public var txPowerAtZeroMeters: Int8 = -20
  /// A local name to advertise next to the token frame. The frame already fills 28 of the 31
  /// bytes of a legacy advertisement, so any name makes `transmit` fail with
  /// ``BlueZMediumError/advertisementTooLong(bytes:limit:)``; kept for controllers and tests
  /// that check the limit.
  public var localName: String?
  /// How long a BlueZ call may take before it fails with a timeout.
  public var callTimeout: Duration = .seconds(5)
  /// A scan that has shown no life for this long is restarted (the watchdog): no advertising
  /// report and no device held present (see docs/dbus-and-bluez.md, "Presence").
  public var scanWatchdog: Duration = .seconds(15)
  /// bluetoothd's `TemporaryTimeout` (its main.conf; 30 s by default): how long it keeps a
  /// discovered device it gets no report of. The medium reads a device's removal that long
  /// after its last report as that timer, not as the device leaving (see
  /// docs/dbus-and-bluez.md, "Presence").
  public var temporaryTimeout: Duration = .seconds(30)
  /// Under a pattern monitor (low-power scanning), how long a device stays present after
  /// bluetoothd last reported an advert of it (the monitor's DeviceFound). A device silent for
  /// 4/10 of this makes the medium restart its monitor once, so that a controller that reports
  /// an unchanged advert only once per scan start reports it again (see docs/dbus-and-bluez.md,
  /// "Presence").
  public var monitorLostAfter: Duration = .seconds(10)
  /// How long the medium scans with discovery instead of a pattern monitor after the adapter
  /// refused its monitor 3 times in a row (the kernel answering `Busy`, bluetoothd releasing
  /// the monitor right after registering it); then it tries a monitor again (see
  /// docs/dbus-and-bluez.md, "Presence").
  public var monitorRefusalFallback: Duration = .seconds(60)
  /// First delay before retrying `InProgress`/`NotReady`; doubled on each retry up to 2 s.
  public var retryDelay: Duration = .milliseconds(100)
  /// How many times `InProgress`/`NotReady` are retried before the call fails.
  public var retries = 5
  /// Whether our advert can be connected to ("peripheral" instead of "broadcast"), so that
  /// hearers reach this device's GATT peer service (``BlueZPeerTransport``). Turn it on when
  /// peer resolution runs over BLE; bluetoothd then adds the 3-byte Flags structure, which our
  /// 28-byte frame leaves room for (31 bytes in all). Off by default.
  public var connectable = false
  /// Whether ``BlueZMedium/advertisements`` reports every advertising report heard while
  /// scanning (for tools such as `nearby ble scan`); off by default.
  public var reportsAllAdvertisements = false
  /// The clock of the medium's and the GATT transport's decisions and waits (presence,
  /// watchdogs, retries, backoffs, polls), not of D-Bus calls' own timeouts. Default
  /// `ContinuousClock`; a test may give a manual one.
  public var clock: any Clock<Duration> = ContinuousClock()

  public init(
    bus: DBusBus = .system, adapter: String? = nil, txPowerAtZeroMeters: Int8 = -20,
    localName: String? = nil
  ) {
    self.bus = bus
    self.adapter = adapter
    self.txPowerAtZeroMeters = txPowerAtZeroMeters
    self.localName = localName
  }
}

extension MediumProvider {
  /// Bluetooth LE through BlueZ (bluetoothd over D-Bus): advertises the BLE token frame and
  /// scans for others'. Needs access to bluetoothd on the system bus (root, the `bluetooth`
  /// group, or a D-Bus policy that allows it); without it the medium reports
  /// `MediumStatus.permissionDenied(_:)` with the fix.
  public static func bluez(adapter: String? = nil, bus: DBusBus = .system) -> MediumProvider {
    .bluez(BlueZConfiguration(bus: bus, adapter: adapter))
  }

  /// Bluetooth LE through BlueZ with every setting given.
  public static func bluez(_ configuration: BlueZConfiguration) -> MediumProvider {
    MediumProvider(name: "bluez \(configuration.adapter ?? "default adapter")") { context in
      try await BlueZMedium(configuration: configuration, logger: context.logger)
    }
  }
}
