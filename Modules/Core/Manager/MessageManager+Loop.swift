extension MessageManager {
  /// A piece of the manager's work: a reader of one of its inputs, a chore, a timer.
  typealias Work = @Sendable () async -> Void

  /// What the manager's one task needs besides its work: what a manager released without
  /// ``shutdown()`` must still stop (a `deinit` cannot await).
  struct Teardown: Sendable {
    let mediums: [any Medium]
    let resolver: any Resolver
    let credentials: DeviceCredentials
    /// Yields once when the manager is released without ``shutdown()``; finishes empty on a
    /// shutdown.
    let released: AsyncStream<Void>
  }

  /// The manager's one task: a discarding task group in which all of the manager's work runs,
  /// marked as the manager's (``ManagerTask``). The loop adds each piece of work as it comes;
  /// when `work` finishes (a shutdown, or the manager released) it cancels what still runs and
  /// the group awaits it. A manager released without ``shutdown()`` then has its mediums
  /// stopped and its device unregistered, each call bounded by its own timeout.
  ///
  /// Static, so that the task holds no reference to the manager: a released manager goes away.
  static func run(owner: ObjectIdentifier, work: AsyncStream<Work>, teardown: Teardown) async {
    await ManagerTask.$owner.withValue(owner) {
      await withDiscardingTaskGroup { group in
        for await piece in work { group.addTask(operation: piece) }
        group.cancelAll()
      }
    }
    for await _ in teardown.released {
      for medium in teardown.mediums { await medium.shutdown() }
      try? await teardown.resolver.unregister(teardown.credentials)
      return
    }
  }

  /// Runs `piece` in the manager's task group; nothing runs once the manager has shut down.
  nonisolated func start(_ piece: @escaping Work) {
    workContinuation.yield(piece)
  }
}
