public import Foundation

/// A signed-in console session as stored: which key signed in, when it was last used and
/// when it ends. The row is what makes signing out (and an idle timeout) end a session on
/// every instance; the cookie only names it.
public struct ConsoleSessionRecord: Sendable, Hashable {
  public var keyID: String
  public var lastSeenAt: Date
  public var expiresAt: Date
}
