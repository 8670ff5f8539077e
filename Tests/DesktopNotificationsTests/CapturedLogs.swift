import Logging
import Synchronization

/// A log handler that keeps every message, for tests that check what was logged.
struct CapturedLogs: LogHandler {
  final class Storage: Sendable {
    let lines = Mutex<[(Logger.Level, String)]>([])
  }
  let storage = Storage()
  var metadata: Logger.Metadata = [:]
  var logLevel: Logger.Level = .trace

  subscript(metadataKey key: String) -> Logger.Metadata.Value? {
    get { metadata[key] }
    set { metadata[key] = newValue }
  }

  func log(event: LogEvent) {
    storage.lines.withLock { $0.append((event.level, "\(event.message)")) }
  }

  var messages: [(Logger.Level, String)] { storage.lines.withLock { $0 } }
}
