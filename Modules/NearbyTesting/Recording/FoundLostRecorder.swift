public import Core
import Synchronization

/// What the subscriptions of each named device found and lost, in the order the manager
/// called back: the one recorder behind tests of several devices (a world of managers on one
/// air or one network), waited on with ``until(timeout:_:)``.
///
/// Callbacks come from the managers' tasks and reads from the test's: a `Mutex` guards the
/// record, so every method may be called from any thread.
public final class FoundLostRecorder: Sendable {
  private let events = Mutex<[(device: String, event: SubscriptionEvent)]>([])
  private let signal = ChangeSignal()

  public init() {}

  /// Subscribes on `manager`, recording what it finds and loses under `device`.
  /// - Throws: what `MessageManager.subscribe` throws (`ManagerError`, or what `configure`
  ///   throws).
  public func subscribe(
    _ manager: MessageManager, as device: String,
    configure: (inout SubscriptionParams) throws -> Void = { _ in }
  ) async throws -> Subscription {
    try await manager.subscribe(
      onFound: { [self] in record(.found($0), by: device) },
      onLost: { [self] in record(.lost($0), by: device) },
      configure: configure)
  }

  /// Records `event` as seen by `device` (for callbacks a test writes itself).
  public func record(_ event: SubscriptionEvent, by device: String) {
    events.withLock { $0.append((device, event)) }
    signal.changed()
  }

  /// Waits until `condition` holds, asking it now and after each recorded event, for at most
  /// `timeout`; returns whether it held. `condition` reads this recorder:
  /// `seen.until { seen.found(by: "bob") == ["hello"] }`.
  public func until(
    timeout: Duration = defaultWaitBound, _ condition: () throws -> Bool
  ) async rethrows -> Bool {
    try await signal.wait(timeout: timeout, until: condition)
  }

  /// The texts of the messages `device` found, in order (a message without text as "").
  public func found(by device: String) -> [String] {
    texts(of: device) { $0.found }
  }

  /// The texts of the messages `device` lost, in order.
  public func lost(by device: String) -> [String] {
    texts(of: device) { $0.lost }
  }

  /// Found and lost together as `device` saw them: "found <text>", "lost <text>".
  public func history(of device: String) -> [String] {
    events.withLock {
      $0.compactMap { entry in
        guard entry.device == device else { return nil }
        if let message = entry.event.found { return "found \(message.text ?? "")" }
        if let message = entry.event.lost { return "lost \(message.text ?? "")" }
        return nil
      }
    }
  }

  private func texts(of device: String, _ part: (SubscriptionEvent) -> Message?) -> [String] {
    events.withLock {
      $0.compactMap { $0.device == device ? part($0.event).map { $0.text ?? "" } : nil }
    }
  }
}
