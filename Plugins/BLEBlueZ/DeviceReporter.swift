import Core
import DBus
import Logging
import Synchronization
import Tokens

/// The BlueZ medium's device side: ``DeviceReports`` behind a `Mutex`, and the streams its
/// reports go to (sightings, beacon sightings, advertisements).
///
/// The D-Bus connection's dispatch thread hands it every BlueZ signal (``receive(_:)``): a
/// device's advertising report is decoded, remembered and yielded as a sighting right there,
/// without a task wake-up or a hop onto ``BlueZEngine``; a signal about an adapter (and every
/// signal behind one) goes to the engine, which handles it as before and then says so
/// (``engineHandled()``). The engine uses the same state, under the same lock, for the rest:
/// the monitor's DeviceFound, the presence ticks, what it decided that reports depend on.
///
/// Reports are yielded while the lock is held, so sightings keep the order in which the
/// device events and the ticks that made them were decided, wherever they ran; yielding to an
/// `AsyncStream` runs no code of ours and never blocks. Logging waits until the lock is
/// released.
final class DeviceReporter: Sendable {
  private let state: Mutex<DeviceReports>
  let sightings: AsyncStream<Sighting>.Continuation
  let advertisements: AsyncStream<BlueZAdvertisement>.Continuation
  let beaconSightings: AsyncStream<BeaconSighting>.Continuation
  let logger: Logger
  /// The engine's clock: the instant of every event decided here.
  let clock: NearbyClock

  init(
    _ reports: DeviceReports, sightings: AsyncStream<Sighting>.Continuation,
    advertisements: AsyncStream<BlueZAdvertisement>.Continuation,
    beaconSightings: AsyncStream<BeaconSighting>.Continuation, clock: NearbyClock,
    logger: Logger
  ) {
    state = Mutex(reports)
    self.clock = clock
    self.sightings = sightings
    self.advertisements = advertisements
    self.beaconSightings = beaconSightings
    self.logger = logger
  }

  /// Reads or changes the state under the lock (the engine's side; never for long).
  func withState<Result: Sendable>(_ body: (inout DeviceReports) -> Result) -> Result {
    state.withLock { body(&$0) }
  }

  // MARK: The dispatch thread

  /// A BlueZ signal, on the D-Bus connection's dispatch thread: handles it here and returns
  /// `true`, or returns `false` when the engine must handle it (then pass it on, in order, and
  /// call ``engineHandled()`` once the engine did, or at once if it is dropped).
  func receive(_ signal: DBusMessage) -> Bool {
    let now = clock.now
    let outcome = state.withLock { state -> (handled: Bool, malformed: [String]) in
      guard let event = state.receive(signal) else { return (false, []) }
      return (true, perform(state.apply(event, at: now), scanning: state.scanning, at: now))
    }
    log(outcome.malformed)
    return outcome.handled
  }

  /// The engine handled a signal ``receive(_:)`` passed to it, or it was dropped.
  func engineHandled() { state.withLock { $0.engineHandled() } }

  // MARK: The engine's side

  /// A device's properties changed (a signal the engine handled).
  func deviceChanged(
    _ path: DBusObjectPath, _ changed: [String: DBusValue], invalidated: [String] = []
  ) {
    let now = clock.now
    let malformed = state.withLock { state in
      perform(
        state.deviceChanged(path, changed, invalidated: invalidated, at: now),
        scanning: state.scanning, at: now)
    }
    log(malformed)
  }

  /// Our pattern monitor reported the device: reports it when it was not present.
  func monitorFound(_ path: DBusObjectPath) {
    let now = clock.now
    let malformed = state.withLock { state in
      perform(state.monitorFound(path, at: now), scanning: state.scanning, at: now)
    }
    log(malformed)
  }

  /// The periodic presence check: reports the devices held present, and returns the presence
  /// machine's actions for the engine (whose reports are already made).
  func tick() -> [PresenceStateMachine.Action] {
    let now = clock.now
    let (actions, malformed) = state.withLock { state in
      let actions = state.tick(at: now)
      var malformed: [String] = []
      for case .report(let present) in actions {
        malformed += perform(state.reports(of: present), scanning: state.scanning, at: now)
      }
      return (actions, malformed)
    }
    log(malformed)
    return actions
  }

  // MARK: Reports

  /// Yields the reports (under the lock); returns what to log of malformed beacon frames.
  private func perform(
    _ reports: [DeviceReports.Report], scanning: DeviceReports.Scanning,
    at now: NearbyClock.Instant
  ) -> [String] {
    var malformed: [String] = []
    for report in reports {
      switch report {
      case .token(let frame, let device):
        sightings.yield(
          Sighting(
            token: frame.token, medium: .ble, rssi: device.rssi.map(Double.init),
            txPower: Int(frame.txPower),
            returnPath: device.address.flatMap {
              BLEPeerAddress.make(role: .advertiser, address: $0, isRandom: device.randomAddress)
            }))
      case .beacons(let device, let path):
        let address = device.address ?? path.rawValue
        let frames = device.beaconFrames { entry, error in
          malformed.append(
            "bluez \(Self.name(scanning)): \(address) sent a malformed beacon in \(entry): \(error)"
          )
        }
        // Stamped by BeaconSighting (the continuous clock, for logs): the manager times a
        // sighting on its own clock as it arrives, and the engine's instants mean nothing
        // outside the engine.
        for frame in frames {
          beaconSightings.yield(
            BeaconSighting(address: address, frame: frame, rssi: device.rssi.map(Int.init)))
        }
      case .advertisement(let device, let path):
        advertisements.yield(
          BlueZAdvertisement(
            address: device.address ?? path.rawValue, rssi: device.rssi.map(Int.init),
            txPower: device.txPower.map(Int.init), serviceData: device.serviceData,
            manufacturerData: device.manufacturerData, token: device.frame?.token))
      }
    }
    return malformed
  }

  /// The adapter's name, as the engine's logs give it.
  private static func name(_ scanning: DeviceReports.Scanning) -> String {
    scanning.adapter.map { String($0.rawValue.split(separator: "/").last ?? "") } ?? "no adapter"
  }

  private func log(_ malformed: [String]) {
    for line in malformed { logger.debug("\(line)") }
  }
}
