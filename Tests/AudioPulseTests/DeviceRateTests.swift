import TestSupport
import Core
import MediumTestKit
import Testing
import Tokens

@testable import AudioPulse
import NearbyTesting

/// Streams open at the device's own rate (read from the server), so nothing is resampled.
@Suite("PulseAudio device rate", .serialized)
struct DeviceRateTests {
  @Test(
    "the rate of a sink and of a monitor source is read from the server", .requires(.pulseaudio))
  func readsRates() throws {
    let server = try PulseServer.address()
    #expect(
      PulseDeviceRate.sampleRate(server: server, device: "nearby_44k", isSink: true) == 44_100)
    #expect(
      PulseDeviceRate.sampleRate(server: server, device: "nearby.monitor", isSink: false) == 48_000)
    #expect(PulseDeviceRate.sampleRate(server: server, device: "no_such_sink", isSink: true) == nil)
  }

  @Test("two mediums on a 44.1 kHz device hear each other at that rate", .requires(.pulseaudio))
  func fortyFourKilohertz() async throws {
    let sender = try PulseServer.medium(sink: "nearby_44k")
    let receiver = try PulseServer.medium(sink: "nearby_44k")
    let sightings = StreamRecorder(receiver.sightings)
    try await receiver.startScanning()
    let token = Token.random()
    try await sender.transmit(token)
    #expect(await sightings.first(timeout: .seconds(6)) { $0.token == token } != nil)
    await sender.shutdown()
    await receiver.shutdown()
  }

  @Test("a 16 kHz device cannot carry the band: unavailable, saying why", .requires(.pulseaudio))
  func sixteenKilohertz() async throws {
    let medium = try PulseServer.medium(sink: "nearby_16k")
    let status = StreamRecorder(medium.statusUpdates)
    let first = await status.first()
    guard case .unavailable(let text) = first else {
      Issue.record("expected unavailable, got \(String(describing: first))")
      return
    }
    #expect(text.contains("16000 Hz") && text.contains("44100"))
    await medium.shutdown()
  }
}
