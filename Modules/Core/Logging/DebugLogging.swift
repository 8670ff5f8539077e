import Synchronization

/// The seed's process-wide debug switch. It is the one piece of process-wide state in the
/// library, kept because the seed's API is a static call; an atomic guards it.
enum DebugLogging {
  static let enabled = Atomic<Bool>(false)
}

extension MessageManager {
  /// Turns debug logging on or off for managers created after this call (as in the seed:
  /// call it before creating a manager). It raises the configured logger to `.debug`.
  public static func setDebugLoggingEnabled(_ enabled: Bool) {
    DebugLogging.enabled.store(enabled, ordering: .relaxed)
  }

  /// Whether debug logging is on for new managers.
  public static var isDebugLoggingEnabled: Bool {
    DebugLogging.enabled.load(ordering: .relaxed)
  }
}
