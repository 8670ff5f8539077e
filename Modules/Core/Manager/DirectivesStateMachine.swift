import Strategy
import Tokens

/// What a manager decides about the resolver's directives, apart from doing it: which
/// answer to follow, when to ask again, and what each medium must do.
///
/// - **Newest only.** Answers to concurrent reports may arrive in any order; each carries a
///   revision, and only one newer than the directives followed is followed.
/// - **Refresh.** The manager asks again when the token is due to rotate
///   (``Directives/refreshDelay``, plus a small margin so that it asks after the rotation):
///   the timer is armed by the first directives, re-armed when the token changes or a
///   refresh was answered, and left alone otherwise. A failed refresh is retried after a
///   doubling delay with jitter (``Backoff``, 1 s to a minute): devices that lost the
///   resolver together do not all come back in the same second. Each timer has a
///   generation; a timer that fires after being replaced does nothing.
/// - **Mediums.** A medium transmits the token when the directives name its kind for
///   broadcast and it can broadcast, and scans when they name its kind for scanning and it
///   can scan (``want(kind:capabilities:)``).
///
/// A value owned by the manager's actor, which performs the ``Action``s (a timer task on the
/// manager's clock, the medium calls). It reads no clock.
struct DirectivesStateMachine {
  /// What the performer does.
  enum Action: Equatable {
    /// Replace the refresh timer: after `delay`, call ``refreshDue(_:)`` with `generation`.
    case scheduleRefresh(after: Duration, generation: UInt64)
    /// Bring every medium in line with ``directives`` (``want(kind:capabilities:)``).
    case reconcileMediums
  }

  /// What one medium should do under the directives followed.
  struct MediumWant: Equatable {
    /// The token to transmit, with the digest beside it; `nil`: transmit nothing.
    var transmission: Transmission?
    /// Whether to scan for tokens.
    var scan: Bool
  }

  /// What a medium transmits: a token, and the digest beside it (nil: none).
  struct Transmission: Equatable {
    var token: Token
    var digest: HandlesDigest? = nil
  }

  /// Added to the refresh delay, so that the refresh comes after the token rotated.
  static let refreshMargin = Duration.milliseconds(10)

  /// The refresh timer: each one armed has a new generation, so one that fires after being
  /// replaced is known by its number.
  private enum Timer {
    /// Armed and not fired.
    case armed(generation: UInt64)
    /// Fired (or never armed): none until the refresh is answered or fails.
    case idle(lastGeneration: UInt64)

    var lastGeneration: UInt64 {
      switch self {
      case .armed(let generation), .idle(let generation): generation
      }
    }
  }

  /// The newest directives followed.
  private(set) var directives: Directives?
  private var timer = Timer.idle(lastGeneration: 0)
  private var backoff: Backoff

  init(backoff: Backoff = Backoff(initial: .seconds(1), maximum: .seconds(60))) {
    self.backoff = backoff
  }

  /// The resolver answered with `new`: to a report, or to a refresh (`isRefresh`).
  mutating func answered(_ new: Directives, isRefresh: Bool) -> [Action] {
    if isRefresh { backoff.reset() }
    guard new.revision > directives?.revision ?? 0 else { return [] }
    let tokenChanged = directives?.token != new.token
    directives = new
    var actions: [Action] = []
    let isArmed = if case .armed = timer { true } else { false }
    if tokenChanged || isRefresh || !isArmed { actions.append(arm(after: new.refreshDelay)) }
    actions.append(.reconcileMediums)
    return actions
  }

  /// The timer of `generation` fired: whether to refresh now (false when another timer
  /// replaced it). From now until the refresh is answered or fails, no timer is armed.
  mutating func refreshDue(_ generation: UInt64) -> Bool {
    guard case .armed(generation) = timer else { return false }
    timer = .idle(lastGeneration: generation)
    return true
  }

  /// A refresh failed (not because the resolver dropped the device): try again later.
  mutating func refreshFailed() -> Action { arm(after: backoff.next()) }

  /// What a medium of `kind` with `capabilities` should do now.
  func want(kind: DiscoveryMediums, capabilities: MediumCapabilities) -> MediumWant {
    guard let directives else { return MediumWant(transmission: nil, scan: false) }
    let broadcast = directives.broadcast.contains(kind) && capabilities.contains(.broadcast)
    return MediumWant(
      transmission: broadcast
        ? Transmission(token: directives.token, digest: directives.digest) : nil,
      scan: directives.scan.contains(kind) && capabilities.contains(.scan))
  }

  private mutating func arm(after delay: Duration) -> Action {
    let generation = timer.lastGeneration &+ 1
    timer = .armed(generation: generation)
    return .scheduleRefresh(after: delay + Self.refreshMargin, generation: generation)
  }
}
