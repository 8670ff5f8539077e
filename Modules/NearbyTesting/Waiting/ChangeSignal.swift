import Synchronization

/// Wakes the waits of a test when what they watch changes: whoever changes it calls
/// ``changed()``, and ``wait(timeout:until:)`` asks its condition again at each change, never
/// on a timer. A wait then ends the moment its condition comes true, however loaded the
/// machine is, and a test spends no time asking a condition nothing has changed.
///
/// ``Watched``, ``StreamRecorder`` and ``FoundLostRecorder`` signal their changes with one;
/// give one to a holder of your own. All methods may be called from any thread; a `Mutex`
/// guards the waiters.
public final class ChangeSignal: Sendable {
  private struct State {
    var version: UInt64 = 0
    var waiters: [UInt64: ParkedWaiter] = [:]
    var nextWaiter: UInt64 = 0
  }
  private let state = Mutex(State())

  public init() {}

  /// Says that what the waits watch has changed: each wakes and asks its condition again.
  public func changed() {
    let woken = state.withLock { state in
      state.version &+= 1
      defer { state.waiters = [:] }
      return Array(state.waiters.values)
    }
    for waiter in woken { waiter.resume() }
  }

  /// Waits until `condition` holds, asking it now and after each change, for at most
  /// `timeout`; returns whether it held (`false` also when the task is cancelled first).
  /// `condition` runs on the caller's task, so it may read anything the caller can.
  public func wait(
    timeout: Duration = defaultWaitBound, until condition: () throws -> Bool
  ) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while true {
      let seen = state.withLock { $0.version }
      if try condition() { return true }
      guard ContinuousClock.now < deadline, !Task.isCancelled else { return false }
      await nextChange(after: seen, before: deadline)
    }
  }

  /// Returns at the first change after version `seen` (at once if there was one), at
  /// `deadline`, or when the task is cancelled, whichever comes first.
  private func nextChange(after seen: UInt64, before deadline: ContinuousClock.Instant) async {
    let waiter = ParkedWaiter()
    let registered = state.withLock { state -> UInt64? in
      guard state.version == seen else { return nil }
      defer { state.nextWaiter += 1 }
      state.waiters[state.nextWaiter] = waiter
      return state.nextWaiter
    }
    guard let registered else { return }
    await withTaskGroup(of: Void.self) { group in
      group.addTask { try? await Task.sleep(until: deadline, clock: .continuous) }
      group.addTask { await waiter.parked() }
      await group.next()
      group.cancelAll()
      waiter.resume()
    }
    state.withLock { _ = $0.waiters.removeValue(forKey: registered) }
  }
}

/// One parked wait of a ``ChangeSignal``: resumed once, by a change or by its deadline,
/// whichever comes first (a resume before it parks makes it return at once).
private final class ParkedWaiter: Sendable {
  private struct State {
    var continuation: CheckedContinuation<Void, Never>?
    var resumed = false
  }
  private let state = Mutex(State())

  func parked() async {
    await withCheckedContinuation { continuation in
      let now = state.withLock { state in
        if !state.resumed { state.continuation = continuation }
        return state.resumed
      }
      if now { continuation.resume() }
    }
  }

  func resume() {
    let continuation = state.withLock { state in
      state.resumed = true
      defer { state.continuation = nil }
      return state.continuation
    }
    continuation?.resume()
  }
}
