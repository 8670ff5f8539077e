import Synchronization

/// One task hosting one discarding task group, for an actor whose work starts where nothing
/// can await it: the readers of its inputs, its chores, its timers. The actor hands each
/// piece to ``start(_:)``; ``end()`` cancels what still runs (``finish()`` lets it run to its
/// own end), and ``ended()`` returns once all of it (and the `afterwards` step) is over. The
/// actor keeps the group as a property and never a task handle of its own.
///
/// Work runs marked as this group's (``isCurrent``): a shutdown that its own work began (a
/// resolver dropping the device while the manager reports) cannot await the group it runs in,
/// so it only ends it, and a later shutdown from outside awaits it. The mark names the group,
/// so the work of one actor that shuts another down still awaits the other's.
///
/// The task holds no reference to the actor: work that needs the actor holds it weakly, so a
/// released actor goes away; its `deinit` calls ``end()``.
package struct WorkGroup: Sendable {
  /// A piece of work: it ends when its task is cancelled.
  package typealias Work = @Sendable () async -> Void

  /// The group whose work is running; `nil` outside every group's work.
  @TaskLocal private static var current: ObjectIdentifier?

  /// Names this group for ``isCurrent``, and closes it (as ``finish()`` does) when the last
  /// copy of the group goes away: a group nobody holds ends once its work is over.
  private final class Identity: Sendable {
    let work: AsyncStream<Work>.Continuation

    init(_ work: AsyncStream<Work>.Continuation) { self.work = work }

    deinit { work.finish() }
  }

  private let identity: Identity
  private var work: AsyncStream<Work>.Continuation { identity.work }
  private let task: Task<Void, Never>
  private let counter = SharedCounter()
  /// Whether the end cancels what still runs (``end()``) or lets it finish (``finish()``),
  /// and whether the loop has stopped taking work.
  private let ending = Ending()

  /// Starts the group's task.
  /// - Parameter afterwards: runs once the group has ended and all its work is over, in the
  ///   same task (not cancelled): what an actor released without a shutdown must still stop.
  package init(afterwards: @escaping @Sendable () async -> Void = {}) {
    // One per piece started: bounded by what the actor starts.
    let (pieces, work) = AsyncStream.makeStream(of: Work.self, bufferingPolicy: .unbounded)
    identity = Identity(work)
    let (id, counter, ending) = (ObjectIdentifier(identity), counter, ending)
    task = Task {
      await Self.$current.withValue(id) {
        await withDiscardingTaskGroup { group in
          for await piece in pieces {
            group.addTask {
              await piece()
              counter.add(-1)
            }
          }
          if ending.loopStopped() { group.cancelAll() }
        }
      }
      await afterwards()
    }
  }

  /// Runs `piece` in the group. Once the group has ended or finished, nothing more is taken;
  /// a piece handed in just before ``end()`` still starts, cancelled.
  package func start(_ piece: @escaping Work) {
    // Counted from here, so that ``running`` includes what the loop has yet to take.
    counter.add(1)
    if case .terminated = work.yield(piece) { counter.add(-1) }
  }

  /// Ends the group: no more work starts, and what runs is cancelled, also after
  /// ``finish()`` (then the `afterwards` step, if it runs by then, is cancelled too). Safe to
  /// call again.
  package func end() {
    let stopped = ending.cancel()
    work.finish()
    // The loop no longer looks: cancel the group's task, and with it what still runs.
    if stopped { task.cancel() }
  }

  /// Closes the group: no more work starts, and what runs goes on to its own end (a writer
  /// draining its queue, a timer), unless ``end()`` comes later.
  package func finish() { work.finish() }

  /// Returns once the group has ended and its work and the `afterwards` step are over.
  package func ended() async { await task.value }

  /// Whether the current task runs this group's work (not its `afterwards` step).
  package var isCurrent: Bool { Self.current == ObjectIdentifier(identity) }

  /// How many pieces of work were started and are not over (for tests and diagnostics).
  package var running: Int { counter.value }

  private final class Ending: Sendable {
    private let state = Mutex((cancels: false, loopStopped: false))

    /// The loop stopped taking work: whether to cancel what runs.
    func loopStopped() -> Bool {
      state.withLock {
        $0.loopStopped = true
        return $0.cancels
      }
    }

    /// ``WorkGroup/end()`` was called: whether the loop had already stopped without
    /// cancelling (after ``WorkGroup/finish()``), so the end must cancel by itself.
    func cancel() -> Bool {
      state.withLock { state in
        let mustCancel = state.loopStopped && !state.cancels
        state.cancels = true
        return mustCancel
      }
    }
  }
}
