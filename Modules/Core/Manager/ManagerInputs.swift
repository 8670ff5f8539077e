/// The stream the manager's loop reads (``ManagerLoopStateMachine/Input``), written where
/// nothing can await and nothing is on the manager's actor: a medium's sighting reader, a
/// handle's `deinit`. The loop hands each input to ``MessageManager/accept(_:)``.
///
/// Unbounded: what could come in bursts is coalesced before it is written (the inbox asks for
/// one flush per batch) or by the machine (a chore asked for while it runs runs once more),
/// and releases are one per handle made.
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

  /// Ends the stream: the loop ends once it has read what was written before.
  func finish() { continuation.finish() }
}
