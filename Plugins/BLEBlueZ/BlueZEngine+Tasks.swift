import Core

extension BlueZEngine {
  /// Starts `body` in the engine's work group (``BlueZEngine/work``): the readers of BlueZ's
  /// signals and of bluetoothd's name owner, the presence ticker and the scan watchdog. It is
  /// cancelled and awaited by ``shutdown()``; `body` ends when its task is cancelled.
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
