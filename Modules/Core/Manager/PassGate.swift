/// Lets one pass of a reconcile run at a time, and makes a request that comes while it runs
/// count: the pass awaits mediums, so what it read may change before it ends, and it must then
/// look once more instead of the request being lost.
struct PassGate {
  private enum State {
    case idle
    case running
    /// Running, and asked for again since the pass last looked.
    case runningThenAgain
  }

  private var state = State.idle

  /// Starts a pass and returns true if none runs; else asks the running pass to look again
  /// and returns false.
  mutating func begin() -> Bool {
    switch state {
    case .idle:
      state = .running
      return true
    case .running, .runningThenAgain:
      state = .runningThenAgain
      return false
    }
  }

  /// Whether the pass was asked for again since it last looked; the request is taken.
  mutating func takeRequest() -> Bool {
    switch state {
    case .idle:
      preconditionFailure("a pass looked for requests while none ran")
    case .running:
      return false
    case .runningThenAgain:
      state = .running
      return true
    }
  }

  /// Ends the running pass.
  mutating func end() {
    guard case .idle = state else {
      state = .idle
      return
    }
    preconditionFailure("a pass ended that never began")
  }
}
