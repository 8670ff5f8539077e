extension MessageManager {
  /// Publishes `message`, runs `body` with the publication, and unpublishes when `body`
  /// returns or throws (the task being cancelled included) before returning `body`'s
  /// result. `configure` and `body` run on the caller's executor.
  ///
  /// ```swift
  /// try await manager.withPublication(Message(text: "Alice", type: "name")) { publication in
  ///   try await Task.sleep(for: .seconds(30))
  /// }  // unpublished here
  /// ```
  ///
  /// - Parameters:
  ///   - message: the message to publish.
  ///   - configure: sets the ``PublicationParams`` (strategy, expired handler).
  ///   - body: runs while the message is published; its result is returned.
  /// - Throws: the errors of ``publish(_:configure:)``, or what `body` throws.
  public nonisolated(nonsending) func withPublication<Result>(
    _ message: Message,
    configure: (inout PublicationParams) throws -> Void = { _ in },
    _ body: nonisolated(nonsending) (Publication) async throws -> Result
  ) async throws -> Result {
    let publication = try await publish(message, configure: configure)
    let result: Result
    do {
      result = try await body(publication)
    } catch {
      await publication.cancel()
      throw error
    }
    await publication.cancel()
    return result
  }

  /// Subscribes, runs `body` with the subscription, and unsubscribes when `body` returns or
  /// throws (the task being cancelled included) before returning `body`'s result.
  /// `onFound` and `onLost` run on this actor, in event order; `configure` and `body` run on
  /// the caller's executor. A trailing closure is `body`.
  ///
  /// ```swift
  /// try await manager.withSubscription(configure: { $0.type = "name" }) { subscription in
  ///   for await event in subscription.events { … }
  /// }  // unsubscribed here
  /// ```
  ///
  /// - Parameters:
  ///   - onFound: called with each message found.
  ///   - onLost: called with each found message that is lost.
  ///   - configure: sets the ``SubscriptionParams`` (strategy, namespace, type, ...).
  ///   - body: runs while the subscription is active; its result is returned.
  /// - Throws: the errors of ``subscribe(onFound:configure:)``, or what `body` throws.
  public nonisolated(nonsending) func withSubscription<Result>(
    onFound: (@Sendable (Message) -> Void)? = nil,
    onLost: (@Sendable (Message) -> Void)? = nil,
    configure: (inout SubscriptionParams) throws -> Void = { _ in },
    _ body: nonisolated(nonsending) (Subscription) async throws -> Result
  ) async throws -> Result {
    var params = SubscriptionParams()
    try configure(&params)
    let subscription = try await subscribe(params: params, onFound: onFound, onLost: onLost)
    let result: Result
    do {
      result = try await body(subscription)
    } catch {
      await subscription.cancel()
      throw error
    }
    await subscription.cancel()
    return result
  }

  /// Makes a manager, runs `body` with it, and shuts it down (``shutdown()``) when `body`
  /// returns or throws, the task being cancelled included. The structured alternative to
  /// letting a manager go: a manager released without ``shutdown()`` shuts down only
  /// eventually, from a task nothing waits for. `body` runs on the caller's executor.
  ///
  /// - Parameters:
  ///   - apiKey: the project's API key (see ``init(apiKey:configuration:)``).
  ///   - configuration: the resolver, the mediums and the handlers.
  ///   - body: runs with the manager; its result is returned.
  /// - Throws: the errors of ``init(apiKey:configuration:)``, or what `body` throws.
  public nonisolated(nonsending) static func withManager<Result>(
    apiKey: String, configuration: Configuration,
    _ body: nonisolated(nonsending) (MessageManager) async throws -> Result
  ) async throws -> Result {
    let manager = try await MessageManager(apiKey: apiKey, configuration: configuration)
    let result: Result
    do {
      result = try await body(manager)
    } catch {
      await manager.shutdown()
      throw error
    }
    await manager.shutdown()
    return result
  }
}
