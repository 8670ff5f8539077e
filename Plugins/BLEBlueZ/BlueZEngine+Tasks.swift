import Core

extension BlueZEngine {
  /// Starts `body` in the engine's work group (``BlueZEngine/work``): the engine's loop
  /// (BlueZEngine+Loop.swift). It is cancelled and awaited by ``shutdown()``; `body` ends when
  /// its task is cancelled.
  func own(_ body: @escaping WorkGroup.Work) { work.start(body) }

  /// Whether the current task runs the engine's work (its shutdown cannot await it).
  var isInOwnTask: Bool { work.isCurrent }

  /// Ends the engine's work and, unless called from inside it, awaits its end.
  func endTasks() async {
    work.end()
    guard !isInOwnTask else { return }
    await work.ended()
  }
}
