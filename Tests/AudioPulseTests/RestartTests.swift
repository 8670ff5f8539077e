import TestSupport
import AudioPulse
import Core
import Foundation
import MediumTestKit
import Testing
import Tokens
import NearbyTesting

/// A PulseAudio server of this test's own, stopped and started again under the mediums.
@Suite("PulseAudio server restart", .serialized)
struct RestartTests {
  /// A private `pulseaudio` with one null sink "restart", on a socket in `directory`.
  final class Server: Sendable {
    let process: Process
    let address: String

    init(directory: URL) throws {
      let executable = try #require(
        ["/usr/bin/pulseaudio", "/bin/pulseaudio"].first {
          FileManager.default.isExecutableFile(atPath: $0)
        }, "pulseaudio is not installed: run Tools/scripts/install-deps.sh build test")
      let socket = directory.appendingPathComponent("native").path
      try FileManager.default.createDirectory(
        at: directory.appendingPathComponent("home"), withIntermediateDirectories: true)
      try FileManager.default.createDirectory(
        at: directory.appendingPathComponent("run"), withIntermediateDirectories: true)
      process = Process()
      process.executableURL = URL(fileURLWithPath: executable)
      process.arguments = [
        "-n", "--daemonize=no", "--exit-idle-time=-1", "--use-pid-file=no",
        "--log-target=file:\(directory.appendingPathComponent("log").path)",
        "-L", "module-native-protocol-unix auth-anonymous=1 socket=\(socket)",
        "-L", "module-null-sink sink_name=restart rate=48000 format=float32le channels=1",
      ]
      var environment = ProcessInfo.processInfo.environment
      environment["HOME"] = directory.appendingPathComponent("home").path
      environment["PULSE_RUNTIME_PATH"] = directory.appendingPathComponent("run").path
      process.environment = environment
      process.standardOutput = FileHandle.nullDevice
      process.standardError = FileHandle.nullDevice
      process.standardInput = FileHandle.nullDevice
      try process.run()
      address = "unix:\(socket)"
    }

    /// Kills the server (as a crash would) and reaps it on a thread of its own.
    func kill() {
      Foundation.kill(process.processIdentifier, SIGKILL)
      let process = process
      Thread.detachNewThread { process.waitUntilExit() }
    }
  }

  @Test("mediums report the server gone, then reconnect and work when it is back")
  func reconnects() async throws {
    let base =
      ProcessInfo.processInfo.environment["NEARBY_TEST_RUNTIME"].map {
        URL(fileURLWithPath: $0)
      } ?? FileManager.default.temporaryDirectory
    let directory = base.appendingPathComponent("restart-\(UUID().uuidString.prefix(8))")
    var server = try Server(directory: directory)
    defer { server.kill() }
    let configuration = PulseAudioConfiguration(
      server: server.address, sink: "restart", source: "restart.monitor", interval: 1.2...1.6)
    let sender = try PulseAudioMedium(configuration: configuration, logger: .init(label: "t"))
    let receiver = try PulseAudioMedium(configuration: configuration, logger: .init(label: "t"))
    let status = StreamRecorder(receiver.statusUpdates)
    let sightings = StreamRecorder(receiver.sightings)
    #expect(await status.first(timeout: .seconds(10)) { $0 == .ready } != nil)
    try await receiver.startScanning()
    let before = Token.random()
    try await sender.transmit(before)
    #expect(await sightings.first(timeout: .seconds(6)) { $0.token == before } != nil)

    let killed = ContinuousClock.now
    server.kill()
    let gone = await status.first(since: killed, timeout: .seconds(10)) {
      if case .unavailable = $0 { true } else { false }
    }
    #expect(gone != nil, "no unavailable status after the server was killed")

    server = try Server(directory: directory)
    let back = await status.first(since: killed, timeout: .seconds(10)) { $0 == .ready }
    #expect(back != nil, "no ready status after the server came back")
    let after = Token.random()
    let restarted = ContinuousClock.now
    try await sender.transmit(after)
    #expect(
      await sightings.first(since: restarted, timeout: .seconds(8)) { $0.token == after } != nil)
    await sender.shutdown()
    await receiver.shutdown()
  }
}
