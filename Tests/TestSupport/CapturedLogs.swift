public import Logging
import Synchronization

/// A log handler that keeps every message, for tests that check what was logged.
public struct CapturedLogs: LogHandler {
  public final class Storage: Sendable {
    let lines = Mutex<[(Logger.Level, String)]>([])
  }
  public let storage = Storage()
  public var metadata: Logger.Metadata = [:]
  public var logLevel: Logger.Level = .trace

  public init() {}

  public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
    get { metadata[key] }
    set { metadata[key] = newValue }
  }

  public func log(event: LogEvent) {
    storage.lines.withLock { $0.append((event.level, "\(event.message)")) }
  }

  public var messages: [(Logger.Level, String)] { storage.lines.withLock { $0 } }
}
