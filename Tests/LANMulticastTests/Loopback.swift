@testable import LANMulticast

/// Every test pins the loopback interface and a port of its own, so nothing reaches the
/// machine's real network and concurrent tests (or a `nearby` running here) do not hear each
/// other.
enum Loopback {
  static func configuration(port: UInt16 = randomPort()) -> LANMulticastConfiguration {
    LANMulticastConfiguration(
      port: port, interface: "lo", announceInterval: .milliseconds(50),
      sightingInterval: .milliseconds(100))
  }

  /// A port for a medium, below the kernel's ephemeral range (32768–60999 by default): the
  /// peer transports' unicast sockets take ephemeral ports without `SO_REUSEADDR`, and a
  /// medium's socket could not bind beside one on the same number (`EADDRINUSE`).
  static func randomPort() -> UInt16 { UInt16.random(in: 20_000...32_767) }

  /// A port for a peer transport's who-has group, below the kernel's ephemeral range
  /// (32768–60999 by default): the transports' unicast sockets take ephemeral ports without
  /// `SO_REUSEADDR`, and the group socket could not bind beside one on the same number.
  static func randomGroupPort() -> UInt16 { UInt16.random(in: 10_000...19_999) }
}
