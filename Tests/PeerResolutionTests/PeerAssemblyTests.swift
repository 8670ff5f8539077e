@_spi(Resolver) import Core
import MediumTestKit
import PeerResolution
import Testing

/// Peer mode set up in one call: what each carrier opens, which mediums come back and in what
/// order, and what a carrier that cannot open leaves.
@Suite("Peer assembly")
struct PeerAssemblyTests {
  struct Refused: Error, CustomStringConvertible {
    var description: String { "refused" }
  }

  /// A provider that is only named: the assembly hands it on, never makes it.
  static func medium(_ name: String) -> MediumProvider {
    MediumProvider(name: name) { _ in throw Refused() }
  }

  /// A carrier over the in-memory network, or one whose transport refuses to open.
  static func carrier(
    _ name: String, on network: MemoryPeerNetwork, opens: Bool = true
  ) -> PeerCarrier {
    PeerCarrier(name: name, mediumWithoutTransport: medium("\(name) without transport")) { _ in
      guard opens else { throw Refused() }
      return PeerCarrier.Opened(
        transport: await network.makeTransport(name: name), medium: medium("\(name) carrying"),
        description: "\(name) over memory")
    }
  }

  @Test("the carriers' mediums come first, each set up for its transport, then the others")
  func mediumsAndTransportsInOrder() async throws {
    let network = MemoryPeerNetwork()
    let assembly = try await PeerResolver.assemble(
      [Self.carrier("lan", on: network), Self.carrier("ble", on: network)],
      otherMediums: [Self.medium("audio")])
    #expect(assembly.mediums.map(\.name) == ["lan carrying", "ble carrying", "audio"])
    #expect(assembly.descriptions == ["lan over memory", "ble over memory"])
    #expect(assembly.transports.count == 2)
    #expect(assembly.failures.isEmpty)
    #expect(assembly.opened("lan") && assembly.opened("ble"))
    await assembly.resolver.shutdown()
  }

  @Test("a carrier that cannot open is named, and its medium runs without the transport")
  func aFailedCarrierKeepsItsMedium() async throws {
    let network = MemoryPeerNetwork()
    let assembly = try await PeerResolver.assemble(
      [Self.carrier("lan", on: network), Self.carrier("ble", on: network, opens: false)])
    #expect(assembly.mediums.map(\.name) == ["lan carrying", "ble without transport"])
    #expect(assembly.failures.map(\.carrier) == ["ble"])
    #expect(assembly.opened("lan") && !assembly.opened("ble"))
    #expect(assembly.transports.count == 1)
    await assembly.resolver.shutdown()
  }

  @Test("with no transport open there is no resolver: the error names every carrier")
  func noTransportIsAnError() async throws {
    let network = MemoryPeerNetwork()
    let error = await #expect(throws: PeerAssemblyError.self) {
      try await PeerResolver.assemble(
        [
          Self.carrier("lan", on: network, opens: false),
          Self.carrier("ble", on: network, opens: false),
        ])
    }
    #expect(error?.failures.map(\.carrier) == ["lan", "ble"])
    #expect(error?.description == "no peer transport could open: lan: refused; ble: refused")
  }

  @Test("a wrapped carrier hands on what it opens through the wrappers")
  func wrappingReachesTransportAndMedium() async throws {
    let network = MemoryPeerNetwork()
    let carrier = Self.carrier("lan", on: network).wrapped(
      medium: { MediumProvider(name: "observed \($0.name)", make: $0.make) })
    let assembly = try await PeerResolver.assemble([carrier])
    #expect(assembly.mediums.map(\.name) == ["observed lan carrying"])
    let failing = Self.carrier("ble", on: network, opens: false).wrapped(
      medium: { MediumProvider(name: "observed \($0.name)", make: $0.make) })
    #expect(failing.mediumWithoutTransport?.name == "observed ble without transport")
    await assembly.resolver.shutdown()
  }
}
