public import Foundation
public import Logging

/// Where a service logs: the journal when systemd started it with stderr connected to the
/// journal, stderr otherwise.
public enum LogDestination: String, Sendable, CaseIterable {
  case journal
  case stderr

  /// The journal when `$JOURNAL_STREAM` (`device:inode`, set by systemd) names the file
  /// stderr is: as `systemd.exec(5)` advises, a stderr redirected elsewhere by the service's
  /// own caller means stderr.
  public static func detect(
    environment: [String: String] = ProcessInfo.processInfo.environment,
    stderrIdentity: (device: UInt64, inode: UInt64)? = Self.stderrIdentity()
  ) -> LogDestination {
    guard let stream = environment["JOURNAL_STREAM"], let stderrIdentity else { return .stderr }
    let parts = stream.split(separator: ":")
    guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else {
      return .stderr
    }
    return device == stderrIdentity.device && inode == stderrIdentity.inode ? .journal : .stderr
  }

  /// The device and inode of file descriptor 2.
  public static func stderrIdentity() -> (device: UInt64, inode: UInt64)? {
    var info = stat()
    guard fstat(2, &info) == 0 else { return nil }
    return (UInt64(info.st_dev), UInt64(info.st_ino))
  }

  /// A swift-log handler factory for this destination; journal entries carry
  /// `SYSLOG_IDENTIFIER=identifier`.
  public func handlerFactory(identifier: String) -> @Sendable (String) -> any LogHandler {
    switch self {
    case .journal: { JournalLogHandler(label: $0, identifier: identifier) }
    case .stderr: { StreamLogHandler.standardError(label: $0) }
    }
  }
}
