/// Marks the work running in a ``MessageManager``'s task group with its manager, so that its
/// shutdown knows whether it runs inside that work.
///
/// ``MessageManager/shutdown()`` ends the manager's task group and awaits it. A shutdown that
/// the group's own work began (the resolver dropped the device while it was reporting) cannot
/// await the group it runs in, so it only ends it; a later `shutdown()` from outside awaits
/// it. The mark names the manager: work of one manager that shuts another down still awaits
/// the other's group.
enum ManagerTask {
  /// The manager whose work is running; `nil` outside every manager's work.
  @TaskLocal static var owner: ObjectIdentifier?

  /// Whether the current task is part of `manager`'s work.
  static func isRunning(for manager: MessageManager) -> Bool {
    owner == ObjectIdentifier(manager)
  }
}
