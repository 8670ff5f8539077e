public import Core
import Foundation
public import Strategy
import Tokens
public import BeaconFrames

/// An in-memory "air" that carries tokens between simulated devices, for tests, the demo and
/// benchmarks.
///
/// Devices have positions; a scanning node hears a transmitting node of the same medium on
/// another device when it is within that medium's range, the pair is not blocked, and the
/// advert is not lost (probability ``Configuration/loss``). Every
/// ``Configuration/advertiseInterval`` each transmitter is heard again, after
/// ``Configuration/latency``. Changes (transmit, scan, move) are heard at once.
///
/// Both waits run on ``Configuration/clock``. On a `ManualClock` the air is still until a test
/// advances the clock: each interval passed is one advertising round, and a sighting under
/// latency arrives once the clock has passed its latency. A test can also call ``pulse()`` for
/// one round. The air's tasks (the rounds while a medium is attached, the sightings in flight)
/// end, awaited, when its last medium shuts down, or with ``shutdown()``.
public actor Air {
  /// How the air behaves.
  public struct Configuration: Sendable {
    /// How often every transmitter is heard again. Default 100 ms.
    public var advertiseInterval: Duration = .milliseconds(100)
    /// Delay between transmission and sighting. Default none.
    public var latency: Duration = .zero
    /// Probability in 0...1 that one advert is not heard. Default 0.
    public var loss: Double = 0
    /// Range in metres of BLE. Default 10 m.
    public var bleRange: Double = 10
    /// Range in metres of audio. Default 5 m.
    public var audioRange: Double = 5
    /// Seed of the generator behind loss, so a run can be repeated.
    public var seed: UInt64 = 0x6e65_6172_6279
    /// The clock the advertising rounds and the latency wait on. Default `ContinuousClock`;
    /// a test gives a `ManualClock` and moves time by hand.
    public var clock: any Clock<Duration> = ContinuousClock()

    public init() {}
  }

  /// A device's place, in metres.
  public struct Position: Sendable, Hashable, CustomStringConvertible {
    public var x: Double
    public var y: Double
    public init(x: Double, y: Double = 0) {
      self.x = x
      self.y = y
    }
    public static let origin = Position(x: 0)
    public func distance(to other: Position) -> Double {
      ((x - other.x) * (x - other.x) + (y - other.y) * (y - other.y)).squareRoot()
    }
    public var description: String { "(\(x), \(y))" }
  }

  private struct Node {
    let device: String
    let kind: DiscoveryMediums
    /// Put in every sighting of this node's token (the sighting's `returnPath`).
    let returnPath: PeerAddress?
    var token: Token?
    /// The pace the manager last asked for the token transmitted (nil: none asked).
    var pace: TransmitPace?
    var scanning = false
    var beaconScanning = false
    let sightings: AsyncStream<Sighting>.Continuation
    let beaconSightings: AsyncStream<BeaconSighting>.Continuation
    let status: AsyncStream<MediumStatus>.Continuation
  }

  private struct Beacon {
    var frames: [BeaconFrame]
    var address: String
  }

  private struct DevicePair: Hashable {
    let first: String
    let second: String
    init(_ a: String, _ b: String) { (first, second) = a < b ? (a, b) : (b, a) }
  }

  private var configuration: Configuration
  private var nodes: [Int: Node] = [:]
  private var nextNodeID = 0
  private var positions: [String: Position] = [:]
  private var blocked: Set<DevicePair> = []
  private var beacons: [String: Beacon] = [:]
  private var random: SplitMix64
  private let timeline: Timeline
  /// The air's work while a medium is attached: the advertising rounds and the courier.
  private var work: WorkGroup?
  /// Sightings waiting out the latency, in due order (the latency is the same for all).
  private var inFlight: [Delivery] = []
  /// Whether the courier runs: it delivers ``inFlight`` when due, while there is any.
  private var courierRuns = false
  private var round = 0
  /// How many adverts were heard and lost so far.
  public private(set) var delivered = 0
  public private(set) var dropped = 0

  /// The TX power at 0 m the simulated BLE nodes advertise, in dBm.
  public static let txPowerAt0m = -18
  /// RSSI at 1 m in dBm; RSSI falls by 20·log10(distance) (free space).
  public static let rssiAt1m = -59.0

  public init(configuration: Configuration = Configuration()) {
    self.configuration = configuration
    self.random = SplitMix64(seed: configuration.seed)
    self.timeline = Timeline(configuration.clock)
  }

  deinit { work?.end() }

  // MARK: Topology

  /// Puts a device at a position (devices start at the origin).
  public func place(_ device: String, at position: Position) {
    positions[device] = position
    pulse()
  }

  /// Where a device is.
  public func position(of device: String) -> Position { positions[device] ?? .origin }

  /// Stops the two devices from hearing each other on any medium, whatever their distance.
  public func block(_ a: String, _ b: String) { blocked.insert(DevicePair(a, b)) }

  /// Undoes ``block(_:_:)``.
  public func unblock(_ a: String, _ b: String) {
    blocked.remove(DevicePair(a, b))
    pulse()
  }

  /// Puts a simulated beacon named `name` at `position`, advertising `frames` in turn (one
  /// each advertising round) to BLE mediums that scan for beacons within BLE range. Its RSSI
  /// follows the frame's declared power and free-space loss (Tokens' `PathLossModel` with
  /// exponent 2). Move it with ``place(_:at:)``; placing it again replaces its frames.
  public func placeBeacon(_ name: String, frames: [BeaconFrame], at position: Position) {
    let index =
      beacons[name].map(\.address)
      ?? String(format: "BE:AC:00:00:%02X:%02X", beacons.count >> 8, beacons.count & 0xff)
    beacons[name] = Beacon(frames: frames, address: index)
    positions[name] = position
    pulse()
  }

  /// Switches a simulated beacon off.
  public func removeBeacon(_ name: String) { beacons[name] = nil }

  /// Changes the probability that one advert is lost.
  public func setLoss(_ loss: Double) { configuration.loss = min(max(loss, 0), 1) }

  /// Reports a status on a device's medium, as a real medium would (power off, permission).
  public func setStatus(_ status: MediumStatus, device: String, medium: DiscoveryMediums) {
    for node in nodes.values where node.device == device && node.kind == medium {
      node.status.yield(status)
    }
  }

  /// The pace `device`'s `medium` was last asked to repeat its token at
  /// (`Medium.setPace(_:for:)`, Core), nil when none was asked for the token it transmits.
  /// The air itself repeats every token at one rate: this records what a medium of a shared
  /// air would do.
  public func transmitPace(of device: String, medium: DiscoveryMediums) -> TransmitPace? {
    nodes.values.first { $0.device == device && $0.kind == medium }?.pace
  }

  /// Whether `hearer` can hear `speaker` on `medium` now.
  public func canHear(_ hearer: String, _ speaker: String, on medium: DiscoveryMediums) -> Bool {
    guard hearer != speaker, !blocked.contains(DevicePair(hearer, speaker)) else { return false }
    let range = medium == .audio ? configuration.audioRange : configuration.bleRange
    return position(of: hearer).distance(to: position(of: speaker)) <= range
  }

  // MARK: Mediums

  /// A medium of `kind` for `device`, attached to this air. Sightings of its token carry
  /// `returnPath` (as a LAN medium gives the datagram's source address), so peer resolution
  /// can ask the device directly.
  public func makeMedium(
    device: String, kind: DiscoveryMediums, returnPath: PeerAddress? = nil
  ) -> AirMedium {
    let (sightings, sightingsContinuation) = AsyncStream.makeStream(
      of: Sighting.self, bufferingPolicy: .bufferingNewest(4096))
    let (statuses, statusContinuation) = AsyncStream.makeStream(
      of: MediumStatus.self, bufferingPolicy: .bufferingNewest(16))
    let (beaconSightings, beaconContinuation) = AsyncStream.makeStream(
      of: BeaconSighting.self, bufferingPolicy: .bufferingNewest(4096))
    statusContinuation.yield(.ready)
    let id = nextNodeID
    nextNodeID += 1
    nodes[id] = Node(
      device: device, kind: kind, returnPath: returnPath, sightings: sightingsContinuation,
      beaconSightings: beaconContinuation, status: statusContinuation)
    startLoopIfNeeded()
    return AirMedium(
      air: self, node: id, device: device, kind: kind, sightings: sightings,
      beaconSightings: beaconSightings, statuses: statuses)
  }

  func transmit(node id: Int, token: Token) {
    if nodes[id]?.token != token { nodes[id]?.pace = nil }
    nodes[id]?.token = token
    pulse()
  }

  func stopTransmitting(node id: Int) {
    nodes[id]?.token = nil
    nodes[id]?.pace = nil
  }

  func setPace(node id: Int, pace: TransmitPace, token: Token) {
    guard let node = nodes[id], node.token == token else { return }
    nodes[id]?.pace = pace
  }

  func startScanning(node id: Int) {
    guard nodes[id]?.scanning == false else { return }
    nodes[id]?.scanning = true
    pulse()
  }

  func stopScanning(node id: Int) { nodes[id]?.scanning = false }

  func startBeaconScanning(node id: Int) {
    guard nodes[id]?.beaconScanning == false else { return }
    nodes[id]?.beaconScanning = true
    pulse()
  }

  func stopBeaconScanning(node id: Int) { nodes[id]?.beaconScanning = false }

  /// Detaches a medium: its streams finish and its sightings in flight are dropped. The last
  /// medium to go ends the air's tasks.
  func detach(node id: Int) async {
    guard let node = nodes.removeValue(forKey: id) else { return }
    inFlight.removeAll { $0.node == id }
    node.sightings.finish()
    node.beaconSightings.finish()
    node.status.finish()
    if nodes.isEmpty { await stopTasks() }
  }

  /// Detaches every medium (their streams finish, as with `AirMedium.shutdown()`) and ends the
  /// air's tasks, the advertising rounds and the sightings in flight, awaiting them. The air
  /// keeps its devices, beacons and counts; a medium made afterwards starts the rounds again.
  public func shutdown() async {
    for id in nodes.keys.sorted() { await detach(node: id) }
    await stopTasks()
  }

  // MARK: Propagation

  /// Ends the rounds and the courier and awaits them. A medium made meanwhile (this awaits)
  /// starts work of its own.
  private func stopTasks() async {
    guard let ending = work else { return }
    work = nil
    courierRuns = false
    inFlight.removeAll()
    ending.end()
    await ending.ended()
  }

  private func startLoopIfNeeded() {
    guard work == nil else { return }
    let work = WorkGroup()
    self.work = work
    let (timeline, interval) = (timeline, configuration.advertiseInterval)
    // Taken now, not when the work first runs, so that a clock advanced at once still counts.
    let first = timeline.elapsed() + interval
    work.start { [weak self] in
      // One round per interval on the clock, on a fixed schedule: a clock that jumps several
      // intervals (a manual one) gets one round for each.
      var next = first
      while true {
        do {
          try await timeline.sleep(until: next)
        } catch {
          return  // cancelled by stopTasks()
        }
        guard let self else { return }
        await self.pulse()
        next += interval
      }
    }
  }

  private func startCourierIfNeeded() {
    guard !courierRuns else { return }
    if work == nil { startLoopIfNeeded() }
    courierRuns = true
    work?.start { [weak self] in await self?.deliverInFlight() }
  }

  /// Sleeps on the clock until the first sighting in flight is due, delivers every one due,
  /// and so on until none is left.
  private func deliverInFlight() async {
    while let first = inFlight.first {
      do {
        try await timeline.sleep(until: first.due)
      } catch {
        return  // cancelled by stopTasks(), which cleared `courierRuns` already
      }
      let now = timeline.elapsed()
      while let delivery = inFlight.first, delivery.due <= now {
        inFlight.removeFirst()
        nodes[delivery.node]?.sightings.yield(delivery.sighting)
      }
    }
    // A cancelled courier was stopped by stopTasks(), which may have started another since.
    if !Task.isCancelled { courierRuns = false }
  }

  /// One advertising round: every transmitter is heard by every scanner in reach, and every
  /// beacon by every BLE medium scanning for beacons in reach.
  public func pulse() {
    pulseBeacons()
    let now = Date()
    // In node order, so that a seeded loss pattern repeats from run to run.
    let ordered = nodes.sorted { $0.key < $1.key }
    for (_, speaker) in ordered {
      guard let token = speaker.token else { continue }
      for (hearerID, hearer) in ordered
      where hearer.scanning && hearer.kind == speaker.kind
        && canHear(hearer.device, speaker.device, on: speaker.kind)
      {
        if configuration.loss > 0, Double.random(in: 0..<1, using: &random) < configuration.loss {
          dropped += 1
          continue
        }
        delivered += 1
        let distance = max(
          position(of: hearer.device).distance(to: position(of: speaker.device)), 0.1)
        let attenuation = 20 * log10(distance)
        let sighting =
          speaker.kind == .audio
          ? Sighting(
            token: token, medium: .audio, snr: 30 - attenuation, time: now,
            returnPath: speaker.returnPath)
          : Sighting(
            token: token, medium: speaker.kind, rssi: Self.rssiAt1m - attenuation,
            txPower: Self.txPowerAt0m, time: now, returnPath: speaker.returnPath)
        if configuration.latency == .zero {
          hearer.sightings.yield(sighting)
        } else {
          inFlight.append(
            Delivery(
              due: timeline.elapsed() + configuration.latency, node: hearerID, sighting: sighting))
          startCourierIfNeeded()
        }
      }
    }
  }
}

extension Air {
  /// A sighting waiting out the latency.
  private struct Delivery {
    /// When it arrives, as time since the air was made.
    let due: Duration
    let node: Int
    let sighting: Sighting
  }

  /// The air's clock as time since the air was made, so that the actor need not be generic
  /// over the clock's instant.
  private struct Timeline: Sendable {
    let elapsed: @Sendable () -> Duration
    private let sleeper: @Sendable (Duration) async throws -> Void

    init<C: Clock<Duration>>(_ clock: C) {
      let start = clock.now
      elapsed = { start.duration(to: clock.now) }
      sleeper = { try await clock.sleep(until: start.advanced(by: $0), tolerance: nil) }
    }

    /// Returns once `offset` since the start has passed; throws `CancellationError` when the
    /// task is cancelled first.
    func sleep(until offset: Duration) async throws { try await sleeper(offset) }
  }

  private func pulseBeacons() {
    guard !beacons.isEmpty else { return }
    let model = PathLossModel()
    let now = ContinuousClock.now
    round &+= 1
    for (name, beacon) in beacons.sorted(by: { $0.key < $1.key }) where !beacon.frames.isEmpty {
      let frame = beacon.frames[round % beacon.frames.count]
      let reference = frame.referencePower ?? .atZeroMetres(Int8(Self.txPowerAt0m))
      for hearer in nodes.values
      where hearer.beaconScanning && hearer.kind == .ble && canHear(hearer.device, name, on: .ble) {
        if configuration.loss > 0, Double.random(in: 0..<1, using: &random) < configuration.loss {
          dropped += 1
          continue
        }
        delivered += 1
        let distance = max(position(of: hearer.device).distance(to: position(of: name)), 0.1)
        let rssi = model.powerAtOneMetre(reference) - 20 * log10(distance)
        hearer.beaconSightings.yield(
          BeaconSighting(
            address: beacon.address, frame: frame, rssi: Int(rssi.rounded()), time: now))
      }
    }
  }
}
