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

  static func randomPort() -> UInt16 { UInt16.random(in: 20_000...60_000) }
}
