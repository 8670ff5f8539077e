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
    let first = await hub.listen(to: device)
    let second = await hub.listen(to: device)
    let elsewhere = await hub.listen(to: other)
    let third = await hub.listen(to: device)
    #expect(await hub.openStreams == 3)
    var oldest = first.wakeups.makeAsyncIterator()
    #expect(await oldest.next() == nil)  // finished, without a wake-up
    await hub.wake([device, other])
    for stream in [second.wakeups, third.wakeups, elsewhere.wakeups] {
      var iterator = stream.makeAsyncIterator()
      #expect(await iterator.next() != nil)
    }
    // Its handler stopping later changes nothing.
    await hub.stopListening(to: device, id: first.id)
    #expect(await hub.openStreams == 3)
  }
}
