import Core
import Foundation
import MediumTestKit
import NearbyServer
import PeerResolution
import Resolution
import ResolverClient
import ServerStorage
import Strategy
import Synchronization
import TestSupport
import Testing
import NearbyTesting

/// A device of the server (a phone whose page reports over HTTP) and a device with no server
/// (a box running `nearby` in peer mode) on one in-memory air, the server joined to the box's
/// peer network by its bridge: they meet when they hear each other, both ways, and lose each
/// other when they stop.
@Suite("The server's peer bridge")
struct PeerBridgeTests {
  /// Both sides' `lostAfter`: long enough that a stall on a loaded machine does not make a
  /// message flap (4 s did once, in a CI run with the PostgreSQL suites beside it: the box
  /// lost the phone and found it again), short enough to see lost within the waits below.
  static let lostAfter: Duration = .seconds(10)

  /// The two worlds: a server joined to `network`, and what each device found and lost.
  final class Worlds: Sendable {
    let air: Air
    let network = MemoryPeerNetwork()
    let server: ServerHarness
    private let seen = FoundLostRecorder()
    private let resolvers = Mutex<[String: PeerResolver]>([:])

    init() async throws {
      var configuration = Air.Configuration()
      configuration.advertiseInterval = .milliseconds(50)
      air = Air(configuration: configuration)
      let transport = await network.makeTransport(name: "server")
      server = try await ServerHarness.start(
        lostAfter: PeerBridgeTests.lostAfter,
        peerBridge: { key in
          PeerBridgeConfiguration(
            apiKey: key, transports: [transport], peer: PeerBridgeTests.peerConfiguration())
        })
    }

    /// A device of the server at `x`, with the peers' key (a client key of the project).
    func phone(_ name: String, at x: Double = 0) async throws -> MessageManager {
      await air.place(name, at: Air.Position(x: x))
      var client = ResolverClient.Configuration(
        url: server.url, credentialStore: InMemoryCredentialStore())
      client.initialBackoff = .milliseconds(50)
      client.maximumBackoff = .milliseconds(400)
      return try await MessageManager(
        apiKey: try #require(server.peerBridge?.apiKey),
        configuration: .init(
          resolver: .server(client), mediums: MediumProvider.air(air, device: name)))
    }

    /// A device with no server at `x`: its own peer resolver on the peer network.
    func box(_ name: String, at x: Double = 0, apiKey: String? = nil) async throws
      -> MessageManager
    {
      await air.place(name, at: Air.Position(x: x))
      let resolver = try PeerResolver(
        transports: [await network.makeTransport(name: name)],
        configuration: PeerBridgeTests.peerConfiguration())
      resolvers.withLock { $0[name] = resolver }
      return try await MessageManager(
        apiKey: try apiKey ?? #require(server.peerBridge?.apiKey),
        configuration: .init(
          resolver: .peer(resolver), mediums: MediumProvider.air(air, device: name)))
    }

    func watch(
      _ manager: MessageManager, as name: String, type: String,
      strategy: Strategy = .default
    ) async throws -> Subscription {
      try await seen.subscribe(manager, as: name) {
        $0.type = type
        $0.strategy = strategy
      }
    }

    /// The peer resolver of the box `name`.
    func resolver(of name: String) -> PeerResolver? { resolvers.withLock { $0[name] } }

    func seen(by device: String) -> [String] { seen.history(of: device) }

    /// Waits until `condition` holds, asking it now and after each thing a device found or
    /// lost, for at most `timeout`; returns whether it held.
    func until(
      timeout: Duration = defaultWaitBound, _ condition: () throws -> Bool
    ) async rethrows -> Bool {
      try await seen.until(timeout: timeout, condition)
    }
  }

  static func peerConfiguration() -> PeerResolverConfiguration {
    var exchange = PeerExchangeStateMachine.Configuration()
    exchange.refreshInterval = lostAfter / 4
    exchange.queryTimeout = .milliseconds(500)
    return PeerResolverConfiguration(
      resolution: ResolutionConfiguration(lostAfter: lostAfter), exchange: exchange,
      tickInterval: .milliseconds(50))
  }

  @Test func aPhoneOfTheServerAndAPeerBoxFindAndLoseEachOther() async throws {
    let worlds = try await Worlds()
    let phone = try await worlds.phone("phone")
    let box = try await worlds.box("box", at: 1)
    let phoneName = try await phone.publish(Message(text: "Phone", type: "name"))
    let boxName = try await box.publish(Message(text: "Box", type: "name"))
    let phoneWatch = try await worlds.watch(phone, as: "phone", type: "name")
    let boxWatch = try await worlds.watch(box, as: "box", type: "name")
    try #require(
      await worlds.until(timeout: .seconds(40)) {
        worlds.seen(by: "phone") == ["found Box"] && worlds.seen(by: "box") == ["found Phone"]
      }, "phone: \(worlds.seen(by: "phone")), box: \(worlds.seen(by: "box"))")
    await worlds.air.block("phone", "box")
    try #require(
      await worlds.until(timeout: .seconds(40)) {
        worlds.seen(by: "phone") == ["found Box", "lost Box"]
          && worlds.seen(by: "box") == ["found Phone", "lost Phone"]
      }, "phone: \(worlds.seen(by: "phone")), box: \(worlds.seen(by: "box"))")
    withExtendedLifetime((phoneName, boxName, phoneWatch, boxWatch)) {}
    await phone.shutdown()
    await box.shutdown()
    await worlds.server.shutdown()
  }

  /// The seed's cast, across the two worlds and in both roles: the device that only listens
  /// (scan) hears the one that only broadcasts, and the broadcaster's subscription finds the
  /// listener's publication. Only the listener's sighting can cause it.
  @Test(arguments: [true, false])
  func theCastCrossesEitherWay(phoneCasts: Bool) async throws {
    let worlds = try await Worlds()
    let phone = try await worlds.phone("phone")
    let box = try await worlds.box("box", at: 1)
    let (caster, screen) = phoneCasts ? (phone, box) : (box, phone)
    let screenName = phoneCasts ? "box" : "phone"
    let cast = try await caster.publish(Message(text: "cast", type: "tv")) {
      $0.strategy = Strategy(mediums: .audio, mode: .scan)
    }
    let watch = try await worlds.watch(
      screen, as: screenName, type: "tv", strategy: Strategy(mediums: .audio, mode: .broadcast))
    try #require(
      await worlds.until(timeout: .seconds(40)) { worlds.seen(by: screenName) == ["found cast"] },
      "\(screenName): \(worlds.seen(by: screenName))")
    await cast.cancel()
    try #require(
      await worlds.until(timeout: .seconds(40)) {
        worlds.seen(by: screenName) == ["found cast", "lost cast"]
      }, "\(screenName): \(worlds.seen(by: screenName))")
    withExtendedLifetime((cast, watch)) {}
    await phone.shutdown()
    await box.shutdown()
    await worlds.server.shutdown()
  }

  /// A box of another project hears the phone and is heard: nothing crosses (its exchange is
  /// sealed under another key, which the bridge cannot open, nor the box the bridge's).
  @Test func aBoxOfAnotherProjectMeetsNoOne() async throws {
    let worlds = try await Worlds()
    let phone = try await worlds.phone("phone")
    let stranger = try await worlds.box("stranger", at: 1, apiKey: "another-project")
    let phoneName = try await phone.publish(Message(text: "Phone", type: "name"))
    let strangerName = try await stranger.publish(Message(text: "Stranger", type: "name"))
    let phoneWatch = try await worlds.watch(phone, as: "phone", type: "name")
    let strangerWatch = try await worlds.watch(stranger, as: "stranger", type: "name")
    // A third device of the project shows the exchange works meanwhile.
    let box = try await worlds.box("box", at: 2)
    let boxName = try await box.publish(Message(text: "Box", type: "name"))
    try #require(
      await worlds.until(timeout: .seconds(40)) { worlds.seen(by: "phone") == ["found Box"] },
      "phone: \(worlds.seen(by: "phone"))")
    // The stranger did ask (its who-has for the phone's token reached the project's peers, the
    // bridge among them, and was refused as another project's), and was asked in vain.
    let boxResolver = try #require(worlds.resolver(of: "box"))
    let strangerResolver = try #require(worlds.resolver(of: "stranger"))
    try #require(
      await eventually(timeout: .seconds(40)) {
        let (box, stranger) = (
          await boxResolver.counters(), await strangerResolver.counters()
        )
        return box.droppedOtherProject > 0 && stranger.droppedOtherProject > 0
      })
    #expect(worlds.seen(by: "phone") == ["found Box"])
    #expect(worlds.seen(by: "stranger").isEmpty)
    withExtendedLifetime((phoneName, strangerName, phoneWatch, strangerWatch, boxName)) {}
    await phone.shutdown()
    await stranger.shutdown()
    await box.shutdown()
    await worlds.server.shutdown()
  }

  /// Every peer holds the bridge's key: an admin key (or one the server does not know) is
  /// refused at start, saying why.
  @Test func theBridgeTakesOnlyAClientKeyOfTheServer() async throws {
    let network = MemoryPeerNetwork()
    let transport = await network.makeTransport(name: "server")
    do {
      let server = try await ServerHarness.start(
        peerBridge: { PeerBridgeConfiguration(apiKey: $0, transports: [transport]) },
        peerRole: .admin)
      await server.shutdown()
      Issue.record("a server joined a peer network with an admin key")
    } catch {
      #expect("\(error)".contains("admin key"), "\(error)")
    }
    let other = await network.makeTransport(name: "other")
    do {
      let server = try await ServerHarness.start(
        peerBridge: { _ in PeerBridgeConfiguration(apiKey: "nk_unknown", transports: [other]) })
      await server.shutdown()
      Issue.record("a server joined a peer network with a key it does not know")
    } catch {
      #expect("\(error)".contains("not an active key"), "\(error)")
    }
  }
}
