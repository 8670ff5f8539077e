import Core
import Logging
import MediumTestKit
import NearbyTesting
import Resolution
import Strategy

/// A manager on an in-process resolver with one scripted BLE and one scripted audio medium.
struct ScriptedDevice {
  let manager: MessageManager
  let ble: ScriptedMedium
  let audio: ScriptedMedium

  init(
    resolver: InProcessResolver,
    configure: (inout MessageManager.Configuration) -> Void = { _ in }
  ) async throws {
    ble = ScriptedMedium(kind: .ble)
    audio = ScriptedMedium(kind: .audio)
    var configuration = MessageManager.Configuration(
      resolver: .inProcess(resolver), mediums: [.scripted(ble), .scripted(audio)])
    configure(&configuration)
    manager = try await MessageManager(apiKey: "test", configuration: configuration)
  }
}

/// Everything handlers were called with, in order; handlers run on managers' actors. Waited
/// on with ``until(timeout:_:)``, woken at each call.
final class Calls<Value: Sendable>: Sendable {
  private let values = Watched<[Value]>([])
  func append(_ value: Value) { values.withLock { $0.append(value) } }
  var all: [Value] { values.value }

  /// Waits until `condition` holds for the calls so far, asking it now and at each call, for
  /// at most `timeout`; returns whether it held.
  func until(
    timeout: Duration = defaultWaitBound, _ condition: ([Value]) throws -> Bool
  ) async rethrows -> Bool {
    try await values.until(timeout: timeout, condition)
  }
}
