import Synchronization

/// A value that callbacks change and a test waits on: ``withLock(_:)`` changes it under a
/// lock and wakes the waits of ``until(timeout:_:)``, which ask their condition again at each
/// change instead of on a timer.
///
/// ```swift
/// let found = Watched<[String]>([])
/// let subscription = try await bob.subscribe(onFound: { message in
///   found.withLock { $0.append(message.text ?? "") }
/// })
/// #expect(await found.until { $0 == ["hello"] })
/// ```
///
/// All methods may be called from any thread; a `Mutex` guards the value.
public final class Watched<Value: Sendable>: Sendable {
  private let storage: Mutex<Value>
  private let signal = ChangeSignal()

  public init(_ value: Value) {
    storage = Mutex(value)
  }

  /// The value now.
  public var value: Value { storage.withLock { $0 } }

  /// Runs `body` with the value under the lock and wakes the waits (a read through it wakes
  /// them too: they ask again and find nothing new).
  @discardableResult
  public func withLock<Result: Sendable>(_ body: (inout Value) throws -> Result) rethrows
    -> Result
  {
    defer { signal.changed() }
    return try storage.withLock { value in try body(&value) }
  }

  /// Waits until `condition` holds for the value, asking it now and at each change, for at
  /// most `timeout`; returns whether it held.
  public func until(
    timeout: Duration = defaultWaitBound, _ condition: (Value) throws -> Bool
  ) async rethrows -> Bool {
    try await signal.wait(timeout: timeout) { try condition(value) }
  }
}
