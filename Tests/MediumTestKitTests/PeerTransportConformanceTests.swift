import Core
import MediumTestKit
import Testing

@Suite("PeerTransportConformance")
struct PeerTransportConformanceTests {
  @Test(arguments: PeerTransportConformance.Check.allCases)
  func memoryTransportConforms(_ check: PeerTransportConformance.Check) async throws {
    try await PeerTransportConformance(makePair: {
      let network = MemoryPeerNetwork()
      let first = await network.makeTransport(name: "first")
      let second = await network.makeTransport(name: "second")
      return PeerTransportConformance.Pair(
        first: first, firstAddress: first.address, second: second, secondAddress: second.address)
    }).run(check)
  }

  @Test("a transport that drops what it is given fails the delivery checks")
  func brokenTransportFails() async throws {
    let conformance = PeerTransportConformance(timeout: .milliseconds(200)) {
      let network = MemoryPeerNetwork()
      let first = await network.makeTransport(name: "first")
      let second = await network.makeTransport(name: "second")
      // Cut between the two: nothing arrives.
      await network.partition(first.address, second.address)
      return PeerTransportConformance.Pair(
        first: first, firstAddress: first.address, second: second, secondAddress: second.address)
    }
    await #expect(throws: PeerTransportConformanceFailure.self) {
      try await conformance.run(.unicastArrives)
    }
    await #expect(throws: PeerTransportConformanceFailure.self) {
      try await conformance.run(.multicastAsDeclared)
    }
  }
}
