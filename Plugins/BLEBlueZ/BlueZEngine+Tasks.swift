/// The tasks a ``BlueZEngine`` owns: the readers of BlueZ's signals and of bluetoothd's name
/// owner, the presence ticker and the scan watchdog.
///
/// The engine keeps every task it starts (``BlueZEngine/tasks``) until the task ends and, on
/// ``BlueZEngine/shutdown()``, cancels them and awaits them, as an owner does in the
/// swift-service-lifecycle sense. Each runs marked with its engine (``engine``): a shutdown
/// begun inside one of them cannot await that task, so it only cancels; a later `shutdown()`
/// from outside awaits them all.
enum BlueZEngineTask {
  /// The engine whose task is running, `nil` outside every engine's tasks.
  @TaskLocal static var engine: ObjectIdentifier?
}

extension BlueZEngine {
  /// Starts `body` as one of the engine's tasks: kept in ``tasks`` until it ends, cancelled
  /// and awaited by ``shutdown()``. `body` ends when its task is cancelled.
  func own(_ body: @escaping @Sendable () async -> Void) {
    nextTaskID += 1
    let id = nextTaskID
    let engine = ObjectIdentifier(self)
    tasks[id] = Task { [weak self] in
      await BlueZEngineTask.$engine.withValue(engine) { await body() }
      await self?.ended(id)
    }
  }

  /// The task `id` ended: the engine no longer keeps it.
  private func ended(_ id: Int) {
    tasks[id] = nil
    endedTasks += 1
  }

  /// Whether the current task is one this engine owns (its shutdown cannot await it).
  var isInOwnTask: Bool { BlueZEngineTask.engine == ObjectIdentifier(self) }

  /// Cancels the engine's tasks and, unless called from one of them, awaits their end.
  func endTasks() async {
    let running = Array(tasks.values)
    for task in running { task.cancel() }
    guard !isInOwnTask else { return }
    for task in running { await task.value }
  }
}
