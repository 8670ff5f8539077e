import BlueZTestSupport
import Testing
import Tokens

@testable import BLEBlueZ

/// The engine owns its tasks (the signal readers, the presence ticker, the watchdog): its
/// shutdown cancels them and returns only once they ended. In the serialized double suite.
extension BlueZDoubleTests {
  /// A medium advertising and scanning runs its four tasks; once `shutdown()` returned, all
  /// four ended and the engine keeps none.
  @Test(.requires(.bluezDouble)) func shutdownReturnsOnceTheEngineTasksEnded() async throws {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    let medium = try await control.medium("hci0")
    try await medium.startScanning()
    try await medium.transmit(Token.random())
    #expect(await medium.engine.tasks.count == 4)
    #expect(await medium.engine.endedTasks == 0)
    await medium.shutdown()
    #expect(await medium.engine.endedTasks == 4)
    #expect(await medium.engine.tasks.isEmpty)
  }

  /// A shutdown begun inside one of the engine's tasks cannot await that task: it cancels
  /// them and returns. A later shutdown from outside awaits them all.
  @Test(.requires(.bluezDouble)) func shutdownFromAnEngineTaskOnlyCancels() async throws {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    let medium = try await control.medium("hci0")
    let engine = medium.engine
    await BlueZEngineTask.$engine.withValue(ObjectIdentifier(engine)) {
      await medium.shutdown()
    }
    await medium.shutdown()
    #expect(await engine.endedTasks == 4)
    #expect(await engine.tasks.isEmpty)
  }
}
