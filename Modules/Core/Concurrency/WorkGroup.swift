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
  private let counter = Counter()
  /// Whether the end cancels what still runs (``end()``) or lets it finish (``finish()``).
  private let cancelsAtEnd = Flag()

  /// Starts the group's task.
  /// - Parameter afterwards: runs once the group has ended and all its work is over, in the
  ///   same task (not cancelled): what an actor released without a shutdown must still stop.
  package init(afterwards: @escaping @Sendable () async -> Void = {}) {
    // One per piece started: bounded by what the actor starts.
    let (pieces, work) = AsyncStream.makeStream(of: Work.self, bufferingPolicy: .unbounded)
    identity = Identity(work)
    let (id, counter, cancelsAtEnd) = (ObjectIdentifier(identity), counter, cancelsAtEnd)
    task = Task {
      await Self.$current.withValue(id) {
        await withDiscardingTaskGroup { group in
          for await piece in pieces {
            group.addTask {
              await piece()
              counter.add(-1)
            }
          }
          if cancelsAtEnd.value { group.cancelAll() }
        }
      }
      await afterwards()
    }
  }

  /// Runs `piece` in the group; nothing runs once the group has ended.
  package func start(_ piece: @escaping Work) {
    // Counted from here, so that ``running`` includes what the loop has yet to take.
    counter.add(1)
    if case .terminated = work.yield(piece) { counter.add(-1) }
  }

  /// Ends the group: no more work starts, and what runs is cancelled. Safe to call again.
  package func end() {
    cancelsAtEnd.set()
    work.finish()
  }

  /// Closes the group: no more work starts, and what runs goes on to its own end (a writer
  /// draining its queue); call one of ``end()`` and ``finish()``, once.
  package func finish() { work.finish() }

  /// Returns once the group has ended and its work and the `afterwards` step are over.
  package func ended() async { await task.value }

  /// Whether the current task runs this group's work.
  package var isCurrent: Bool { Self.current == ObjectIdentifier(identity) }

  /// How many pieces of work were started and are not over (for tests and diagnostics).
  package var running: Int { counter.value }

  private final class Flag: Sendable {
    private let state = Mutex(false)
    func set() { state.withLock { $0 = true } }
    var value: Bool { state.withLock { $0 } }
  }

  private final class Counter: Sendable {
    private let count = Mutex(0)
    func add(_ delta: Int) { count.withLock { $0 += delta } }
    var value: Int { count.withLock { $0 } }
  }
}
