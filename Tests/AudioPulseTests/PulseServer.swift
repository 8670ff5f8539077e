import AudioPulse
import Core
import Foundation
import Logging
import Testing

/// The PulseAudio servers `Tools/scripts/test.sh` starts (Tools/scripts/services/pulseaudio.sh).
enum PulseServer {
  /// The working server's address; a test needing it fails with how to start it.
  static func address() throws -> String {
    try #require(
      ProcessInfo.processInfo.environment["NEARBY_TEST_PULSE_SERVER"],
      "NEARBY_TEST_PULSE_SERVER is not set: run the tests with Tools/scripts/test.sh")
  }

  /// A server that refuses every client.
  static func denyingAddress() throws -> String {
    try #require(
      ProcessInfo.processInfo.environment["NEARBY_TEST_PULSE_DENYING_SERVER"],
      "NEARBY_TEST_PULSE_DENYING_SERVER is not set: run the tests with Tools/scripts/test.sh")
  }

  /// Playing into `sink` and recording its monitor, on the test server.
  static func configuration(sink: String, server: String? = nil) throws
    -> PulseAudioConfiguration
  {
    PulseAudioConfiguration(
      server: try server ?? address(), sink: sink, source: "\(sink).monitor",
      interval: 1.2...1.6)
  }

  static func medium(sink: String, server: String? = nil) throws -> PulseAudioMedium {
    try PulseAudioMedium(
      configuration: configuration(sink: sink, server: server),
      logger: Logger(label: "test.pulse"))
  }
}
