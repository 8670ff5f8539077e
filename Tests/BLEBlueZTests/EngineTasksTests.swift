import BlueZTestSupport
import Testing
import Tokens

@testable import BLEBlueZ

/// The engine's work (its loop, and the timers it sleeps on) runs in its work group: its
/// shutdown ends that work and returns only once it is over. In the serialized double suite.
extension BlueZDoubleTests {
  /// A medium advertising and scanning has its work running; once `shutdown()` returned,
  /// none runs.
  @Test(.requires(.bluezDouble)) func shutdownReturnsOnceTheEngineWorkEnded() async throws {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    let medium = try await control.medium("hci0")
    try await medium.startScanning()
    try await medium.transmit(Token.random())
    #expect(medium.engine.work.running > 0)
    await medium.shutdown()
    #expect(medium.engine.work.running == 0)
  }

  /// A shutdown begun inside the engine's own work cannot await that work: it ends it and
  /// returns. A later shutdown from outside awaits it all.
  @Test(.requires(.bluezDouble)) func shutdownFromTheEngineWorkOnlyEndsIt() async throws {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    let medium = try await control.medium("hci0")
    let engine = medium.engine
    let (returned, signal) = AsyncStream.makeStream(of: Void.self)
    engine.work.start {
      await medium.shutdown()
      signal.yield()
      signal.finish()
    }
    var iterator = returned.makeAsyncIterator()
    #expect(await iterator.next() != nil)  // it returned, though its own work was running
    await medium.shutdown()
    #expect(engine.work.running == 0)
  }
}
