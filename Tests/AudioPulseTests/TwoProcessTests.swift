import AudioPulse
import Core
import Foundation
import MediumTestKit
import Testing
import TestSupport
import Tokens
import NearbyTesting

/// One medium in this process, the other in a `nearby audio` subprocess, through the real
/// PulseAudio server (sink "nearby_process").
@Suite("PulseAudio across two processes", .serialized)
struct TwoProcessTests {
  @Test("a token sent by another process is heard here", .requires(.pulseaudio))
  func hearsOtherProcess() async throws {
    let server = try PulseServer.address()
    let medium = try PulseServer.medium(sink: "nearby_process")
    let sightings = StreamRecorder(medium.sightings)
    try await medium.startScanning()
    let token = Token.random()
    let started = ContinuousClock.now
    let sender = try await Subprocess.run([
      "audio", "send", "--token", token.hex, "--seconds", "8", "--server", server, "--sink",
      "nearby_process",
    ])
    #expect(sender.status == 0, "\(String(decoding: sender.err, as: UTF8.self))")
    let heard = await sightings.first(since: started, timeout: .seconds(6)) { $0.token == token }
    #expect(heard?.medium == .audio)
    await medium.shutdown()
  }

  @Test("a token sent here is heard by another process", .requires(.pulseaudio))
  func otherProcessHears() async throws {
    let server = try PulseServer.address()
    let medium = try PulseServer.medium(sink: "nearby_process")
    let token = Token.random()
    async let listener = Subprocess.run([
      "audio", "listen", "--seconds", "5", "--json", "--server", server, "--source",
      "nearby_process.monitor",
    ])
    // The token plays until the medium shuts down, after the listener has ended: however
    // long the listener takes to start, it has seconds of the token to hear.
    try await medium.transmit(token)
    let result = try await listener
    await medium.shutdown()
    #expect(result.status == 0, "\(String(decoding: result.err, as: UTF8.self))")
    let lines = String(decoding: result.out, as: UTF8.self).split(separator: "\n")
    let tokens = lines.compactMap {
      (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
    }.compactMap { $0["token"] as? String }
    #expect(tokens.contains(token.hex))
  }
}

extension TwoProcessTests {
  @Test("listen without a server exits 1 and says how to fix it")
  func listenWithoutServer() async throws {
    let result = try await Subprocess.run([
      "audio", "listen", "--seconds", "0.5", "--server", "unix:/nonexistent/nearby/native",
    ])
    #expect(result.status == 1)
    #expect(String(decoding: result.err, as: UTF8.self).contains("PULSE_SERVER"))
  }
}

/// `nearby audio selftest` through the real server, on a sink of its own.
@Suite("nearby audio selftest", .serialized)
struct SelftestTests {
  @Test(
    "selftest: a path that carries the band passes, a silent one fails with exit 1",
    .requires(.pulseaudio))
  func selftest() async throws {
    let server = try PulseServer.address()
    let good = try await Subprocess.run([
      "audio", "selftest", "--json", "--server", server, "--sink", "nearby_selftest",
      "--source", "nearby_selftest.monitor",
    ])
    #expect(
      good.status == 0,
      "\(String(decoding: good.err, as: UTF8.self)) \(String(decoding: good.out, as: UTF8.self))")
    let result = try #require(
      JSONSerialization.jsonObject(with: good.out) as? [String: Any], "\(good.out)")
    #expect(result["carries_band"] as? Bool == true)
    #expect(result["token_decoded"] as? Bool == true)
    #expect((result["bands"] as? [Any])?.count == 12)

    // Recording a monitor nobody plays into: nothing carries.
    let silent = try await Subprocess.run([
      "audio", "selftest", "--json", "--server", server, "--sink", "nearby_selftest",
      "--source", "nearby_quiet.monitor",
    ])
    #expect(silent.status == 1)
    let failed = try #require(
      JSONSerialization.jsonObject(with: silent.out) as? [String: Any], "\(silent.out)")
    #expect(failed["carries_band"] as? Bool == false)
    #expect(failed["token_decoded"] as? Bool == false)
  }
}

/// Runs the built `nearby` on a thread of its own (waiting must not block the cooperative pool).
enum Subprocess {
  static var nearbyExecutable: URL? { try? ChildProcess.built("nearby") }

  static func run(_ arguments: [String]) async throws -> (status: Int32, out: Data, err: Data) {
    let executable = try #require(
      nearbyExecutable, "build the nearby product first: swift build --build-tests")
    let result = try await ChildProcess.run(executable, arguments)
    return (result.status, result.out, result.err)
  }
}
