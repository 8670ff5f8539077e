import Core
import Foundation
import LANMulticast
import MediumTestKit
import PeerResolution
import Resolution
import Strategy
import TestSupport
import Testing
import Tokens

@testable import LANMulticast
import NearbyTesting

/// Peer resolution over real UDP on loopback: each manager with its own peer resolver over a
/// `LANPeerTransport`, and a LAN medium that announces the transport's port. No server and no
/// shared resolver.
@Suite("Peer resolution over the LAN on loopback")
struct PeerResolutionOverLANTests {
  @Test("an announcement carries the peer port; the hearer's sighting carries the way back")
  func returnPath() async throws {
    var configuration = Loopback.configuration()
    configuration.peerPort = 4242
    let speaker = try LANMulticastMedium(configuration: configuration)
    configuration.peerPort = nil
    let listener = try LANMulticastMedium(configuration: configuration)
    let heard = StreamRecorder(listener.sightings)
    try await listener.startScanning()
    let token = Token.random()
    try await speaker.transmit(token)
    let sighting = await heard.first { $0.token == token }
    // The source address is the interface's (not always 127.0.0.1 on lo); the port is the
    // one announced.
    let returnPath = try #require(sighting?.returnPath)
    #expect(returnPath.transport == LANPeerAddress.kind)
    #expect(returnPath.bytes.count == 7 && returnPath.bytes.first == 4)
    #expect(Array(returnPath.bytes.suffix(2)) == [0x10, 0x92])
    await speaker.shutdown()
    await listener.shutdown()
  }

  @Test("the peer port round-trips in the datagram; 0 means none")
  func datagramPeerPort() throws {
    let datagram = Datagram(
      token: Token(value: 1), sentAt: 2, sender: 3, counter: 4, peerPort: 0xbeef)
    let bytes = datagram.encoded(key: nil)
    #expect(bytes[6] == 0xbe && bytes[7] == 0xef)
    #expect(try Datagram(checking: bytes, key: nil).peerPort == 0xbeef)
    let without = Datagram(token: Token(value: 1), sentAt: 2, sender: 3, counter: 4)
    #expect(try Datagram(checking: without.encoded(key: nil), key: nil).peerPort == 0)
  }

  /// A manager with its own peer resolver over a LAN transport on loopback, and a LAN medium
  /// announcing the transport's port. `lostAfter` is long (10 s) so that a scheduling stall of
  /// a loaded machine cannot make a message flap between found and lost: the lost these tests
  /// expect comes from an unpublish, at once. A question waits 5 s for its answer, so that an
  /// answer a loaded machine delays (a plain `swift test` runs every target at once on two
  /// cores) is not asked again and backed off; the tests wait up to 30 s.
  static func manager(groupPort: UInt16, mediumPort: UInt16) async throws -> (
    MessageManager, PeerResolver
  ) {
    var medium = Loopback.configuration(port: mediumPort)
    // As `nearby` does in peer mode: announcements sealed under the project's key.
    medium.sharedKey = try LANMulticastKey(bytes: PeerKeys(apiKey: "lan-peer-test").announcementKey)
    var exchange = PeerExchangeStateMachine.Configuration()
    exchange.queryTimeout = .seconds(5)
    // The one call that sets peer mode up: the transport, and the medium announcing its port.
    let assembly = try await PeerResolver.assemble(
      [
        .lan(medium: medium, transport: LANPeerConfiguration(groupPort: groupPort, interface: "lo"))
      ],
      configuration: PeerResolverConfiguration(
        resolution: ResolutionConfiguration(lostAfter: .seconds(10)), exchange: exchange,
        tickInterval: .milliseconds(50)))
    let resolver = assembly.resolver
    let manager = try await MessageManager(
      apiKey: "lan-peer-test",
      configuration: .init(resolver: .peer(resolver), mediums: assembly.mediums))
    return (manager, resolver)
  }

  @Test("a message of the full 100 KiB crosses UDP in fragments")
  func fullSizeMessage() async throws {
    let (groupPort, mediumPort) = (Loopback.randomGroupPort(), Loopback.randomPort())
    let (alice, aliceResolver) = try await Self.manager(
      groupPort: groupPort, mediumPort: mediumPort)
    let (bob, bobResolver) = try await Self.manager(groupPort: groupPort, mediumPort: mediumPort)
    let content = Data((0..<Message.maximumContentBytes).map { UInt8(truncatingIfNeeded: $0 * 31) })
    let found = Watched<[Data]>([])
    let publication = try await alice.publish(Message(content: content)) {
      $0.strategy = Strategy(mediums: .lan)
    }
    let subscription = try await bob.subscribe(
      onFound: { message in found.withLock { $0.append(message.content) } }, onLost: { _ in }
    ) { $0.strategy = Strategy(mediums: .lan) }
    #expect(await found.until(timeout: .seconds(30)) { $0 == [content] })
    #expect(await bobResolver.counters().dropped == 0)
    await publication.cancel()
    await subscription.cancel()
    await alice.shutdown()
    await bob.shutdown()
    await aliceResolver.shutdown()
    await bobResolver.shutdown()
  }

  @Test("two managers find each other's messages and lose them on unpublish, with no server")
  func findAndLose() async throws {
    let (groupPort, mediumPort) = (Loopback.randomGroupPort(), Loopback.randomPort())
    let seen = Watched<[String]>([])
    let (alice, aliceResolver) = try await Self.manager(
      groupPort: groupPort, mediumPort: mediumPort)
    let (bob, bobResolver) = try await Self.manager(groupPort: groupPort, mediumPort: mediumPort)
    let publication = try await alice.publish(Message(text: "over udp")) {
      $0.strategy = Strategy(mediums: .lan)
    }
    let subscription = try await bob.subscribe(
      onFound: { message in seen.withLock { $0.append("found \(message.text ?? "")") } },
      onLost: { message in seen.withLock { $0.append("lost \(message.text ?? "")") } }
    ) { $0.strategy = Strategy(mediums: .lan) }
    #expect(await seen.until(timeout: .seconds(30)) { $0 == ["found over udp"] })
    // Asked directly at the announced port: nothing was dropped on either side.
    #expect(await aliceResolver.counters().dropped == 0)
    #expect(await bobResolver.counters().dropped == 0)
    await publication.cancel()
    let lost = await seen.until(timeout: .seconds(30)) {
      $0 == ["found over udp", "lost over udp"]
    }
    // What each side counted says where a missing lost went (not sent, dropped or ignored).
    let (sent, heard) = (await aliceResolver.counters(), await bobResolver.counters())
    #expect(lost, "Bob saw \(seen.value); Alice sent \(sent); Bob received \(heard)")
    await subscription.cancel()
    await alice.shutdown()
    await bob.shutdown()
    await aliceResolver.shutdown()
    await bobResolver.shutdown()
  }
}
