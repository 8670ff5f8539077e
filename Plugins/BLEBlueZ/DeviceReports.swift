import Core
import DBus
import Tokens
import BeaconFrames

/// The devices bluetoothd tells of and which of their advertising reports become sightings,
/// apart from D-Bus and from the engine's actor: an event and the instant in, the reports out;
/// the value reads no clock. ``DeviceReporter`` keeps it behind a `Mutex`, so that a device's
/// `PropertiesChanged` is decoded and turned into a sighting on the D-Bus connection's dispatch
/// thread, without a task wake-up and a hop onto ``BlueZEngine`` for each report; the engine
/// keeps what changes BlueZ (power, adapters, reconcile, the scan plan).
///
/// It holds:
/// - the device cache (``devices``): what each `Device1` object last said (``DeviceState``);
/// - ``presence``, the ``PresenceStateMachine``, fed the device events as they come (the
///   engine feeds it the rest: the monitor's reports, the ticks, scan stops);
/// - what the engine decided that reports depend on (``scanning``: the adapter it uses, its
///   scan at BlueZ, the scanning wishes, our own tokens), which the engine sets each time it
///   changes one of them;
/// - the instant of the last advertising report on that adapter (``lastReport``), life for
///   the scan watchdog, which the engine gives its ``ScanPlanStateMachine`` before each check;
/// - how many BlueZ signals were passed to the engine and not yet handled (``waiting``):
///   while any waits, the device signals after it wait behind it
///   (``receive(_:)``), so that every signal is handled in the order bluetoothd sent it, as
///   when the engine handled them all.
///
/// The reports, by a device's advertising report (``deviceChanged(_:_:invalidated:at:)``),
/// once it is on the adapter the medium uses and our scan runs: its beacon frames while
/// scanning for beacons; while scanning for tokens, the report itself when every
/// advertisement is reported, then a token sighting of its frame, never of our own token.
struct DeviceReports: Sendable {
  /// What the engine decided that reports depend on.
  struct Scanning: Sendable, Equatable {
    /// The adapter the medium uses (`BlueZEngine.chosen`).
    var adapter: DBusObjectPath?
    /// Every adapter BlueZ has: a signal about one of them goes to the engine.
    var adapters: Set<DBusObjectPath> = []
    /// Our scan at BlueZ (`BlueZEngine.activeScan`), `nil` when none.
    var scan: ScanPlan?
    /// Whether token scanning is wished.
    var tokens = false
    /// Whether beacon scanning is wished.
    var beacons = false
    /// The token our registered advert carries, and the one the manager wants transmitted:
    /// never reported.
    var advertised: Token?
    var wanted: Token?
    /// Every advertisement is reported (``BlueZConfiguration/reportsAllAdvertisements``).
    var reportsAllAdvertisements = false
  }

  /// What to report of a device.
  enum Report: Equatable, Sendable {
    /// A token sighting of the device's frame.
    case token(BLETokenFrame, DeviceState)
    /// A beacon sighting of each beacon frame in the device's last data.
    case beacons(DeviceState, path: DBusObjectPath)
    /// The advertising report as bluetoothd gave it (``BlueZMedium/advertisements``).
    case advertisement(DeviceState, path: DBusObjectPath)
  }

  /// What a BlueZ signal tells of the devices.
  enum Event: Equatable, Sendable {
    /// A device's properties changed (`PropertiesChanged` of `Device1`), or its object
    /// appeared (`InterfacesAdded` with `Device1`).
    case changed(DBusObjectPath, [String: DBusValue], invalidated: [String])
    /// bluetoothd removed the device's object (`InterfacesRemoved` with `Device1`).
    case removed(DBusObjectPath)
    /// Nothing the medium reads.
    case ignored
  }

  /// What each `Device1` object last said.
  var devices: [DBusObjectPath: DeviceState] = [:]
  var presence: PresenceStateMachine
  var scanning: Scanning
  /// When the last advertising report on the adapter arrived, `nil` before the first.
  private(set) var lastReport: NearbyClock.Instant?
  /// Signals passed to the engine and not yet handled.
  private(set) var waiting = 0

  init(presence: PresenceStateMachine.Configuration, reportsAllAdvertisements: Bool) {
    self.presence = PresenceStateMachine(configuration: presence)
    scanning = Scanning(reportsAllAdvertisements: reportsAllAdvertisements)
  }

  // MARK: Signals

  /// The dispatch thread has a BlueZ signal: its event, to apply at once, or `nil` when it goes
  /// to the engine (counted in ``waiting``): a signal about an adapter, or any signal while
  /// others wait for the engine.
  mutating func receive(_ signal: DBusMessage) -> Event? {
    guard waiting == 0, let event = Self.event(of: signal, adapters: scanning.adapters) else {
      waiting += 1
      return nil
    }
    return event
  }

  /// The engine handled a signal ``receive(_:)`` passed to it (or the signal was dropped).
  mutating func engineHandled() { waiting = max(0, waiting - 1) }

  /// What `signal` tells of the devices, `nil` when it concerns an adapter (known to BlueZ as
  /// `adapters`): `PropertiesChanged` of `Adapter1` or `LEAdvertisingManager1`,
  /// `InterfacesAdded` with `Adapter1` or on an adapter, `InterfacesRemoved` with `Adapter1`,
  /// `LEAdvertisingManager1` or `AdvertisementMonitorManager1`. What the engine would ignore is
  /// ``Event/ignored``.
  static func event(of signal: DBusMessage, adapters: Set<DBusObjectPath>) -> Event? {
    guard let member = signal.member else { return .ignored }
    switch (signal.interface, member) {
    case ("org.freedesktop.DBus.Properties", "PropertiesChanged"):
      guard let path = signal.path, let body = try? signal.arguments("sa{sv}as"),
        let interface = body[0].string, let changed = body[1].stringDictionary
      else { return .ignored }
      switch interface {
      case "org.bluez.Device1":
        return .changed(path, changed, invalidated: body[2].elements?.compactMap(\.string) ?? [])
      case "org.bluez.Adapter1", "org.bluez.LEAdvertisingManager1": return nil
      default: return .ignored
      }
    case ("org.freedesktop.DBus.ObjectManager", "InterfacesAdded"):
      guard let body = try? signal.arguments("oa{sa{sv}}"), let path = body[0].objectPath,
        let interfaces = DBusConnection.interfaceMap(body[1])
      else { return .ignored }
      guard interfaces["org.bluez.Adapter1"] == nil, !adapters.contains(path) else { return nil }
      guard let properties = interfaces["org.bluez.Device1"] else { return .ignored }
      return .changed(path, properties, invalidated: [])
    case ("org.freedesktop.DBus.ObjectManager", "InterfacesRemoved"):
      guard let body = try? signal.arguments("oas"), let path = body[0].objectPath,
        let names = body[1].elements?.compactMap(\.string)
      else { return .ignored }
      let adapterInterfaces: Set = [
        "org.bluez.Adapter1", "org.bluez.LEAdvertisingManager1",
        "org.bluez.AdvertisementMonitorManager1",
      ]
      guard adapterInterfaces.isDisjoint(with: names) else { return nil }
      return names.contains("org.bluez.Device1") ? .removed(path) : .ignored
    default:
      return .ignored
    }
  }

  /// Applies a device event at `now`; returns what to report.
  mutating func apply(_ event: Event, at now: NearbyClock.Instant) -> [Report] {
    switch event {
    case .changed(let path, let changed, let invalidated):
      return deviceChanged(path, changed, invalidated: invalidated, at: now)
    case .removed(let path):
      deviceRemoved(path, at: now)
      return []
    case .ignored:
      return []
    }
  }

  // MARK: Device events

  /// A device's properties changed at `now`: remembers them (and forgets the `invalidated`
  /// ones); when they carry an advertising report on the adapter, that is life for the
  /// watchdog, and while our scan runs, the reports of the type's documentation.
  /// bluetoothd sends only the properties whose value changed, so an advert that repeats itself
  /// unchanged sends nothing: the presence ticks re-report those (BlueZEngine+Presence.swift).
  mutating func deviceChanged(
    _ path: DBusObjectPath, _ changed: [String: DBusValue], invalidated: [String] = [],
    at now: NearbyClock.Instant
  ) -> [Report] {
    var device = devices[path] ?? DeviceState(at: now)
    presence.deviceChanged(path)
    device.invalidate(invalidated)
    let report = device.apply(changed, at: now)
    devices[path] = device
    guard report, device.isOn(adapter: scanning.adapter, at: path) else { return [] }
    lastReport = max(lastReport ?? now, now)
    guard scanning.scan != nil else { return [] }
    var reports: [Report] = []
    if scanning.beacons { reports.append(.beacons(device, path: path)) }
    guard scanning.tokens else { return reports }
    if scanning.reportsAllAdvertisements { reports.append(.advertisement(device, path: path)) }
    if let frame = foreignFrame(of: device) { reports.append(.token(frame, device)) }
    return reports
  }

  /// bluetoothd removed a device at `now`: it is forgotten, but ``presence`` may hold it for a
  /// grace (``PresenceStateMachine/deviceRemoved(_:device:scan:adapter:at:)``).
  mutating func deviceRemoved(_ path: DBusObjectPath, at now: NearbyClock.Instant) {
    guard let device = devices.removeValue(forKey: path) else { return }
    presence.deviceRemoved(
      path, device: device, scan: scanning.scan, adapter: scanning.adapter, at: now)
  }

  /// Our pattern monitor reported the device at `now` (DeviceFound); returns the reports of a
  /// device that was not present (``PresenceStateMachine/monitorFound(_:device:scan:at:)``).
  mutating func monitorFound(_ path: DBusObjectPath, at now: NearbyClock.Instant) -> [Report] {
    let actions = presence.monitorFound(path, device: devices[path], scan: scanning.scan, at: now)
    return actions.flatMap { action -> [Report] in
      guard case .report(let present) = action else { return [] }
      return reports(of: present)
    }
  }

  /// A new bluetoothd (or none): no device known, nothing held.
  mutating func reset() {
    devices = [:]
    presence.reset()
  }

  // MARK: Decisions

  /// The periodic presence check at `now` (``PresenceStateMachine/tick(at:scan:adapter:devices:)``).
  mutating func tick(at now: NearbyClock.Instant) -> [PresenceStateMachine.Action] {
    presence.tick(at: now, scan: scanning.scan, adapter: scanning.adapter, devices: devices)
  }

  /// The devices held present at `now` by the rule of our scan.
  func present(at now: NearbyClock.Instant) -> [PresenceStateMachine.Present] {
    presence.present(at: now, scan: scanning.scan, adapter: scanning.adapter, devices: devices)
  }

  /// The reports of present devices: their beacon frames while scanning for beacons, their
  /// token sightings while scanning for tokens, one a token (a peer's advert can sit on
  /// several device objects at once, a new address while the old object is still kept).
  func reports(of present: [PresenceStateMachine.Present]) -> [Report] {
    var tokens: Set<Token> = []
    var reports: [Report] = []
    for entry in present {
      if scanning.beacons { reports.append(.beacons(entry.device, path: entry.path)) }
      if scanning.tokens, let token = entry.device.frame?.token, tokens.insert(token).inserted,
        let frame = foreignFrame(of: entry.device)
      {
        reports.append(.token(frame, entry.device))
      }
    }
    return reports
  }

  /// The device's token frame, unless it has none or it carries our own token.
  func foreignFrame(of device: DeviceState) -> BLETokenFrame? {
    guard let frame = device.frame, frame.token != scanning.advertised,
      frame.token != scanning.wanted
    else { return nil }
    return frame
  }
}
