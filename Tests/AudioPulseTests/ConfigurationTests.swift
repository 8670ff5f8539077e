import AudioPulse
import Logging
import Testing

/// A configuration whose timing cannot be played is refused when the medium is made, naming
/// the field, instead of trapping on the playback thread or filling the air.
@Suite("PulseAudio configuration")
struct ConfigurationTests {
  @Test("the defaults and the tests' shorter gaps are accepted")
  func defaultsPass() throws {
    try PulseAudioConfiguration().validate()
    try PulseAudioConfiguration(interval: 1.2...1.6).validate()
  }

  @Test(
    "timing out of range is refused, naming the field",
    arguments: [
      (PulseAudioConfiguration(interval: 2...Double.infinity), "interval"),
      (PulseAudioConfiguration(interval: -3 ... -1), "interval"),
      (PulseAudioConfiguration(interval: 0.5...3), "interval"),
      (PulseAudioConfiguration(answeredInterval: 4...1e300), "answeredInterval"),
      (PulseAudioConfiguration(playbackLatency: 0), "playbackLatency"),
      (PulseAudioConfiguration(playbackLatency: .nan), "playbackLatency"),
      (PulseAudioConfiguration(recordFragment: 30), "recordFragment"),
    ])
  func refused(_ configuration: PulseAudioConfiguration, field: String) {
    #expect {
      try PulseAudioMedium(configuration: configuration, logger: Logger(label: "test"))
    } throws: { error in
      guard case .outOfRange(let named, _, _) = error as? PulseAudioConfigurationError else {
        return false
      }
      return named == field && "\(error)".contains("PulseAudioConfiguration.\(field)")
    }
  }
}
