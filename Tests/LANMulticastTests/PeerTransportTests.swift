import Core
import Glibc
import MediumTestKit
import Testing

@testable import LANMulticast

@Suite("LAN peer transport on loopback")
struct PeerTransportTests {
  static func pair() throws -> PeerTransportConformance.Pair {
    let configuration = LANPeerConfiguration(
      groupPort: Loopback.randomGroupPort(), interface: "lo")
    let first = try LANPeerTransport(configuration: configuration)
    let second = try LANPeerTransport(configuration: configuration)
    return PeerTransportConformance.Pair(
      first: first,
      firstAddress: try #require(LANPeerAddress.make(ipv4: [127, 0, 0, 1], port: first.port)),
      second: second,
      secondAddress: try #require(LANPeerAddress.make(ipv4: [127, 0, 0, 1], port: second.port)))
  }

  @Test(arguments: PeerTransportConformance.Check.allCases)
  func conforms(_ check: PeerTransportConformance.Check) async throws {
    try await PeerTransportConformance(makePair: { try Self.pair() }).run(check)
  }

  @Test("an address of another kind or form is refused, and so is sending after shutdown")
  func refusals() async throws {
    let pair = try Self.pair()
    let memory = try #require(PeerAddress(transport: "memory", bytes: [1]))
    await #expect(throws: LANMulticastError.self) { try await pair.first.send([1], to: memory) }
    await pair.first.shutdown()
    await #expect(throws: LANMulticastError.shutDown) {
      try await pair.first.send([1], to: pair.secondAddress)
    }
    await pair.second.shutdown()
  }

  @Test("the unicast socket's datagrams stay on the segment: IP_TTL and IP_MULTICAST_TTL are 1")
  func hopLimit() throws {
    let sockets = try PeerSockets.open(
      LANPeerConfiguration(groupPort: Loopback.randomGroupPort(), interface: "lo"))
    defer { sockets.close() }
    for name in [IP_TTL, IP_MULTICAST_TTL] {
      var value: Int32 = 0
      var length = socklen_t(MemoryLayout<Int32>.size)
      #expect(getsockopt(sockets.unicast, Int32(IPPROTO_IP), name, &value, &length) == 0)
      #expect(value == 1)
    }
  }
}
