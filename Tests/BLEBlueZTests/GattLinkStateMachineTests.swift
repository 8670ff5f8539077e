@testable import BLEBlueZ
import Core
import Testing

/// The hearer's side of a GATT link, on instants (no D-Bus, no sleeping).
@Suite struct GattLinkStateMachineTests {
  let start = NearbyClock.Instant(offset: .seconds(100))

  func at(_ milliseconds: Int) -> NearbyClock.Instant { start + .milliseconds(milliseconds) }

  @Test func aQueuedDatagramConnectsWritesItsChunksThenReadsAtOnce() {
    var machine = GattLinkStateMachine(now: at(0))
    let value11 = machine.next(now: at(0))
    #expect(value11 == .idle)
    let value13 = machine.enqueueing(Array(repeating: 7, count: 30), now: at(0))
    #expect(value13 == nil)
    let value15 = machine.next(now: at(0))
    #expect(value15 == .connect)
    let value17 = machine.next(now: at(1))
    #expect(value17 == .busy)
    // MTU 23: 20 bytes a write: flags, length (2 bytes), 17 of the datagram's.
    machine.connected(mtu: 23, now: at(10))
    guard case .write(let first) = machine.next(now: at(10)) else {
      Issue.record("no first write")
      return
    }
    #expect(first.count == 20)
    #expect(first[0] == GattPeerProfile.startFlag)
    machine.wrote(now: at(11))
    guard case .write(let second) = machine.next(now: at(11)) else {
      Issue.record("no second write")
      return
    }
    #expect(second.count == 16)
    #expect(second[1] == 0 && second[2] == 13)
    #expect(second[0] == GattPeerProfile.endFlag)
    machine.wrote(now: at(12))
    // The whole datagram is out: read its answer now.
    let value36 = machine.next(now: at(12))
    #expect(value36 == .read)
  }

  @Test func emptyReadsBackOffThenSlowDownThenTheQuietLinkDisconnects() {
    var configuration = GattLinkStateMachine.Configuration()
    configuration.idleTimeout = .seconds(10)
    var machine = GattLinkStateMachine(configuration: configuration, now: at(0))
    _ = machine.enqueueing([1], now: at(0))
    _ = machine.next(now: at(0))
    #expect(!machine.isSlowPolling(at: at(0)))
    machine.connected(mtu: 517, now: at(0))
    _ = machine.next(now: at(0))
    machine.wrote(now: at(0))
    #expect(!machine.isSlowPolling(at: at(0)))
    let value49 = machine.next(now: at(0))
    #expect(value49 == .read)
    machine.read([], now: at(0))
    let value52 = machine.next(now: at(0))
    #expect(value52 == .wait(until: at(20)))
    let value54 = machine.next(now: at(20))
    #expect(value54 == .read)
    machine.read([], now: at(20))
    let value57 = machine.next(now: at(20))
    #expect(value57 == .wait(until: at(60)))
    // A chunk: read again at once.
    let value60 = machine.next(now: at(60))
    #expect(value60 == .read)
    machine.read([GattPeerProfile.startFlag | GattPeerProfile.endFlag, 9], now: at(60))
    let value63 = machine.next(now: at(60))
    #expect(value63 == .read)
    // Past the answer window (3 s after the write), once a second.
    #expect(!machine.isSlowPolling(at: at(2_999)))
    #expect(machine.isSlowPolling(at: at(3_000)))
    machine.read([], now: at(3_500))
    let value67 = machine.next(now: at(3_500))
    #expect(value67 == .wait(until: at(4_500)))
    // Quiet for the idle timeout since the last chunk: disconnect.
    var now = 4_500
    while now < 10_060 {
      if machine.next(now: at(now)) == .read { machine.read([], now: at(now)) }
      now += 500
    }
    let value75 = machine.next(now: at(10_060))
    #expect(value75 == .disconnect)
    machine.disconnected(now: at(10_100))
    let value78 = machine.next(now: at(10_100))
    #expect(value78 == .idle)
    #expect(!machine.isLinked)
    #expect(!machine.isSlowPolling(at: at(10_100)))
  }

  @Test func aFailedConnectionDropsTheQueueAndRefusesForTheBackoff() {
    var machine = GattLinkStateMachine(now: at(0))
    _ = machine.enqueueing([1], now: at(0))
    _ = machine.enqueueing([2], now: at(0))
    let value87 = machine.next(now: at(0))
    #expect(value87 == .connect)
    machine.connectFailed(now: at(100))
    #expect(machine.dropped == 2)
    let value91 = machine.next(now: at(100))
    #expect(value91 == .idle)
    let value93 = machine.enqueueing([3], now: at(200))
    #expect(value93 == .backingOff(until: at(5_100)))
    let value95 = machine.enqueueing([3], now: at(5_100))
    #expect(value95 == nil)
    let value97 = machine.next(now: at(5_100))
    #expect(value97 == .connect)
  }

  @Test func theQueueIsBounded() {
    var configuration = GattLinkStateMachine.Configuration()
    configuration.maximumQueuedDatagrams = 2
    configuration.maximumQueuedBytes = 100
    var machine = GattLinkStateMachine(configuration: configuration, now: at(0))
    let value106 = machine.enqueueing(Array(repeating: 0, count: 60), now: at(0))
    #expect(value106 == nil)
    let value108 = machine.enqueueing(Array(repeating: 0, count: 60), now: at(0))
    #expect(value108 == .queueFull)
    let value110 = machine.enqueueing(Array(repeating: 0, count: 40), now: at(0))
    #expect(value110 == nil)
    let value112 = machine.enqueueing([0], now: at(0))
    #expect(value112 == .queueFull)
  }

  @Test func aFailedWriteLetsTheLinkGoRemakesItOnceAndStartsTheDatagramOver() {
    var machine = GattLinkStateMachine(now: at(0))
    let datagram = Array(repeating: UInt8(1), count: 600)
    _ = machine.enqueueing(datagram, now: at(0))
    _ = machine.next(now: at(0))
    machine.connected(mtu: 517, now: at(0))
    let first = machine.next(now: at(0))
    machine.wrote(now: at(1))
    _ = machine.next(now: at(1))
    // The second chunk fails: let the link go, connect again, then the datagram from its
    // first chunk.
    machine.operationFailed(now: at(5))
    #expect(machine.isLinked)
    let letGo = machine.next(now: at(5))
    #expect(letGo == .disconnect)
    #expect(machine.next(now: at(5)) == .busy)
    machine.disconnected(now: at(5))
    #expect(!machine.isLinked)
    let reconnect = machine.next(now: at(5))
    #expect(reconnect == .connect)
    machine.connected(mtu: 517, now: at(6))
    let again = machine.next(now: at(6))
    #expect(again == first)
    #expect(machine.dropped == 0)
    // Failing again right after the link was remade drops it, and lets the link go.
    machine.operationFailed(now: at(7))
    #expect(machine.dropped == 1)
    let letGoAgain = machine.next(now: at(7))
    #expect(letGoAgain == .disconnect)
    machine.disconnected(now: at(7))
    let after = machine.next(now: at(7))
    #expect(after == .idle)
  }

  @Test func aFailedReadLetsTheLinkGoAndReconnectsOnceToReadAgain() {
    var machine = GattLinkStateMachine(now: at(0))
    _ = machine.enqueueing([1], now: at(0))
    _ = machine.next(now: at(0))
    machine.connected(mtu: 517, now: at(0))
    _ = machine.next(now: at(0))
    machine.wrote(now: at(0))
    let read = machine.next(now: at(0))
    #expect(read == .read)
    machine.operationFailed(now: at(3))
    let letGo = machine.next(now: at(3))
    #expect(letGo == .disconnect)
    machine.disconnected(now: at(3))
    let reconnect = machine.next(now: at(3))
    #expect(reconnect == .connect)
    machine.connected(mtu: 517, now: at(4))
    let readAgain = machine.next(now: at(4))
    #expect(readAgain == .read)
    machine.operationFailed(now: at(5))
    let letGoAgain = machine.next(now: at(5))
    #expect(letGoAgain == .disconnect)
    machine.disconnected(now: at(5))
    let after = machine.next(now: at(5))
    #expect(after == .idle)
  }
}
