@testable import BLEBlueZ
import Core
import Testing

/// The owner's side: outboxes per connected hearer, read long, reassembly and bounds, on
/// instants.
@Suite struct GattServiceStateTests {
  let start = NearbyClock.Instant(offset: .seconds(100))
  let alice = "/org/bluez/hci0/dev_00_AA_01_00_00_01"
  let bob = "/org/bluez/hci0/dev_00_AA_01_00_00_02"

  func at(_ seconds: Int) -> NearbyClock.Instant { start + .seconds(seconds) }

  /// Reads `client`'s outbox the way bluetoothd's client reads long at `mtu`, chunk by chunk,
  /// until it is empty; the datagrams put back together.
  func drain(_ state: inout GattServiceState, _ client: String, mtu: Int) throws -> [[UInt8]] {
    var datagrams: [[UInt8]] = []
    var reassembly = GattReassembly()
    while true {
      var value = try state.read(by: client, offset: 0, now: at(1))
      if value.isEmpty { return datagrams }
      // ATT: a response of MTU − 1 bytes asks for the rest at that offset.
      var piece = Array(value.prefix(mtu - 1))
      var chunk = piece
      while piece.count == mtu - 1 {
        value = try state.read(by: client, offset: chunk.count, now: at(1))
        piece = Array(value.prefix(mtu - 1))
        chunk += piece
      }
      if case .datagram(let datagram) = reassembly.take(chunk) { datagrams.append(datagram) }
    }
  }

  @Test func eachHearerReadsItsOwnDatagramsWholeAtAnyMTU() throws {
    var state = GattServiceState()
    let big = (0..<5_000).map { UInt8(truncatingIfNeeded: $0 * 7) }
    let value35 = state.queue(big, for: alice, now: at(0))
    #expect(value35 == .waiting)
    let value37 = state.queue([1, 2, 3], for: alice, now: at(0))
    #expect(value37 == .waiting)
    let value39 = state.queue([9], for: bob, now: at(0))
    #expect(value39 == .waiting)
    #expect(try drain(&state, alice, mtu: 23) == [big, [1, 2, 3]])
    #expect(try drain(&state, bob, mtu: 517) == [[9]])
    let value43 = try state.read(by: alice, offset: 0, now: at(1))
    #expect(value43 == [])
  }

  @Test func anOffsetPastTheChunkIsRefused() throws {
    var state = GattServiceState()
    _ = state.queue([1, 2, 3], for: alice, now: at(0))
    let chunk = try state.read(by: alice, offset: 0, now: at(0))
    #expect(chunk.count == 4)
    let value52 = try state.read(by: alice, offset: 4, now: at(0))
    #expect(value52 == [])
    var refused: GattServiceState.ReadError?
    do {
      _ = try state.read(by: alice, offset: 5, now: at(0))
    } catch {
      refused = error
    }
    #expect(refused == .invalidOffset)
  }

  @Test func writtenChunksBecomeDatagramsPerHearer() {
    var state = GattServiceState()
    let datagram = (0..<1_200).map { UInt8(truncatingIfNeeded: $0) }
    let aliceChunks = GattChunks.splitForWriting(datagram, limit: 100)
    let bobChunks = GattChunks.splitForWriting([5, 6], limit: 100)
    var completed: [[UInt8]] = []
    // Interleaved hearers do not mix.
    for (index, chunk) in aliceChunks.enumerated() {
      if let done = state.write(chunk, by: alice, now: at(0)).datagram { completed.append(done) }
      if index == 3, let done = state.write(bobChunks[0], by: bob, now: at(0)).datagram {
        completed.append(done)
      }
    }
    #expect(completed == [[5, 6], datagram])
    // A chunk continuing nothing is dropped.
    let value74 = state.write([GattPeerProfile.endFlag, 1], by: alice, now: at(0)).datagram
    #expect(value74 == nil)
    #expect(state.dropped == 1)
  }

  @Test func aChunkWrittenInPiecesAtOffsetsComesBackWhole() {
    var state = GattServiceState()
    let datagram = (0..<700).map { UInt8(truncatingIfNeeded: $0 * 3) }
    var result: [UInt8]?
    // bluetoothd's long write on a bearer of MTU 64: each chunk in pieces of 58 bytes at
    // growing offsets.
    for chunk in GattChunks.splitForWriting(datagram, limit: 512) {
      var offset = 0
      while offset < chunk.count {
        let piece = Array(chunk[offset..<min(chunk.count, offset + 58)])
        result = state.write(piece, offset: offset, by: alice, now: at(0)).datagram ?? result
        offset += piece.count
      }
    }
    #expect(result == datagram)
    // A piece at an offset the chunk is not at drops what was held.
    let chunk = GattChunks.splitForWriting([1, 2, 3, 4], limit: 512)[0]
    let first = state.write(Array(chunk.prefix(4)), offset: 0, by: alice, now: at(0)).datagram
    let wrong = state.write(Array(chunk.dropFirst(5)), offset: 5, by: alice, now: at(0)).datagram
    #expect(first == nil && wrong == nil)
    #expect(state.dropped == 1)
    // A header claiming more than a chunk holds is dropped.
    let huge = state.write([3, 0x02, 0x01, 9], offset: 0, by: alice, now: at(0)).datagram
    #expect(huge == nil)
    #expect(state.dropped == 2)
  }

  @Test func outboxesAreBoundedAndExpire() throws {
    var configuration = GattServiceState.Configuration()
    configuration.datagramsPerClient = 2
    configuration.maximumClients = 2
    configuration.keepFor = .seconds(30)
    var state = GattServiceState(configuration: configuration)
    let value85 = state.queue([1], for: alice, now: at(0))
    #expect(value85 == .waiting)
    let value87 = state.queue([2], for: alice, now: at(0))
    #expect(value87 == .waiting)
    let value89 = state.queue([3], for: alice, now: at(0))
    #expect(value89 == .refused)
    #expect(state.dropped == 1)
    _ = state.queue([4], for: bob, now: at(1))
    // A third hearer: the least recently active goes.
    _ = state.queue([5], for: "/org/bluez/hci0/dev_00_AA_01_00_00_03", now: at(2))
    #expect(state.clientCount == 2)
    // Past keepFor, what waited is gone.
    let late = try state.read(by: bob, offset: 0, now: at(40))
    #expect(late == [])
  }

  @Test func aDatagramOverTheLimitIsDroppedWhole() {
    var state = GattServiceState()
    let tooLong = Array(repeating: UInt8(1), count: GattPeerProfile.maximumDatagramSize + 1)
    var outcome: [UInt8]?
    for chunk in GattChunks.splitForWriting(tooLong, limit: 512) {
      outcome = state.write(chunk, by: alice, now: at(0)).datagram ?? outcome
    }
    #expect(outcome == nil)
    #expect(state.dropped >= 1)
  }
}
