/// Waits until `condition` holds, checking every `interval`, for at most `timeout`; returns
/// whether it held. For tests of asynchronous behaviour that must never hang.
public func eventually(
  timeout: Duration = .seconds(10), interval: Duration = .milliseconds(10),
  _ condition: () async throws -> Bool
) async rethrows -> Bool {
  let deadline = ContinuousClock.now + timeout
  while ContinuousClock.now < deadline {
    if try await condition() { return true }
    try? await Task.sleep(for: interval)
  }
  return try await condition()
}
