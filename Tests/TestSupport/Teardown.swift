/// Something a test starts and must stop: a server, a storage, a process.
public protocol AsyncShutdown: Sendable {
  /// Stops it; called once, awaited.
  func shutdown() async
}

/// Runs `body` with `resource`, then awaits `resource.shutdown()` whether `body` returned or
/// threw: the awaited teardown a `defer { Task { … } }` only pretends to be (that task is
/// never awaited: the next test starts while the last one's server still runs).
public func withShutdown<Resource: AsyncShutdown, Result>(
  _ resource: Resource, isolation: isolated (any Actor)? = #isolation,
  _ body: (Resource) async throws -> Result
) async throws -> Result {
  try await withTeardown({ await resource.shutdown() }) { try await body(resource) }
}

/// Runs `body`, then awaits `teardown` whether `body` returned or threw.
public func withTeardown<Result>(
  isolation: isolated (any Actor)? = #isolation, _ teardown: () async -> Void,
  _ body: () async throws -> Result
) async throws -> Result {
  let result: Result
  do {
    result = try await body()
  } catch {
    await teardown()
    throw error
  }
  await teardown()
  return result
}
