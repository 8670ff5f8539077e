/// Starts the tasks a ``MessageManager`` owns, marked with their manager so that its shutdown
/// knows whether it runs inside one of them.
///
/// The manager keeps every task it starts and, on ``MessageManager/shutdown()``, cancels them
/// and awaits them. A shutdown that one of its own tasks began (the resolver dropped the
/// device while it was reporting) cannot await that task, so it only cancels; a later
/// `shutdown()` from outside awaits them all. The mark names the manager: a task of one
/// manager that shuts another down still awaits the other's tasks.
enum ManagerTask {
  /// The manager whose task is running; `nil` outside every manager's tasks.
  @TaskLocal static var owner: ObjectIdentifier?

  /// Starts `body` as a task of `manager`'s; the caller keeps the task and cancels and
  /// awaits it.
  static func start(
    for manager: MessageManager, _ body: @escaping @Sendable () async -> Void
  ) -> Task<Void, Never> {
    let owner = ObjectIdentifier(manager)
    return Task { await $owner.withValue(owner) { await body() } }
  }

  /// Whether the current task is one `manager` started.
  static func isRunning(for manager: MessageManager) -> Bool {
    owner == ObjectIdentifier(manager)
  }
}
