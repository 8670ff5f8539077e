@_spi(Resolver) import Core
@testable import NearbyServer
import Testing

/// A device keeps at most two event streams open on an instance: a third closes the oldest.
@Suite("Event hub")
struct EventHubTests {
  @Test func aThirdStreamOfADeviceClosesItsOldest() async {
    let hub = EventHub()
    let device = DeviceID.random()
    let other = DeviceID.random()
    let first = hub.listen(to: device, key: "k", pollInterval: .seconds(30))
    let second = hub.listen(to: device, key: "k", pollInterval: .seconds(30))
    let elsewhere = hub.listen(to: other, key: "k", pollInterval: .seconds(30))
    let third = hub.listen(to: device, key: "k", pollInterval: .seconds(30))
    #expect(hub.openStreams == 3)
    var oldest = first.wakeups.makeAsyncIterator()
    #expect(await oldest.next() == nil)  // finished, without a wake-up
    hub.wake([device, other])
    for stream in [second.wakeups, third.wakeups, elsewhere.wakeups] {
      var iterator = stream.makeAsyncIterator()
      #expect(await iterator.next() != nil)
    }
    // Its handler stopping later changes nothing.
    hub.stopListening(to: device, id: first.id)
    #expect(hub.openStreams == 3)
  }

  /// Issue 39: the streams of revoked keys end; the others stay and still wake.
  @Test func endingKeysEndsTheirStreamsOnly() async {
    let hub = EventHub()
    let (device, other) = (DeviceID.random(), DeviceID.random())
    let revoked = hub.listen(to: device, key: "revoked", pollInterval: .seconds(30))
    let kept = hub.listen(to: device, key: "kept", pollInterval: .seconds(30))
    let elsewhere = hub.listen(to: other, key: "revoked", pollInterval: .seconds(30))
    #expect(hub.keys == ["revoked", "kept"])
    hub.end(keys: ["revoked"])
    #expect(hub.keys == ["kept"])
    #expect(hub.openStreams == 1)
    for stream in [revoked.wakeups, elsewhere.wakeups] {
      var iterator = stream.makeAsyncIterator()
      #expect(await iterator.next() == nil)
    }
    hub.wake([device])
    var iterator = kept.wakeups.makeAsyncIterator()
    #expect(await iterator.next() != nil)
  }

  /// Issue 29, finding 4: live views are capped per project and per session; a project at
  /// its cap is refused and nobody else's view is closed.
  @Test func aProjectAtItsCapIsRefusedAndNobodyIsClosed() async {
    let hub = EventHub()
    let a1 = EventHub.WatcherOwner(project: "a", session: "1")
    let a2 = EventHub.WatcherOwner(project: "a", session: "2")
    let b = EventHub.WatcherOwner(project: "b", session: "3")
    let theirs = hub.watch(owner: b, perProject: 3, perSession: 2, pollInterval: .seconds(1))
    #expect(theirs != nil)
    #expect(hub.watch(owner: a1, perProject: 3, perSession: 2, pollInterval: .seconds(1)) != nil)
    #expect(hub.watch(owner: a1, perProject: 3, perSession: 2, pollInterval: .seconds(1)) != nil)
    // The session's third is refused; another session of a has room for one more.
    #expect(hub.watch(owner: a1, perProject: 3, perSession: 2, pollInterval: .seconds(1)) == nil)
    let last = hub.watch(owner: a2, perProject: 3, perSession: 2, pollInterval: .seconds(1))
    #expect(last != nil)
    #expect(hub.watch(owner: a2, perProject: 3, perSession: 2, pollInterval: .seconds(1)) == nil)
    // b's view was not closed: it still wakes.
    hub.wake([DeviceID.random()])
    var iterator = theirs?.wakeups.makeAsyncIterator()
    #expect(await iterator?.next() != nil)
    // A view that closes gives its place back.
    if let last { hub.stopWatching(id: last.id) }
    #expect(hub.watch(owner: a2, perProject: 3, perSession: 2, pollInterval: .seconds(1)) != nil)
  }

  /// Each stream is woken by its own poll, one interval after it opened and every interval
  /// from then on, by whichever tick comes first at or after that time; a tick that comes late
  /// wakes it once, not once per interval missed.
  @Test func pollsWakeEachStreamOnItsOwnSchedule() async {
    let hub = EventHub()
    let start = ContinuousClock.now
    let (first, second) = (DeviceID.random(), DeviceID.random())
    let early = hub.listen(to: first, key: "k", pollInterval: .seconds(1), at: start)
    let late = hub.listen(
      to: second, key: "k", pollInterval: .seconds(1), at: start + .milliseconds(500))
    let owner = EventHub.WatcherOwner(project: "p", session: "s")
    let view = hub.watch(
      owner: owner, perProject: 1, perSession: 1, pollInterval: .seconds(2), at: start)
    guard let view else {
      Issue.record("the live view was refused")
      return
    }
    let names = [early.id: "early", late.id: "late", view.id: "view"]
    func tick(_ offset: Duration) -> Set<String> {
      Set(hub.wakeDue(at: start + offset).compactMap { names[$0] })
    }
    #expect(tick(.milliseconds(900)) == [])
    #expect(tick(.milliseconds(1000)) == ["early"])
    #expect(tick(.milliseconds(1500)) == ["late"])
    #expect(tick(.milliseconds(2000)) == ["early", "view"])
    #expect(tick(.milliseconds(2100)) == [])
    // Ten intervals late: one wake-up each, and the next poll an interval after this tick.
    #expect(tick(.seconds(12)) == ["early", "late", "view"])
    #expect(tick(.milliseconds(12_900)) == [])
    #expect(tick(.seconds(13)) == ["early", "late"])
    // A stream that stopped listening is not woken.
    hub.stopListening(to: first, id: early.id)
    #expect(tick(.seconds(14)) == ["late", "view"])
    var iterator = late.wakeups.makeAsyncIterator()
    #expect(await iterator.next() != nil)
  }
}
