import Foundation
import Testing

/// The issue's acceptance, with the real binaries: `nearby subscribe` and `nearby publish`
/// on the loopback interface find each other with nothing set up (the first one starts the
/// local resolver server), and the subscriber sees the message lost after the publisher's
/// Ctrl-C. Each test has its own XDG folders, resolver port and LAN port.
@Suite("nearby publish and subscribe", .serialized)
struct PublishSubscribeTests {
  static func serverPID(in process: CLIProcess) -> Int32? {
    for event in process.events where event["event"] as? String == "note" {
      guard let detail = event["detail"] as? String, detail.contains("started a local resolver"),
        let range = detail.range(of: #"pid (\d+)"#, options: .regularExpression)
      else { continue }
      return Int32(detail[range].dropFirst(4))
    }
    return nil
  }

  @Test func twoShellsFindEachOtherAndLoseItAfterCtrlC() async throws {
    let (folder, environment, _) = try CLIEnvironment.make()
    defer { try? FileManager.default.removeItem(at: folder) }
    let lanPort = String(Int.random(in: 40_001...60_000))
    let lan = ["--lan-interface", "lo", "--lan-port", lanPort, "--json"]
    let subscriber = try CLIProcess(["subscribe"] + lan, environment: environment)
    defer { subscriber.kill() }
    let connected = await subscriber.waitForEvent(timeout: .seconds(60)) {
      ($0["detail"] as? String)?.hasPrefix("connected to") == true
    }
    let server = Self.serverPID(in: subscriber)
    defer { if let server { kill(server, SIGTERM) } }
    try #require(connected != nil, "subscribe did not connect: \(subscriber.errors)")
    #expect(server != nil, "the subscriber did not start the local server")
    // Every medium was reported with its reason: LAN available, audio not (no PulseAudio in
    // the test's environment), BLE either way depending on the machine's adapters.
    let mediums = subscriber.events.filter { $0["event"] as? String == "medium" }
    #expect(
      mediums.contains { $0["medium"] as? String == "lan" && $0["available"] as? Bool == true })
    #expect(
      mediums.contains {
        $0["medium"] as? String == "audio"
          && ($0["detail"] as? String)?.contains("no PulseAudio server") == true
      })
    #expect(mediums.contains { $0["medium"] as? String == "ble" && $0["detail"] != nil })

    let publisher = try CLIProcess(["publish", "hello"] + lan, environment: environment)
    defer { publisher.kill() }
    let found = await subscriber.waitForEvent(timeout: .seconds(30)) {
      $0["event"] as? String == "found" && $0["text"] as? String == "hello"
    }
    #expect(found?["mediums"] as? [String] == ["lan"], "\(subscriber.lines)")
    #expect(
      await publisher.waitForEvent(timeout: .seconds(10)) { $0["status"] as? String == "active" }
        != nil)

    publisher.signal(SIGINT)
    #expect(await publisher.exitStatus(timeout: .seconds(15)) == 0, "\(publisher.errors)")
    let lost = await subscriber.waitForEvent(timeout: .seconds(15)) {
      $0["event"] as? String == "lost" && $0["text"] as? String == "hello"
    }
    #expect(lost != nil, "\(subscriber.lines)")

    subscriber.signal(SIGINT)
    #expect(await subscriber.exitStatus(timeout: .seconds(15)) == 0, "\(subscriber.errors)")
    // The server started in the background survives both commands, for the next one.
    if let server { #expect(kill(server, 0) == 0) }
  }

  @Test func aSecondCommandUsesTheRunningServer() async throws {
    let (folder, environment, _) = try CLIEnvironment.make()
    defer { try? FileManager.default.removeItem(at: folder) }
    let lan = ["--lan-interface", "lo", "--lan-port", String(Int.random(in: 40_001...60_000))]
    let first = try CLIProcess(["subscribe", "--json"] + lan, environment: environment)
    defer { first.kill() }
    _ = await first.waitForEvent(timeout: .seconds(60)) {
      ($0["detail"] as? String)?.hasPrefix("connected to") == true
    }
    let server = Self.serverPID(in: first)
    defer { if let server { kill(server, SIGTERM) } }
    try #require(server != nil, "\(first.errors)")
    let second = try CLIProcess(["subscribe", "--json"] + lan, environment: environment)
    defer { second.kill() }
    #expect(
      await second.waitForEvent(timeout: .seconds(30)) {
        ($0["detail"] as? String)?.hasPrefix("connected to") == true
      } != nil)
    #expect(Self.serverPID(in: second) == nil)
    second.signal(SIGTERM)
    first.signal(SIGTERM)
    #expect(await second.exitStatus(timeout: .seconds(15)) == 0)
    #expect(await first.exitStatus(timeout: .seconds(15)) == 0)
  }
}
