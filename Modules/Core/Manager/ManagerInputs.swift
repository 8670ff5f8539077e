/// The one stream the manager's loop reads (``ManagerLoopStateMachine/Input``), written from
/// where nothing can await the work: a medium's sighting reader, an event dispatch, a handle's
/// `deinit`, a timer that fired, a chore that ended.
///
/// Unbounded: the loop never awaits the work it starts (each run is a task of its group), so
/// it takes inputs as fast as they come; what could come in bursts is already coalesced before
/// it is written (the inbox asks for one flush per batch) or by the machine (a chore asked for
/// while it runs runs once more), and releases are one per handle made.
struct ManagerInputs: Sendable {
  typealias Input = ManagerLoopStateMachine.Input

  let stream: AsyncStream<Input>
  private let continuation: AsyncStream<Input>.Continuation

  init() {
    (stream, continuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
  }

  /// Asks for a run of `chore`.
  func request(_ chore: ManagerLoopStateMachine.Chore) { continuation.yield(.requested(chore)) }

  /// Says a handle was let go while active.
  func release(_ release: ManagerLoopStateMachine.Release) {
    continuation.yield(.released(release))
  }

  /// Asks for `timer` to fire at `deadline` on the manager's clock.
  func schedule(_ timer: ManagerLoopStateMachine.Timer, at deadline: NearbyClock.Instant) {
    continuation.yield(.schedule(timer, at: deadline))
  }

  /// Writes what the loop itself learnt (a run ended, a timer fired).
  func send(_ input: Input) { continuation.yield(input) }

  /// Ends the stream: the loop ends once it has read what was written before.
  func finish() { continuation.finish() }
}
