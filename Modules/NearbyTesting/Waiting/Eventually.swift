/// How long the waits of this module wait when not told: a guard against a hang, not a
/// deadline (a wait returns as soon as what it waits for is there). A plain `swift test` runs
/// every test at once; on two cores what takes 100 ms alone then takes seconds, and a shorter
/// bound makes a passing test fail by load alone.
public let defaultWaitBound: Duration = .seconds(30)

/// Waits until `condition` holds, checking every `interval`, for at most `timeout`; returns
/// whether it held. For tests of asynchronous behaviour that must never hang.
public func eventually(
  timeout: Duration = defaultWaitBound, interval: Duration = .milliseconds(10),
  _ condition: () async throws -> Bool
) async rethrows -> Bool {
  try await waitForValue(timeout: timeout, interval: interval) {
    try await condition() ? true : nil
  }
    ?? false
}

/// Asks `value` every `interval`, for at most `timeout`, until it gives something; returns
/// that, or `nil` when time ran out (after one last ask). The one polling loop of the tests:
/// ``eventually(timeout:interval:_:)``, `StreamRecorder` and `RunningProcess` wait with it.
public func waitForValue<Value>(
  timeout: Duration, interval: Duration = .milliseconds(10),
  _ value: () async throws -> Value?
) async rethrows -> Value? {
  let deadline = ContinuousClock.now + timeout
  while ContinuousClock.now < deadline {
    if let found = try await value() { return found }
    try? await Task.sleep(for: interval)
  }
  return try await value()
}

/// Returns only when the task is cancelled, by throwing `CancellationError`: what a simulated
/// slow handler awaits instead of a long wait, so it holds on exactly until its owner gives up.
public func untilCancelled() async throws -> Never {
  let waiter = CancellableWaiter()
  try await withTaskCancellationHandler {
    try await withCheckedThrowingContinuation { continuation in waiter.park(continuation) }
  } onCancel: {
    waiter.cancel()
  }
  preconditionFailure("untilCancelled() resumed without a cancellation")
}
