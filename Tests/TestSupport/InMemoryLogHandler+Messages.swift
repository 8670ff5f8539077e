public import InMemoryLogging
public import Logging

/// swift-log's in-memory handler, as the tests that check what was logged use it.
extension InMemoryLogHandler {
  /// A handler that keeps every level, trace included (the handler's own default is `.info`).
  public static func keepingEverything() -> InMemoryLogHandler {
    var handler = InMemoryLogHandler()
    handler.logLevel = .trace
    return handler
  }

  /// Each kept entry's level and message text, oldest first.
  public var messages: [(Logger.Level, String)] {
    entries.map { ($0.level, "\($0.message)") }
  }
}
