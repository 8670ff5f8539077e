import BlueZTestSupport
import Core
import DBus
import Foundation
import Logging
import MediumTestKit
import PeerResolution
import Resolution
import Strategy
import Testing
import TestSupport
import Tokens

@testable import BLEBlueZ
import NearbyTesting

/// Peer resolution over GATT through the double: the transport's conformance, and two
/// managers with peer resolvers whose only way to each other is BLE. In the serialized double
/// suite.
extension BlueZDoubleTests {
  static func quietLogger(_ label: String) -> Logger {
    var logger = Logger(label: label)
    logger.logLevel = .warning
    return logger
  }

  /// The owner on hci0 (a connectable advert of a token) and the hearer on hci1 (scanning):
  /// the owner's address is the way back of the hearer's sighting of that token.
  static func gattPair(bus: DBusBus) async throws -> PeerTransportConformance.Pair {
    var ownerConfiguration = BlueZConfiguration(bus: bus, adapter: "hci0")
    ownerConfiguration.connectable = true
    let ownerMedium = try await BlueZMedium(
      configuration: ownerConfiguration, logger: quietLogger("test.owner"))
    let owner = try await BlueZPeerTransport(
      configuration: .init(bluez: ownerConfiguration), logger: quietLogger("test.owner.gatt"))
    let hearerConfiguration = BlueZConfiguration(bus: bus, adapter: "hci1")
    let hearerMedium = try await BlueZMedium(
      configuration: hearerConfiguration, logger: quietLogger("test.hearer"))
    let hearer = try await BlueZPeerTransport(
      configuration: .init(bluez: hearerConfiguration), logger: quietLogger("test.hearer.gatt"))
    let heard = StreamRecorder(hearerMedium.sightings)
    let token = Token.random()
    try await ownerMedium.transmit(token)
    try await hearerMedium.startScanning()
    let sighting = try #require(await heard.first(timeout: .seconds(10)) { $0.token == token })
    let address = try #require(sighting.returnPath)
    return PeerTransportConformance.Pair(
      first: TransportWithMedium(hearer, medium: hearerMedium), firstAddress: address,
      second: TransportWithMedium(owner, medium: ownerMedium), secondAddress: address)
  }

  @Test(.requires(.bluezDouble), arguments: PeerTransportConformance.Check.allCases)
  func gattTransportConformance(_ check: PeerTransportConformance.Check) async throws {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    let bus = control.bus
    try await PeerTransportConformance {
      try await Self.gattPair(bus: bus)
    }.run(check)
  }

  /// A reply of many chunks: the hearer's transport reports the owner as each chunk but the
  /// last is read, so its resolver waits for the rest instead of asking again (a 16 KiB reply
  /// takes about a second to read over a real link, as long as a question waits).
  @Test(.requires(.bluezDouble)) func aReplyReadInChunksIsReportedAsArrivingMeanwhile()
    async throws
  {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    let pair = try await Self.gattPair(bus: control.bus)
    let parts = StreamRecorder(pair.first.arriving)
    let replies = StreamRecorder(pair.first.incoming)
    let questions = StreamRecorder(pair.second.incoming)
    try await pair.first.send([1, 2, 3], to: pair.secondAddress)
    let question = try #require(await questions.first(timeout: .seconds(10)) { _ in true })
    let reply = (0..<GattPeerProfile.maximumDatagramSize).map { UInt8(truncatingIfNeeded: $0 &* 7) }
    try await pair.second.send(reply, to: question.sender)
    #expect(await replies.first(timeout: .seconds(20)) { $0.bytes == reply } != nil)
    // 16 KiB in chunks of at most 512 bytes: 32 chunks at least, all but the last partial.
    #expect(
      await parts.until(timeout: .seconds(10)) { $0.count >= 31 },
      "\(parts.elements.count) parts reported")
    #expect(parts.elements.allSatisfy { $0 == pair.secondAddress })
    await pair.first.shutdown()
    await pair.second.shutdown()
    #expect(await parts.waitUntilFinished(timeout: .seconds(10)))
  }

  @Test(.requires(.bluezDouble)) func aTokenHeardOverBLECarriesItsAdvertisersAddress() async throws
  {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    let pair = try await Self.gattPair(bus: control.bus)
    let parts = try #require(BLEPeerAddress.parts(pair.secondAddress))
    #expect(parts.role == .advertiser)
    // The double sends a connectable advert from hci0's public address.
    #expect(parts.address == "00:AA:01:00:00:00")
    #expect(!parts.isRandom)
    #expect(try await control.adverts("hci0").first?["Type"]?.string == "peripheral")
    await pair.first.shutdown()
    await pair.second.shutdown()
  }

  @Test(.requires(.bluezDouble)) func anAdvertiserWithoutTheServiceIsRefusedAndBackedOff()
    async throws
  {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    // A connectable advert on hci0 but no GATT transport there.
    var configuration = BlueZConfiguration(bus: control.bus, adapter: "hci0")
    configuration.connectable = true
    let owner = try await BlueZMedium(configuration: configuration, logger: Self.quietLogger("o"))
    let hearerConfiguration = BlueZConfiguration(bus: control.bus, adapter: "hci1")
    let medium = try await BlueZMedium(
      configuration: hearerConfiguration, logger: Self.quietLogger("h"))
    let hearer = try await BlueZPeerTransport(configuration: .init(bluez: hearerConfiguration))
    let heard = StreamRecorder(medium.sightings)
    let token = Token.random()
    try await owner.transmit(token)
    try await medium.startScanning()
    let address = try #require(
      await heard.first(timeout: .seconds(10)) { $0.token == token }?.returnPath)
    try await hearer.send([1, 2, 3], to: address)
    #expect(
      await eventually(timeout: .seconds(10)) { await hearer.counters().connectFailures == 1 })
    #expect(await hearer.counters().dropped == 1)
    await #expect(throws: BlueZPeerTransportError.self) {
      try await hearer.send([4], to: address)
    }
    await hearer.shutdown()
    await medium.shutdown()
    await owner.shutdown()
  }

  /// A manager on `adapter` with a peer resolver whose only transport is GATT there.
  static func gattManager(bus: DBusBus, adapter: String, lostAfter: Duration) async throws -> (
    MessageManager, PeerResolver
  ) {
    let (manager, resolver, _) = try await gattPeer(
      bus: bus, adapter: adapter, lostAfter: lostAfter)
    return (manager, resolver)
  }

  /// As ``gattManager(bus:adapter:lostAfter:)``, with the manager's GATT transport.
  static func gattPeer(bus: DBusBus, adapter: String, lostAfter: Duration) async throws -> (
    MessageManager, PeerResolver, BlueZPeerTransport
  ) {
    var configuration = BlueZConfiguration(bus: bus, adapter: adapter)
    configuration.scanWatchdog = .seconds(5)
    var exchange = PeerExchangeStateMachine.Configuration()
    exchange.refreshInterval = lostAfter / 3
    // Notifications asked for (opt-in): the double refuses them, so the link falls back.
    var transportConfiguration = BlueZPeerTransportConfiguration(bluez: configuration)
    transportConfiguration.notifications = true
    // The one call that sets peer mode up: the GATT transport, and the medium connectable.
    let assembly = try await PeerResolver.assemble(
      [.bluez(transportConfiguration)],
      configuration: PeerResolverConfiguration(
        resolution: ResolutionConfiguration(lostAfter: lostAfter), exchange: exchange,
        tickInterval: .milliseconds(50)),
      logger: quietLogger("test.gatt.\(adapter)"))
    guard let transport = assembly.transports.first as? BlueZPeerTransport else {
      await assembly.resolver.shutdown()
      throw GattPeerSetupError(failures: assembly.failures.map { "\($0.error)" })
    }
    let resolver = assembly.resolver
    let manager = try await MessageManager(
      apiKey: "gatt-peer-test",
      configuration: .init(
        resolver: .peer(resolver), mediums: assembly.mediums,
        logger: quietLogger("test.manager.\(adapter)")))
    return (manager, resolver, transport)
  }

  /// The outbox notifies, and the double refuses `StartNotify` (it does not emulate
  /// notifications): Bob's link falls back to reads, and the message still crosses.
  @Test(.requires(.bluezDouble))
  func twoManagersMeetOverGATTWithAFullSizeMessageAndLoseItOnUnpublish() async throws {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    let (alice, aliceResolver) = try await Self.gattManager(
      bus: control.bus, adapter: "hci0", lostAfter: .seconds(3))
    let (bob, bobResolver, bobTransport) = try await Self.gattPeer(
      bus: control.bus, adapter: "hci1", lostAfter: .seconds(3))
    let content = Data((0..<Message.maximumContentBytes).map { UInt8(truncatingIfNeeded: $0 * 13) })
    let seen = Watched<[String]>([])
    let found = Watched<[Data]>([])
    let ble = Strategy(mediums: .ble)
    let publication = try await alice.publish(Message(content: content, type: "big")) {
      $0.strategy = ble
    }
    // Bob only scans: Alice must still learn nothing is needed from him, and he finds hers.
    let subscription = try await bob.subscribe(
      onFound: { message in
        found.withLock { $0.append(message.content) }
        seen.withLock { $0.append("found") }
      },
      onLost: { _ in seen.withLock { $0.append("lost") } }
    ) {
      $0.type = "big"
      $0.strategy = ble
    }
    #expect(await found.until(timeout: .seconds(20)) { $0 == [content] })
    #expect(await bobResolver.counters().dropped == 0)
    let counted = await bobTransport.counters()
    #expect(counted.subscriptionFailures >= 1 && counted.subscriptions == 0, "\(counted)")
    #expect(counted.chunksRead > 0 && counted.chunksNotifiedIn == 0, "\(counted)")
    let stats = try await control.gattStats()
    #expect(stats.connects >= 1, "no GATT connection: \(stats)")
    await publication.cancel()
    #expect(await seen.until(timeout: .seconds(20)) { $0 == ["found", "lost"] })
    await subscription.cancel()
    await alice.shutdown()
    await bob.shutdown()
    await aliceResolver.shutdown()
    await bobResolver.shutdown()
  }

  /// The owner unpublishes and shuts down at once (Ctrl-C on `nearby publish`): the update it
  /// queued for the hearer is read before its GATT service goes, so the hearer loses the
  /// message at once, not after its lostAfter (30 s here).
  @Test(.requires(.bluezDouble)) func anUnpublishJustBeforeShutdownStillReachesTheHearer()
    async throws
  {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    let (alice, aliceResolver) = try await Self.gattManager(
      bus: control.bus, adapter: "hci0", lostAfter: .seconds(30))
    let (bob, bobResolver, bobTransport) = try await Self.gattPeer(
      bus: control.bus, adapter: "hci1", lostAfter: .seconds(30))
    let events = Watched<[String]>([])
    let publication = try await alice.publish(Message(text: "going", type: "bye")) {
      $0.strategy = Strategy(mediums: .ble, mode: .broadcast)
    }
    let subscription = try await bob.subscribe(
      onFound: { _ in events.withLock { $0.append("found") } },
      onLost: { _ in events.withLock { $0.append("lost") } }
    ) {
      $0.type = "bye"
      $0.strategy = Strategy(mediums: .ble, mode: .scan)
    }
    #expect(await events.until(timeout: .seconds(20)) { $0 == ["found"] })
    // The hearer's link settles into its slow poll (past the 3 s answer window of its last
    // write): the owner's update then waits for a poll up to a second away.
    #expect(await eventually { await bobTransport.engine.anyLinkSlowPolling })
    await publication.cancel()
    await alice.shutdown()
    await aliceResolver.shutdown()
    #expect(
      await events.until(timeout: .seconds(10)) { $0 == ["found", "lost"] },
      "after the owner's unpublish and shutdown: \(events.value)")
    await subscription.cancel()
    await bob.shutdown()
    await bobResolver.shutdown()
  }

  /// An owner whose server takes the hearer as change-unaware answers every read and write
  /// on that link "database out of sync" for as long as the link lasts (the real bluetoothd
  /// does, to a hearer that missed a Service Changed indication), and connecting again to a
  /// device that is connected keeps the same link. The hearer lets the link go and makes a
  /// new one, which starts aware: what the owner publishes next is still found.
  @Test(.requires(.bluezDouble)) func aHearerRefusedAsOutOfSyncLetsTheLinkGoAndLinksAgain()
    async throws
  {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    let (alice, aliceResolver) = try await Self.gattManager(
      bus: control.bus, adapter: "hci0", lostAfter: .seconds(10))
    let (bob, bobResolver, bobTransport) = try await Self.gattPeer(
      bus: control.bus, adapter: "hci1", lostAfter: .seconds(10))
    let found = Watched<[String]>([])
    let broadcast = Strategy(mediums: .ble, mode: .broadcast)
    let first = try await alice.publish(Message(text: "first", type: "sync")) {
      $0.strategy = broadcast
    }
    let subscription = try await bob.subscribe(
      onFound: { message in found.withLock { $0.append(message.text ?? "") } }
    ) {
      $0.type = "sync"
      $0.strategy = Strategy(mediums: .ble, mode: .scan)
    }
    #expect(await found.until(timeout: .seconds(20)) { $0 == ["first"] })
    let linksBefore = try await control.gattStats().connects
    #expect(try await control.gattOutOfSync("hci0") == 1, "bob's link to alice")
    let second = try await alice.publish(Message(text: "second", type: "sync")) {
      $0.strategy = broadcast
    }
    let foundSecond = await found.until(timeout: .seconds(20)) { $0.contains("second") }
    let bobCounted = await bobTransport.counters()
    #expect(foundSecond, "found \(found.value); bob's GATT \(bobCounted)")
    #expect(try await control.gattStats().connects > linksBefore, "no new link was made")
    await subscription.cancel()
    await first.cancel()
    await second.cancel()
    await alice.shutdown()
    await bob.shutdown()
    await aliceResolver.shutdown()
    await bobResolver.shutdown()
  }

  /// bluetoothd restarting forgets every application: the transport registers its service
  /// again once bluetoothd is back.
  @Test(.requires(.bluezDouble)) func theServiceIsRegisteredAgainAfterABluetoothdRestart()
    async throws
  {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    let transport = try await BlueZPeerTransport(
      configuration: .init(bluez: BlueZConfiguration(bus: control.bus, adapter: "hci0")),
      logger: Self.quietLogger("test.gatt.restart"))
    func apps() async -> [DBusObjectPath] {
      (try? await control.gattApps("hci0")) ?? []
    }
    #expect(await apps().count == 1)
    try await control.restart(downFor: .milliseconds(300))
    // Gone (the double restarts 20 ms after answering), then back with no application.
    let gone = await eventually() {
      (try? await control.connection.nameOwner(of: "org.bluez")) == nil
    }
    #expect(gone, "the double did not restart")
    #expect(try await control.waitForBlueZ())
    let registeredAgain = await eventually(timeout: .seconds(10)) { await apps().count == 1 }
    #expect(registeredAgain, "the peer service was not registered again")
    await transport.shutdown()
  }
}

/// The GATT transport of a test's peer did not open.
struct GattPeerSetupError: Error {
  var failures: [String]
}
