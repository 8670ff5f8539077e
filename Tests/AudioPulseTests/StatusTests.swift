import TestSupport
import AudioPulse
import Core
import MediumTestKit
import Testing
import NearbyTesting

@Suite("PulseAudio medium status")
struct StatusTests {
  @Test("a working server: ready", .requires(.pulseaudio))
  func ready() async throws {
    let medium = try PulseServer.medium(sink: "nearby_process")
    let status = StreamRecorder(medium.statusUpdates)
    let first = await status.first()
    #expect(first == .ready, "first status: \(String(describing: first)); all: \(status.elements)")
    await medium.shutdown()
  }

  @Test("no server: unavailable, saying how to fix it")
  func noServer() async throws {
    let medium = try PulseServer.medium(
      sink: "nearby", server: "unix:/nonexistent/nearby-test/native")
    let status = StreamRecorder(medium.statusUpdates)
    let first = await status.first()
    guard case .unavailable(let text) = first else {
      Issue.record("expected unavailable, got \(String(describing: first))")
      return
    }
    #expect(text.contains("PULSE_SERVER"))
    await medium.shutdown()
  }

  @Test("a server that refuses the client: microphone permission error", .requires(.pulseaudio))
  func refused() async throws {
    let medium = try PulseServer.medium(sink: "nearby", server: try PulseServer.denyingAddress())
    let status = StreamRecorder(medium.statusUpdates)
    let first = await status.first()
    guard case .permissionDenied(let text) = first else {
      Issue.record("expected permissionDenied, got \(String(describing: first))")
      return
    }
    #expect(text.contains("microphone"))
    await medium.shutdown()
  }
}
