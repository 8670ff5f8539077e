import CSystemd

/// Tells systemd how a `Type=notify` service is doing, through `sd_notify(3)` on the socket
/// named by `$NOTIFY_SOCKET`. Outside systemd (no `$NOTIFY_SOCKET`) every call does nothing
/// and returns false.
///
/// `sd_notify` sends one datagram on a Unix socket and does not wait for an answer; it is
/// called on the caller's thread.
public struct SystemdNotifier: Sendable {
  public init() {}

  /// Sends `state` (newline-separated `KEY=value` assignments, see `sd_notify(3)`).
  ///
  /// - Returns: whether it was sent (false outside systemd or when sending failed).
  @discardableResult
  public func notify(_ state: String) -> Bool {
    sd_notify(0, state) > 0
  }

  /// `READY=1`, with a `STATUS=` line when `status` is given: startup has finished.
  @discardableResult
  public func ready(status: String? = nil) -> Bool {
    notify(status.map { "READY=1\nSTATUS=\(Self.oneLine($0))" } ?? "READY=1")
  }

  /// `STATUS=`: a one-line description shown by `systemctl status`.
  @discardableResult
  public func status(_ status: String) -> Bool {
    notify("STATUS=\(Self.oneLine(status))")
  }

  /// `STOPPING=1`: shutdown has begun.
  @discardableResult
  public func stopping(status: String? = nil) -> Bool {
    notify(status.map { "STOPPING=1\nSTATUS=\(Self.oneLine($0))" } ?? "STOPPING=1")
  }

  private static func oneLine(_ text: String) -> String {
    text.replacingOccurrences(of: "\n", with: " ")
  }
}

extension String {
  fileprivate func replacingOccurrences(of target: String, with replacement: String) -> String {
    split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
  }
}
