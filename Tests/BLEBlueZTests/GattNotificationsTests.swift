@testable import BLEBlueZ
import Core
import Testing

/// Notifications of the outbox, on instants: a hearer that listens gets its datagrams as
/// notified chunks under its tag (what waited first, after the acknowledgement), reads
/// nothing, and puts them back together; another hearer's chunks, and a gap in the sequence,
/// are told apart; the link subscribes before it writes, reads until the acknowledgement, and
/// reads as before when the subscription fails.
@Suite struct GattNotificationsTests {
  let start = NearbyClock.Instant(offset: .seconds(100))
  let alice = "/org/bluez/hci0/dev_00_AA_01_00_00_01"
  let bob = "/org/bluez/hci0/dev_00_AA_01_00_00_02"

  func at(_ milliseconds: Int) -> NearbyClock.Instant { start + .milliseconds(milliseconds) }

  /// The listen chunk `tag` writes, as bluetoothd hands it to the owner.
  func listen(tag: UInt32, mtu: Int = 517) -> [UInt8] {
    GattNotifiedChunks.listen(tag: tag, room: GattPeerProfile.notificationRoom(mtu: mtu))
  }

  /// `chunks` put back together by the hearer of `tag`: the datagrams, and whether it saw the
  /// acknowledgement.
  func reassemble(_ chunks: [[UInt8]], tag: UInt32) -> (datagrams: [[UInt8]], acknowledged: Bool) {
    var reassembly = GattNotifiedReassembly(tag: tag)
    var datagrams: [[UInt8]] = []
    var acknowledged = false
    for chunk in chunks {
      let taken = reassembly.take(chunk, now: at(0))
      datagrams += taken.datagrams
      acknowledged = acknowledged || taken.acknowledged
    }
    return (datagrams, acknowledged)
  }

  @Test func aListeningHearerGetsWhatWaitedThenEachDatagramAsNotifiedChunks() throws {
    var state = GattServiceState()
    let big = (0..<5_000).map { UInt8(truncatingIfNeeded: $0 * 7) }
    #expect(state.queue(big, for: alice, now: at(0)) == .waiting)
    #expect(state.queue([9], for: bob, now: at(0)) == .waiting)
    // Alice listens at MTU 185: the acknowledgement, then what waited, in chunks of 180 bytes.
    let written = state.write(listen(tag: 0xa11c, mtu: 185), by: alice, now: at(1))
    #expect(written.datagram == nil)
    #expect(written.notify.allSatisfy { $0.count <= 180 })
    #expect(written.notify.count == 1 + (5_000 + 172) / 173)
    var notified = written.notify
    guard case .notify(let more) = state.queue([1, 2, 3], for: alice, now: at(2)) else {
      Issue.record("a listening hearer's datagram was kept for reads")
      return
    }
    notified += more
    let heard = reassemble(notified, tag: 0xa11c)
    #expect(heard.acknowledged)
    #expect(heard.datagrams == [big, [1, 2, 3]])
    // Nothing is left for Alice's reads; Bob, who does not listen, still reads his.
    #expect(try state.read(by: alice, offset: 0, now: at(3)) == [])
    #expect(try state.read(by: bob, offset: 0, now: at(3)).dropFirst() == [9])
    // Bob's reassembly takes none of Alice's chunks.
    #expect(reassemble(notified, tag: 0xb0b) == ([], false))
  }

  @Test func theRestOfADatagramAReadBeganStaysForReadsWhileTheNextIsNotified() throws {
    var state = GattServiceState()
    let first = (0..<1_500).map { UInt8(truncatingIfNeeded: $0) }
    let second = (0..<700).map { UInt8(truncatingIfNeeded: $0 * 5) }
    _ = state.queue(first, for: alice, now: at(0))
    _ = state.queue(second, for: alice, now: at(0))
    var reads = GattReassembly()
    #expect(reads.take(try state.read(by: alice, offset: 0, now: at(1))) == .partial)
    let written = state.write(listen(tag: 4), by: alice, now: at(2))
    #expect(reassemble(written.notify, tag: 4) == ([second], true))
    var outcome = GattReassembly.Outcome.partial
    while case .partial = outcome {
      outcome = reads.take(try state.read(by: alice, offset: 0, now: at(3)))
    }
    #expect(outcome == .datagram(first))
    #expect(try state.read(by: alice, offset: 0, now: at(3)) == [])
  }

  @Test func aDisconnectedHearerListensNoMoreAndListenersAreEvictedLast() {
    var state = GattServiceState()
    _ = state.write(listen(tag: 1), by: alice, now: at(0))
    state.disconnected(alice)
    #expect(state.queue([1], for: alice, now: at(1)) == .waiting)

    var configuration = GattServiceState.Configuration()
    configuration.maximumClients = 2
    var crowded = GattServiceState(configuration: configuration)
    _ = crowded.write(listen(tag: 1), by: alice, now: at(0))
    _ = crowded.queue([2], for: bob, now: at(1))
    // A third hearer: Bob, who does not listen, goes, though Alice was active before him.
    _ = crowded.queue([3], for: "/org/bluez/hci0/dev_00_AA_01_00_00_03", now: at(2))
    guard case .notify = crowded.queue([4], for: alice, now: at(3)) else {
      Issue.record("the listener was evicted")
      return
    }
    #expect(crowded.clientCount == 2)
  }

  @Test func aNewListenChunkReplacesTheTagAndTheSequenceStartsOver() {
    var state = GattServiceState()
    _ = state.write(listen(tag: 1), by: alice, now: at(0))
    _ = state.queue([1], for: alice, now: at(0))
    let again = state.write(listen(tag: 2), by: alice, now: at(1))
    guard case .notify(let chunks) = state.queue([2], for: alice, now: at(1)) else {
      Issue.record("not notified")
      return
    }
    #expect(reassemble(again.notify + chunks, tag: 2) == ([[2]], true))
    #expect(reassemble(again.notify + chunks, tag: 1) == ([], false))
  }

  @Test func chunksOutOfOrderOrTwiceComeBackInOrderOnce() {
    // Two datagrams after the acknowledgement, as three EATT bearers may deliver them.
    let first = (0..<1_000).map { UInt8(truncatingIfNeeded: $0) }
    let acknowledgement = GattNotifiedChunks.acknowledgement(tag: 7, sequence: 0)
    let chunks =
      [acknowledgement] + GattNotifiedChunks.split(first, tag: 7, room: 200, sequence: 1)
      + GattNotifiedChunks.split([5, 6], tag: 7, room: 200, sequence: 7)
    #expect(chunks.count == 8)
    let shuffled =
      [chunks[2], chunks[0], chunks[3], chunks[1], chunks[7], chunks[5], chunks[4]]
      + [chunks[6], chunks[3], chunks[0]]
    var reassembly = GattNotifiedReassembly(tag: 7)
    var datagrams: [[UInt8]] = []
    var acknowledged = 0
    var dropped = 0
    for chunk in shuffled {
      let taken = reassembly.take(chunk, now: at(0))
      #expect(taken.ours)
      datagrams += taken.datagrams
      acknowledged += taken.acknowledged ? 1 : 0
      dropped += taken.dropped
    }
    #expect(datagrams == [first, [5, 6]])
    #expect(acknowledged == 1 && dropped == 0)
    // Too short, or another tag: not ours.
    #expect(reassembly.take([1, 0, 0], now: at(0)) == .init())
    #expect(
      reassembly.take(GattNotifiedChunks.acknowledgement(tag: 8, sequence: 8), now: at(0))
        == .init())
  }

  @Test func aChunkThatNeverComesIsGivenUpOnceTheWindowIsPassed() {
    let datagram = (0..<1_000).map { UInt8(truncatingIfNeeded: $0) }
    let cut = GattNotifiedChunks.split(datagram, tag: 7, room: 200, sequence: 0)
    var reassembly = GattNotifiedReassembly(tag: 7)
    // The second chunk is lost; the rest wait for it.
    for (index, chunk) in cut.enumerated() where index != 1 {
      #expect(reassembly.take(chunk, now: at(0)).datagrams.isEmpty)
    }
    // Small datagrams after it, each one chunk: held too, until one lies past the window.
    var sequence = UInt16(cut.count)
    var delivered: [[UInt8]] = []
    var dropped = 0
    while sequence < GattNotifiedReassembly.window + 10 {
      let taken = reassembly.take(
        GattNotifiedChunks.split([UInt8(sequence)], tag: 7, room: 200, sequence: sequence)[0],
        now: at(0))
      delivered += taken.datagrams
      dropped += taken.dropped
      sequence += 1
    }
    // The cut datagram is dropped; every one held after the gap is delivered, in order.
    #expect(dropped == 1)
    #expect(delivered == (cut.count..<Int(sequence)).map { [UInt8($0)] })
  }

  @Test func aChunkLostInASparseStreamHoldsWhatFollowsForHalfASecondAtMost() {
    var reassembly = GattNotifiedReassembly(tag: 7)
    let ack = GattNotifiedChunks.acknowledgement(tag: 7, sequence: 0)
    #expect(reassembly.take(ack, now: at(0)).acknowledged)
    // Refresh answers, one chunk each, every 3 s; the first (sequence 1) is lost.
    let second = GattNotifiedChunks.split([2], tag: 7, room: 200, sequence: 2)[0]
    let third = GattNotifiedChunks.split([3], tag: 7, room: 200, sequence: 3)[0]
    #expect(reassembly.take(second, now: at(3_000)).datagrams.isEmpty)
    // Not yet given up at 0.4 s; at 0.5 s (a link's wake-up), the gap goes.
    #expect(reassembly.expire(now: at(3_400)).datagrams.isEmpty)
    #expect(reassembly.expire(now: at(3_500)).datagrams == [[2]])
    #expect(reassembly.take(third, now: at(6_000)).datagrams == [[3]])
    // The lost one, late: behind, nothing.
    let late = GattNotifiedChunks.split([1], tag: 7, room: 200, sequence: 1)[0]
    #expect(reassembly.take(late, now: at(6_100)).datagrams.isEmpty)
    // A gap also goes when the next notification comes after the timeout.
    let fifth = GattNotifiedChunks.split([5], tag: 7, room: 200, sequence: 5)[0]
    let sixth = GattNotifiedChunks.split([6], tag: 7, room: 200, sequence: 6)[0]
    #expect(reassembly.take(fifth, now: at(9_000)).datagrams.isEmpty)
    #expect(reassembly.take(sixth, now: at(12_000)).datagrams == [[5], [6]])
  }

  @Test func aMalformedListenChunkIsNotOne() {
    #expect(GattNotifiedChunks.parseListen([GattPeerProfile.listenFlag, 0, 0, 0, 0, 2, 0]) == nil)
    #expect(GattNotifiedChunks.parseListen([GattPeerProfile.listenFlag, 0, 0, 0, 1, 0, 3]) == nil)
    // A room under what the smallest MTU carries (18 bytes) would only multiply notifications.
    #expect(GattNotifiedChunks.parseListen([GattPeerProfile.listenFlag, 0, 0, 0, 1, 0, 17]) == nil)
    #expect(GattNotifiedChunks.parseListen([GattPeerProfile.listenFlag, 0, 0, 0, 1, 0, 18]) != nil)
    #expect(GattNotifiedChunks.parseListen([GattPeerProfile.listenFlag, 0, 0, 0, 1, 2]) == nil)
    let parsed = GattNotifiedChunks.parseListen([GattPeerProfile.listenFlag, 0, 0, 0, 1, 9, 0])
    #expect(parsed?.tag == 1 && parsed?.room == GattPeerProfile.maximumChunk)
  }

  @Test func theLinkSubscribesBesideItsFirstWriteListensNextReadsUntilAcknowledgedThenNoMore() {
    var configuration = GattLinkStateMachine.Configuration()
    configuration.idleTimeout = .seconds(10)
    var machine = GattLinkStateMachine(configuration: configuration, now: at(0))
    _ = machine.enqueueing([1, 2], now: at(0))
    #expect(machine.next(now: at(0)) == .connect)
    machine.connected(mtu: 517, listenTag: 0x51, now: at(10))
    #expect(machine.next(now: at(10)) == .subscribe)
    // The question does not wait for the subscription.
    guard case .write(let question) = machine.next(now: at(10)) else {
      Issue.record("no write beside the subscription")
      return
    }
    #expect(question != listen(tag: 0x51))
    #expect(machine.next(now: at(11)) == .busy)
    machine.subscribed(true, now: at(15))
    machine.wrote(now: at(21))
    // The listen chunk is the next write, before any read: one write at a time.
    #expect(machine.next(now: at(21)) == .write(listen(tag: 0x51)))
    machine.wrote(now: at(22))
    // Not acknowledged yet: the answer may still be waiting for a read.
    #expect(machine.next(now: at(22)) == .read)
    machine.read([], now: at(25))
    machine.acknowledged(now: at(30))
    #expect(machine.isNotified)
    // Reads go on until one comes back empty; then only every notifiedPoll (3 s), and a
    // write schedules none at once.
    #expect(machine.next(now: at(1_000)) == .read)
    machine.read([GattPeerProfile.startFlag, 1], now: at(1_000))
    #expect(machine.next(now: at(1_000)) == .read)
    machine.read([], now: at(1_000))
    #expect(machine.next(now: at(1_000)) == .wait(until: at(4_000)))
    _ = machine.enqueueing([3], now: at(1_000))
    guard case .write = machine.next(now: at(1_000)) else {
      Issue.record("no second write")
      return
    }
    machine.wrote(now: at(1_001))
    machine.notified(now: at(2_000))
    #expect(machine.next(now: at(2_000)) == .wait(until: at(4_000)))
    #expect(machine.next(now: at(4_000)) == .read)
    machine.read([], now: at(4_000))
    #expect(machine.next(now: at(4_000)) == .wait(until: at(7_000)))
    // Quiet for the idle timeout (empty reads are not activity): the link goes.
    for second in [7, 10] {
      #expect(machine.next(now: at(second * 1_000)) == .read)
      machine.read([], now: at(second * 1_000))
    }
    #expect(machine.next(now: at(12_000)) == .disconnect)
    machine.disconnected(now: at(12_001))
    #expect(!machine.isNotified)
  }

  /// A link with one datagram queued, just connected to an owner whose outbox notifies.
  func connectedLink(listenTag: UInt32) -> GattLinkStateMachine {
    var machine = GattLinkStateMachine(now: at(0))
    _ = machine.enqueueing([1], now: at(0))
    _ = machine.next(now: at(0))
    machine.connected(mtu: 517, listenTag: listenTag, now: at(0))
    return machine
  }

  @Test func aFailedSubscriptionOrListenChunkReadsAsBefore() {
    var machine = connectedLink(listenTag: 9)
    #expect(machine.next(now: at(0)) == .subscribe)
    guard case .write = machine.next(now: at(0)) else {
      Issue.record("no write")
      return
    }
    machine.subscribed(false, now: at(5))
    machine.wrote(now: at(6))
    #expect(machine.next(now: at(6)) == .read)
    // An acknowledgement nobody waits for changes nothing.
    machine.read([], now: at(7))
    machine.acknowledged(now: at(8))
    #expect(!machine.isNotified)

    // Subscribed, but the listen chunk's write fails: the link stays, and reads.
    var refused = connectedLink(listenTag: 10)
    _ = refused.next(now: at(0))
    refused.subscribed(true, now: at(1))
    #expect(refused.next(now: at(1)) == .write(listen(tag: 10)))
    refused.operationFailed(now: at(2))
    guard case .write = refused.next(now: at(2)) else {
      Issue.record("the question was not written after the listen chunk failed")
      return
    }
    refused.wrote(now: at(3))
    #expect(refused.next(now: at(3)) == .read)
    refused.acknowledged(now: at(4))
    #expect(!refused.isNotified)
  }

  @Test func anAcknowledgementDuringTheListenWriteCountsAndItsEndChangesNothing() {
    var machine = connectedLink(listenTag: 3)
    #expect(machine.next(now: at(0)) == .subscribe)
    machine.subscribed(true, now: at(0))
    #expect(machine.next(now: at(0)) == .write(listen(tag: 3)))
    machine.acknowledged(now: at(1))
    #expect(machine.isNotified)
    machine.wrote(now: at(2))
    #expect(machine.isNotified)
    // A subscription's end after the link went is nothing.
    var gone = GattLinkStateMachine(now: at(0))
    gone.subscribed(true, now: at(0))
    gone.acknowledged(now: at(0))
    #expect(!gone.isNotified)
  }
}
