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

  @Test("the network's log keeps the newest datagrams within its count and byte bounds")
  func logIsBounded() async throws {
    let network = MemoryPeerNetwork(logCapacity: 3, logByteCapacity: 250)
    let first = await network.makeTransport(name: "first")
    let second = await network.makeTransport(name: "second")
    for value in 0..<5 { try await first.send([UInt8(value)], to: second.address) }
    #expect(await network.log.map(\.bytes) == [[2], [3], [4]])
    try await first.send(Array(repeating: 7, count: 200), to: second.address)
    try await first.send(Array(repeating: 8, count: 100), to: second.address)
    // Four datagrams, 302 bytes: the oldest go until both bounds hold.
    #expect(await network.log.map(\.bytes.count) == [100])
    try await first.send(Array(repeating: 9, count: 1_000), to: second.address)
    #expect(await network.log.map(\.bytes.count) == [1_000])
    await first.shutdown()
    await second.shutdown()
  }
}
