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
  /// Inputs written and not yet ``taken()`` (shared by the writers and the loop).
  private let unread = SharedCounter()

  init() {
    (stream, continuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
  }

  /// Asks for a run of `chore`.
  func request(_ chore: ManagerLoopStateMachine.Chore) { write(.requested(chore)) }

  /// Says a handle was let go while active.
  func release(_ release: ManagerLoopStateMachine.Release) { write(.released(release)) }

  /// Inputs written that the loop has not handed in yet.
  var pending: Int { unread.value }

  /// Says the loop handed one input in.
  func taken() { unread.add(-1) }

  /// Counted before it is written, so the count is never short of what the loop may read.
  private func write(_ input: Input) {
    unread.add(1)
    guard case .enqueued = continuation.yield(input) else {
      unread.add(-1)
      return
    }
  }

  /// Ends the stream: the loop ends once it has read what was written before.
  func finish() { continuation.finish() }
}
