/// Starts the tasks a ``MessageManager`` owns, marked so that its shutdown knows whether it
/// runs inside one of them.
///
/// The manager keeps every task it starts and, on ``MessageManager/shutdown()``, cancels them
/// and awaits them. A shutdown that one of those tasks began (the resolver dropped the
/// device while it was reporting) cannot await that task, so it only cancels; a later
/// `shutdown()` from outside awaits them all.
enum ManagerTask {
  /// Whether the current task is one the manager started.
  @TaskLocal static var isCurrent = false

  /// Starts `body` as a task of the manager's; the caller keeps the task and cancels and
  /// awaits it.
  static func start(_ body: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
    Task { await $isCurrent.withValue(true) { await body() } }
  }
}
