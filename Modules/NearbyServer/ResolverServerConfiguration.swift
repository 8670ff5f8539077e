public import Resolution
public import ServerStorage

/// How a resolver server runs. Every value has a default that suits one machine.
public struct ResolverServerConfiguration: Sendable {
  /// The address to listen on (`127.0.0.1`: this machine only; `0.0.0.0`: every interface).
  public var host = "127.0.0.1"
  /// The TCP port; 0 picks a free one (tests).
  public var port = 7171
  /// lost-after, token lifetime and grace, and the limits per device: the default
  /// `maximumHandlesPerDevice` (`ResolutionConfiguration.defaultMaximumHandlesPerDevice`, 256
  /// publications and 256 subscriptions) is the server's policy.
  public var resolution = ResolutionConfiguration()
  /// How long the event log keeps events for streams that reconnect.
  public var eventRetention: Duration = .seconds(3600)
  /// How often due deadlines (lost, expiry) are handled.
  public var sweepInterval: Duration = .milliseconds(250)
  /// How often an open event stream reads the log on its own, as a safety net: events written
  /// by this instance wake their streams at once, and on PostgreSQL so do other instances'
  /// (LISTEN/NOTIFY), so no stream waits for this in normal operation.
  public var eventPollInterval: Duration = .seconds(30)
  /// How long an idle event stream waits before sending a `keepalive` event.
  public var heartbeat: Duration = .seconds(15)
  /// Requests a second per API key on average, and the burst allowed above it. Every rate
  /// here is for all instances together: an instance allows its share (the rate divided by
  /// the instances that share its database, counted there).
  public var requestsPerSecond: Double = 500
  public var burst: Double = 1000
  /// Requests a second per device (reports, events, unregister) and its burst.
  public var requestsPerSecondPerDevice: Double = 50
  public var burstPerDevice: Double = 100
  /// Requests a second per client address (a NAT puts many devices behind one) and its
  /// burst. Behind a reverse proxy, list it in ``trustedProxies``: otherwise every request
  /// comes from the proxy's address.
  public var requestsPerSecondPerAddress: Double = 1000
  public var burstPerAddress: Double = 2000
  /// Refused API keys (unknown, revoked, malformed or missing) a second per address, and the
  /// burst: past it, the address gets 429 without its keys being looked up.
  public var refusedKeysPerSecondPerAddress: Double = 5
  public var refusedKeyBurstPerAddress: Double = 20
  /// What the request rates above are measured on: the system's continuous clock; a test
  /// passes a clock it moves by hand, so that a rate's verdict does not depend on how fast
  /// its requests happen to run.
  public var clock: any Clock<Duration> = ContinuousClock()
  /// The addresses of reverse proxies in front of the server (IP addresses as text, such as
  /// `127.0.0.1`): for a request from one of them, the client's address is the last one in
  /// `X-Forwarded-For` that is not a trusted proxy. Empty: the header is ignored (anyone could
  /// write it).
  public var trustedProxies: Set<String> = []
  /// The most connections open at once; past it, new ones wait to be accepted. Each device
  /// keeps one open for its event stream: raise the process's open-file limit with it.
  public var maximumConnections = 10_000
  /// The most connections open at once from one client address (a trusted proxy's are not
  /// counted: its clients are behind it); past it, a new one is closed at once. A NAT puts
  /// many devices behind one address, each with its event stream: raise it for such sites.
  public var maximumConnectionsPerAddress = 1000
  /// The most device event streams open at once on this instance with one API key, and from
  /// one client address; past either, a new stream is answered 429. A client key ships in
  /// every app: without the first, whoever extracts one could fill the connection limit.
  public var maximumEventStreamsPerKey = 5000
  public var maximumEventStreamsPerAddress = 500
  /// Whether `/metrics` needs an admin API key (`X-Nearby-API-Key`, or `Authorization:
  /// Bearer <key>` as Prometheus sends it); on by default: its counters are the whole
  /// server's. Off (`nearby-server --open-metrics`): anyone who reaches the port reads them.
  public var metricsRequireKey = true
  /// How long an API key lookup is remembered (a revoked key works this long at most).
  public var apiKeyCacheLifetime: Duration = .seconds(5)
  /// How many devices and stored bytes a project keeps.
  public var projectQuotas = ProjectQuotas()
  /// How many beacons, EID beacons and attachments a project keeps, and the smallest EID
  /// rotation exponent.
  public var beaconLimits = BeaconLimits()
  /// When beacon diagnostics raise their alerts (low battery, low activity).
  public var diagnostics = DiagnosticsSettings()
  /// The largest request body, in bytes (a report with a few 100 KiB messages fits).
  public var maximumBodyBytes = 4 * 1024 * 1024
  /// How long a connection may send nothing while the server waits for (the rest of) a
  /// request, or between requests, before it is closed: a client that opens connections and
  /// trickles nothing cannot hold them. An answer being sent (an event stream) is not idle.
  public var idleTimeout: Duration = .seconds(30)
  /// How long a connection has to deliver a whole request head (its request line and
  /// headers) after it opens, or after the previous answer ends; then it is closed. Bounds a
  /// client that trickles a header a byte at a time, which the idle timeout does not.
  /// Headers are also bounded: 100 fields, 16 KiB each, 64 KiB in all (431 past that).
  public var requestHeadTimeout: Duration = .seconds(10)
  /// How long a client has to send a whole request body once its head arrived; then the
  /// connection is closed. Bounds a client that trickles a large body a byte at a time,
  /// which the idle timeout (reset by every byte) does not. This is the deadline of a request
  /// that authenticated (an API key, a console session); before that,
  /// ``unauthenticatedBodyTimeout``.
  public var requestBodyTimeout: Duration = .seconds(30)
  /// How long a client that has not authenticated has to send a whole request body once its
  /// head arrived (at most ``requestBodyTimeout``); then the connection is closed. Covers
  /// every route that reads a body before a credential is checked, as the console's sign-in
  /// form (which carries the key): whoever holds no key cannot hold a connection with a
  /// trickled body for longer than this.
  public var unauthenticatedBodyTimeout: Duration = .seconds(10)
  /// The web console under `/console` (on by default; `console.isEnabled = false` turns it
  /// off).
  public var console = ConsoleConfiguration()
  /// HTTPS: the certificate and key the server presents (nil, the default: plain HTTP, for
  /// loopback or behind a TLS proxy). Browsers give a page the microphone only over HTTPS
  /// (or from localhost), so phones on a LAN need this or a proxy.
  public var tls: ServerCertificates?

  public init() {}
}
