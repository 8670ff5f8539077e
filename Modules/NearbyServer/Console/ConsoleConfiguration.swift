/// The operator's web console under `/console` (see the operator's guide, "Web console").
public struct ConsoleConfiguration: Sendable {
  /// Whether the server serves the console (on by default; `nearby-server --no-console`).
  public var isEnabled = true
  /// How long a sign-in lasts; then the operator signs in again.
  public var sessionLifetime: Duration = .seconds(8 * 3600)
  /// How long a session may go unused; then it ends and the operator signs in again.
  public var sessionIdleTimeout: Duration = .seconds(30 * 60)
  /// The most live views (event streams) one project, and one session, has open at once on
  /// an instance; past either, a new one is refused (429) and none is closed.
  public var liveViewsPerProject = 8
  public var liveViewsPerSession = 2
  /// The secret that signs session cookies, 32 bytes or more. Sessions are stored in the
  /// database and named by a signed cookie (see `ConsoleSessionSigner`): every instance
  /// behind one load balancer must have the same secret, or a session works only on the
  /// instance that issued it. Nil: a random secret per process (one instance; its sessions
  /// end when it restarts).
  public var sessionSecret: [UInt8]?
  /// Whether session cookies are marked `Secure` whatever the request: set it when a TLS
  /// proxy in front of the server does not send `X-Forwarded-Proto` (or is not a trusted
  /// proxy). Otherwise they are `Secure` for requests a trusted proxy forwarded with
  /// `X-Forwarded-Proto: https`.
  public var alwaysSecureCookies = false

  public init() {}
}
