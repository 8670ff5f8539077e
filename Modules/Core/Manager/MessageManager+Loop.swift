extension MessageManager {
  /// What a manager released without ``shutdown()`` must still stop once its work has ended
  /// (a `deinit` cannot await): the `afterwards` step of its ``WorkGroup``.
  struct Teardown: Sendable {
    let mediums: [any Medium]
    let resolver: any Resolver
    let credentials: DeviceCredentials
    /// Yields once when the manager is released without ``shutdown()``; finishes empty on a
    /// shutdown.
    let released: AsyncStream<Void>

    /// Stops the mediums and unregisters the device if the manager was released; each call
    /// is bounded by its own timeout.
    func run() async {
      for await _ in released {
        for medium in mediums { await medium.shutdown() }
        try? await resolver.unregister(credentials)
        return
      }
    }
  }

  /// Runs `piece` in the manager's work group (its readers, chores and timers); nothing runs
  /// once the manager has shut down.
  nonisolated func start(_ piece: @escaping WorkGroup.Work) {
    work.start(piece)
  }
}
