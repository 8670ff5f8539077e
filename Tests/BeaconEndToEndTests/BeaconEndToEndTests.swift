import TestSupport
import BLEBlueZ
import BlueZTestSupport
import Core
import DBus
import Foundation
import Logging
import MediumTestKit
import NearbyServer
import Resolution
import ResolverClient
import ServerStorage
import ServiceLifecycle
import Strategy
import Synchronization
import Testing
import Tokens
import NearbyTesting
import BeaconFrames

/// Beacon subscriptions end to end: simulated Eddystone-UID, Eddystone-EID and iBeacon beacons
/// advertised through the BlueZ double, a manager on another adapter with `.bluez()`, and the
/// resolver server (in this process, on loopback, SQLite) holding the beacons and attachments.
@Suite("Beacons end to end (BlueZ double, resolver server)", .serialized)
struct BeaconEndToEndTests {
  static let namespace = try! BeaconBytes(hex: "edd1ebeac04e5defa017")
  /// TX power −10 dBm at 0 m: −51 dBm at 1 m, what the double reports one adapter away.
  static let uid = BeaconFrame.eddystoneUID(
    try! EddystoneUID(
      namespace: namespace, instance: BeaconBytes(hex: "0123456789ab"), txPower: -10))
  static let iBeacon = BeaconFrame.iBeacon(
    try! IBeacon(
      proximityUUID: BeaconBytes(hex: "e2c56db5dffb48d2b060d0f5a71096e0"), major: 7, minor: 9,
      measuredPower: -51))
  static let identityKey: [UInt8] = Array(0..<16)

  let soup = Attachment("com.example/menu", "soup")
  let price = Attachment("com.example/price", "3 EUR")
  let bread = Attachment("org.other/menu", "bread")
  let iBeaconMenu = Attachment("com.example/menu", "iBeacon menu")
  let eidMenu = Attachment("com.example/menu", "EID menu")

  struct Attachment {
    var namespacedType: String
    var text: String
    init(_ namespacedType: String, _ text: String) {
      self.namespacedType = namespacedType
      self.text = text
    }
    var message: Message {
      let parts = namespacedType.split(separator: "/").map(String.init)
      return Message(text: text, type: parts[1], namespace: parts[0])
    }
    var new: NewAttachment {
      try! NewAttachment(namespacedType: namespacedType, data: Array(text.utf8))
    }
  }

  /// The resolver server on a free loopback port, with the three beacons registered.
  struct World {
    let storage: any ResolverStorage
    let group: ServiceGroup
    let serving: Task<Void, any Error>
    let url: URL
    let key: String
    let eidFrame: BeaconFrame
    let folder: URL

    /// Stops the server gracefully: cancelling it while a connection is being accepted traps
    /// in SwiftNIO (apple/swift-nio#3481). An open request that does not end within 30 s
    /// (an event stream nobody closed) is cancelled then, and the server's end is checked.
    func stop() async {
      await group.triggerGracefulShutdown()
      if case .failure(let error) = await serving.result {
        Issue.record("the resolver server ended with an error: \(error)")
      }
      await storage.shutdown()
      try? FileManager.default.removeItem(at: folder)
    }
  }

  func world() async throws -> World {
    var logger = Logger(label: "test.beacons.server")
    logger.logLevel = .warning
    let folder = FileManager.default.temporaryDirectory
      .appendingPathComponent("nearby-beacons-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let storage = try await StorageLocation.sqlite(
      path: folder.appendingPathComponent("resolver.sqlite").path
    ).open(logger: logger)
    let now = Date()
    let registration = try EddystoneEIDRegistration(
      identityKey: Self.identityKey, rotationExponent: 10, clockValue: 123_456, registeredAt: now)
    let eid = registration.eid(at: now)
    let eidFrame = BeaconFrame.eddystoneEID(
      try EddystoneEID(ephemeralID: BeaconBytes(eid), txPower: -10))
    let (soup, price, bread, iBeaconMenu, eidMenu) = (soup, price, bread, iBeaconMenu, eidMenu)
    let key = try await storage.transaction { store in
      let key = try store.apiKeys.createAPIKey(
        project: "beacons", role: .admin, label: "test", now: now
      )
      .key
      _ = try store.beacons.registerBeacon(
        project: "beacons",
        advertisedID: BeaconID(frame: Self.uid)!,
        description: "", attachments: [soup.new, price.new, bread.new], now: now)
      _ = try store.beacons.registerBeacon(
        project: "beacons",
        advertisedID: BeaconID(frame: Self.iBeacon)!,
        description: "", attachments: [iBeaconMenu.new], now: now)
      _ = try store.beacons.registerBeacon(
        project: "beacons", advertisedID: BeaconID(kind: .eddystoneEID, bytes: eid)!,
        description: "", eid: registration, attachments: [eidMenu.new], now: now)
      return key
    }
    var configuration = ResolverServerConfiguration()
    configuration.port = 0
    let server = ResolverServer(storage: storage, configuration: configuration, logger: logger)
    let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
    var groupConfiguration = ServiceGroupConfiguration(
      services: [.init(service: Serving(server: server, ready: portContinuation))],
      logger: logger)
    groupConfiguration.maximumGracefulShutdownDuration = .seconds(30)
    let group = ServiceGroup(configuration: groupConfiguration)
    let serving = Task {
      defer { portContinuation.finish() }
      try await group.run()
    }
    var iterator = ports.makeAsyncIterator()
    let port = try #require(await iterator.next())
    return World(
      storage: storage, group: group, serving: serving,
      url: URL(string: "http://127.0.0.1:\(port)")!, key: key,
      eidFrame: eidFrame, folder: folder)
  }

  /// The server as a service that reports its port.
  struct Serving: Service {
    let server: ResolverServer
    let ready: AsyncStream<Int>.Continuation
    func run() async throws { try await server.run(onListening: { ready.yield($0) }) }
  }

  /// A manager on hci0 of the double, resolving through the server.
  func manager(_ world: World) async throws -> MessageManager {
    var logger = Logger(label: "test.beacons.manager")
    logger.logLevel = .warning
    var configuration = MessageManager.Configuration(
      resolver: .server(world.url, credentialStore: InMemoryCredentialStore(), logger: logger),
      mediums: [.bluez(BlueZConfiguration(bus: try DoubleBus.bus(), adapter: "hci0"))],
      logger: logger)
    configuration.beaconLostAfter = .seconds(2)
    configuration.beaconSmoothingWindow = .seconds(1)
    return try await MessageManager(apiKey: world.key, configuration: configuration)
  }

  @Test(
    "registered attachments are found, filtered by namespace/type and includeIBeacons",
    .requires(.bluezDouble))
  func foundAndFiltered() async throws {
    try await DoubleControl.once { try await $0.reset() }
    let world = try await world()
    let manager = try await manager(world)
    let bus = try DoubleBus.bus()
    let menusFound = Founds()
    let menus = try await manager.subscribe(
      onFound: { menusFound.append($0) },
      configure: {
        $0.deviceTypes = .bleBeacons
        $0.namespace = "com.example"
        $0.type = "menu"
        $0.beaconStrategy = BeaconStrategy(includeIBeacons: false)
      })
    let everything = try await manager.subscribe(configure: { $0.deviceTypes = .bleBeacons })
    let (menuEvents, allEvents) = (StreamRecorder(menus.events), StreamRecorder(everything.events))
    let beacons = [
      try await SimulatedBeacon.start(Self.uid, on: "hci1", bus: bus),
      try await SimulatedBeacon.start(Self.iBeacon, on: "hci1", bus: bus),
      try await SimulatedBeacon.start(world.eidFrame, on: "hci2", bus: bus),
    ]

    let expectedAll: Set<Message> = [
      soup.message, price.message, bread.message, iBeaconMenu.message, eidMenu.message,
    ]
    #expect(
      await allEvents.until(timeout: .seconds(15)) { elements in
        Set(elements.compactMap(\.found)) == expectedAll
      }, "found: \(allEvents.elements.compactMap(\.found))")
    // The filtered subscription: menus of com.example, Eddystone only (UID and EID).
    #expect(
      await menuEvents.until() { elements in
        Set(elements.compactMap(\.found)) == [soup.message, eidMenu.message]
      }, "found: \(menuEvents.elements.compactMap(\.found))")
    // What a beacon carries is offered to every subscription in one step on the manager, which
    // runs the handlers: once "everything" has the iBeacon's menu and that step is over (a call
    // to the manager waits for it), "menus" has been offered it too.
    _ = await manager.currentAppState
    #expect(!menusFound.all.contains(iBeaconMenu.message))
    #expect(menusFound.all.count == 2)
    #expect(!menuEvents.elements.compactMap(\.found).contains(iBeaconMenu.message))
    #expect(menuEvents.elements.compactMap(\.found).count == 2)

    for beacon in beacons { await beacon.stop() }
    await manager.shutdown()
    await world.stop()
  }

  @Test(
    "another project's public namespace is found by a subscription naming it, nothing else",
    .requires(.bluezDouble))
  func publicNamespaceOfAnotherProject() async throws {
    try await DoubleControl.once { try await $0.reset() }
    let world = try await world()
    let now = Date()
    // Project "partner" registered the same Eddystone-UID beacon, with a public namespace and
    // an unlisted one.
    try await world.storage.transaction { store in
      _ = try store.beacons.registerBeacon(
        project: "partner", advertisedID: BeaconID(frame: Self.uid)!, description: "theirs",
        attachments: [
          try NewAttachment(namespacedType: "partner.offers/coupon", data: Array("coupon".utf8)),
          try NewAttachment(namespacedType: "partner.private/key", data: Array("secret".utf8)),
        ], now: now)
      _ = try store.namespaces.setNamespaceVisibility(
        project: "partner", name: "partner.offers", visibility: .public, now: now)
    }
    let manager = try await manager(world)
    let bus = try DoubleBus.bus()
    let offers = try await manager.subscribe(configure: {
      $0.deviceTypes = .bleBeacons
      $0.namespace = "partner.offers"
    })
    let (hiddenFound, ownFound) = (Founds(), Founds())
    let hidden = try await manager.subscribe(
      onFound: { hiddenFound.append($0) },
      configure: {
        $0.deviceTypes = .bleBeacons
        $0.namespace = "partner.private"
      })
    let own = try await manager.subscribe(
      onFound: { ownFound.append($0) }, configure: { $0.deviceTypes = .bleBeacons })
    let (offerEvents, hiddenEvents, ownEvents) = (
      StreamRecorder(offers.events), StreamRecorder(hidden.events), StreamRecorder(own.events)
    )
    let beacon = try await SimulatedBeacon.start(Self.uid, on: "hci1", bus: bus)
    let couponMessage = Message(text: "coupon", type: "coupon", namespace: "partner.offers")
    #expect(
      await offerEvents.until(timeout: .seconds(15)) { elements in
        elements.compactMap(\.found) == [couponMessage]
      }, "found: \(offerEvents.elements.compactMap(\.found))")
    #expect(
      await ownEvents.until() { elements in
        Set(elements.compactMap(\.found)) == [soup.message, price.message, bread.message]
      }, "found: \(ownEvents.elements.compactMap(\.found))")
    // The beacon's answer is offered to every subscription in one step on the manager, which
    // runs the handlers: once "offers" has the coupon and that step is over (a call to the
    // manager waits for it), "hidden" and "own" have been offered it too.
    _ = await manager.currentAppState
    #expect(hiddenFound.all.isEmpty)
    #expect(!ownFound.all.contains(couponMessage))
    #expect(hiddenEvents.elements.compactMap(\.found).isEmpty)
    #expect(!ownEvents.elements.compactMap(\.found).contains(couponMessage))

    await beacon.stop()
    await manager.shutdown()
    await world.stop()
  }

  @Test("telemetry a manager hears reaches the server's diagnostics of the beacon")
  func telemetryReachesDiagnostics() async throws {
    let world = try await world()
    // The in-memory air (the BlueZ double keeps one frame per advert): the beacon interleaves
    // its UID and TLM frames from one address, as Eddystone beacons do.
    var airConfiguration = Air.Configuration()
    airConfiguration.advertiseInterval = .milliseconds(50)
    let air = Air(configuration: airConfiguration)
    await air.place("me", at: .origin)
    var logger = Logger(label: "test.beacons.manager")
    logger.logLevel = .warning
    var configuration = MessageManager.Configuration(
      resolver: .server(world.url, credentialStore: InMemoryCredentialStore(), logger: logger),
      mediums: MediumProvider.air(air, device: "me", mediums: .ble), logger: logger)
    configuration.beaconCacheTTL = .milliseconds(300)
    let manager = try await MessageManager(apiKey: world.key, configuration: configuration)
    let subscription = try await manager.subscribe(configure: { $0.deviceTypes = .bleBeacons })
    let events = StreamRecorder(subscription.events)
    let tlm = EddystoneTLM(
      batteryMillivolts: 2950, temperatureCelsius: 19.5, advertisingCount: 4242,
      uptimeDeciseconds: 600)
    await air.placeBeacon("b1", frames: [Self.uid, .eddystoneTLM(tlm)], at: .init(x: 1))
    #expect(await events.first(timeout: .seconds(15)) { $0.found != nil } != nil)
    let name = BeaconID(frame: Self.uid)!.name
    let storage = world.storage
    let read = { @Sendable () async throws -> BeaconDiagnostics? in
      try await storage.read { store in
        try store.observations.diagnostics(
          project: "beacons", beacon: name, now: Date(), settings: DiagnosticsSettings())
      }
    }
    #expect(
      await eventually(timeout: .seconds(10)) {
        (try? await read())??.batteryMillivolts == 2950
      })
    let diagnostics = try #require(try await read())
    #expect(diagnostics.temperatureCelsius == 19.5)
    #expect(diagnostics.advertisingCount == 4242)
    #expect(diagnostics.uptimeSeconds == 60)
    #expect(diagnostics.lastObservedAt != nil)
    #expect(diagnostics.alerts.isEmpty)
    await manager.shutdown()
    await world.stop()
  }

  @Test(
    "a beacon moving away reports growing distances, then is lost when it leaves",
    .requires(.bluezDouble))
  func movingAway() async throws {
    try await DoubleControl.once { try await $0.reset() }
    let world = try await world()
    let manager = try await manager(world)
    let subscription = try await manager.subscribe(configure: {
      $0.deviceTypes = .bleBeacons
      $0.type = "menu"
      $0.namespace = "com.example"
    })
    let events = StreamRecorder(subscription.events)
    let beacon = try await SimulatedBeacon.start(Self.uid, on: "hci1", bus: try DoubleBus.bus())
    let near = try #require(
      await events.first(timeout: .seconds(15)) { $0.distance != nil }?.distance)
    // −51 dBm heard, −51 dBm at 1 m (TX power −10 at 0 m less 41 dB).
    #expect(near.metres > 0.5 && near.metres < 2, "\(near)")

    let moved = ContinuousClock.now
    try await DoubleControl.once { try await $0.setRSSI(advertiser: "hci1", rssi: -80) }
    let far = try #require(
      await events.first(since: moved, timeout: .seconds(10)) {
        ($0.distance?.metres ?? 0) > 15
      }?.distance)
    // 29 dB more loss at exponent 2: 10^(29/20) ≈ 28 m.
    #expect(far.metres > 20 && far.metres < 40, "\(far)")
    let distances = events.elements(since: moved).compactMap(\.distance).map(\.metres)
    #expect(distances == distances.sorted(), "distances while moving away: \(distances)")
    // The smoothed signal follows: a report of it below −70 dBm comes (the last one already
    // recorded when the distance crossed 15 m may still be from the way out).
    let weak = await events.first(since: moved, timeout: .seconds(10)) {
      ($0.signal?.rssi ?? 0) < -70
    }
    #expect(
      weak != nil,
      "signals while moving away: \(events.elements(since: moved).compactMap(\.signal).map(\.rssi))"
    )

    let left = ContinuousClock.now
    await beacon.stop()
    let lost = await events.first(since: left, timeout: .seconds(10)) { $0.lost != nil }
    #expect(lost?.lost == soup.message)
    // The double's RSSI back to normal for the targets after this.
    try await DoubleControl.once { try await $0.reset() }
    await manager.shutdown()
    await world.stop()
  }
}

/// The messages a subscription's `onFound` was given, kept as it runs (on the manager, in the
/// step that found them).
final class Founds: Sendable {
  private let messages = Mutex<[Message]>([])
  func append(_ message: Message) { messages.withLock { $0.append(message) } }
  var all: [Message] { messages.withLock { $0 } }
}
