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
    let first = hub.listen(to: device, key: "k")
    let second = hub.listen(to: device, key: "k")
    let elsewhere = hub.listen(to: other, key: "k")
    let third = hub.listen(to: device, key: "k")
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
    let revoked = hub.listen(to: device, key: "revoked")
    let kept = hub.listen(to: device, key: "kept")
    let elsewhere = hub.listen(to: other, key: "revoked")
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
    let theirs = hub.watch(owner: b, perProject: 3, perSession: 2)
    #expect(theirs != nil)
    #expect(hub.watch(owner: a1, perProject: 3, perSession: 2) != nil)
    #expect(hub.watch(owner: a1, perProject: 3, perSession: 2) != nil)
    // The session's third is refused; another session of a has room for one more.
    #expect(hub.watch(owner: a1, perProject: 3, perSession: 2) == nil)
    let last = hub.watch(owner: a2, perProject: 3, perSession: 2)
    #expect(last != nil)
    #expect(hub.watch(owner: a2, perProject: 3, perSession: 2) == nil)
    // b's view was not closed: it still wakes.
    hub.wake([DeviceID.random()])
    var iterator = theirs?.wakeups.makeAsyncIterator()
    #expect(await iterator?.next() != nil)
    // A view that closes gives its place back.
    if let last { hub.stopWatching(id: last.id) }
    #expect(hub.watch(owner: a2, perProject: 3, perSession: 2) != nil)
  }
}
