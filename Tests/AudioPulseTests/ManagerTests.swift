import TestSupport
import AudioPulse
import Core
import MediumTestKit
import Resolution
import Strategy
import Testing
import NearbyTesting

/// Two managers whose only medium is PulseAudio (sink "nearby_managers") find each other's
/// messages: each publishes and subscribes, both transmit and listen on one null sink.
@Suite("Managers over PulseAudio", .serialized)
struct ManagerTests {
  @Test("two managers find each other's messages over audio only", .requires(.pulseaudio))
  func findEachOther() async throws {
    let resolver = try InProcessResolver(configuration: .init(lostAfter: .seconds(30)))
    let configuration = try PulseServer.configuration(sink: "nearby_managers")
    func manager() async throws -> MessageManager {
      try await MessageManager(
        apiKey: "audio-test",
        configuration: .init(
          resolver: .inProcess(resolver), mediums: [.pulseAudio(configuration)]))
    }
    let alice = try await manager()
    let bob = try await manager()
    let found = Watched<[String: [String]]>([:])
    let audio = Strategy(mediums: .audio)
    var handles: [AnyObject] = []
    for (name, device) in [("Alice", alice), ("Bob", bob)] {
      handles.append(
        try await device.publish(Message(text: name, type: "name")) { $0.strategy = audio })
      handles.append(
        try await device.subscribe(
          onFound: { message in found.withLock { $0[name, default: []].append(message.text ?? "") }
          },
          configure: { $0.strategy = audio }))
    }
    let both = await found.until(timeout: .seconds(30)) {
      $0["Alice"] == ["Bob"] && $0["Bob"] == ["Alice"]
    }
    #expect(both, "found: \(found.value)")
    withExtendedLifetime(handles) {}
    await alice.shutdown()
    await bob.shutdown()
  }

  @Test(
    "a server that refuses the client raises the microphone permission error handler",
    .requires(.pulseaudio))
  func microphoneError() async throws {
    let configuration = PulseAudioConfiguration(
      server: try PulseServer.denyingAddress(), sink: "nearby", source: "nearby.monitor")
    let raised = Watched<[Bool]>([])
    let manager = try await MessageManager(
      apiKey: "audio-test",
      configuration: .init(
        resolver: .inProcess(try InProcessResolver()), mediums: [.pulseAudio(configuration)],
        microphonePermissionErrorHandler: { active in raised.withLock { $0.append(active) } }))
    let subscription = try await manager.subscribe(
      onFound: { _ in }, configure: { $0.strategy = Strategy(mediums: .audio) })
    #expect(await raised.until(timeout: .seconds(10)) { $0.first == true })
    withExtendedLifetime(subscription) {}
    await manager.shutdown()
  }
}
