import Core
import Logging
import Synchronization

/// An in-memory permission gate: the test sets the recorded answer and what asking returns.
final class TestGate: PermissionGate {
  private struct State {
    var answer: Bool?
    var askResult: Bool?
    var asks = 0
    var recorded: [Bool] = []
    var continuations: [AsyncStream<Bool?>.Continuation] = []
  }
  private let state: Mutex<State>

  init(answer: Bool? = nil, askResult: Bool? = nil) {
    state = Mutex(State(answer: answer, askResult: askResult))
  }

  var asks: Int { state.withLock { $0.asks } }
  var recorded: [Bool] { state.withLock { $0.recorded } }

  /// Changes the answer as another process would, and tells the managers.
  func change(to answer: Bool?) {
    let continuations = state.withLock { state in
      state.answer = answer
      return state.continuations
    }
    for continuation in continuations { continuation.yield(answer) }
  }

  /// Changes the answer without telling the managers yet (the notice of another process's
  /// change still on its way).
  func changeQuietly(to answer: Bool?) { state.withLock { $0.answer = answer } }

  func answer() async -> Bool? { state.withLock { $0.answer } }

  func record(_ granted: Bool) async throws {
    state.withLock {
      $0.answer = granted
      $0.recorded.append(granted)
    }
  }

  func ask(logger: Logger) async -> Bool? {
    state.withLock {
      $0.asks += 1
      return $0.askResult
    }
  }

  var howToGrant: String { "test: change(to: true)" }

  func answers() -> AsyncStream<Bool?> {
    let (stream, continuation) = AsyncStream.makeStream(of: Bool?.self)
    state.withLock { $0.continuations.append(continuation) }
    return stream
  }
}
