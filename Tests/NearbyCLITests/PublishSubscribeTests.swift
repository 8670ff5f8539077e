import Foundation
import TestSupport
import Testing

/// The issues' acceptance, with the real binaries: `nearby subscribe` and `nearby publish`
/// on the loopback interface find each other with nothing set up and no server anywhere
/// (peer resolution, the default), and with `--resolver local` through the local server the
/// first one starts; the subscriber sees the message lost after the publisher's Ctrl-C. Each
/// test has its own XDG folders, resolver port, LAN ports and project key.
@Suite("nearby publish and subscribe", .serialized)
struct PublishSubscribeTests {
  /// The LAN options of one test: loopback, a medium port and a who-has port of its own (both
  /// below the ephemeral range, so no kernel-chosen unicast port takes them).
  static func loopback() -> [String] {
    [
      "--lan-interface", "lo", "--lan-port", String(freeUDPPort()),
      "--peer-group-port", String(Int.random(in: 10_000...19_999)), "--json",
    ]
  }

  static func isFound(_ event: [String: Any]) -> Bool {
    event["event"] as? String == "found" && event["text"] as? String == "hello"
  }

  static func isLost(_ event: [String: Any]) -> Bool {
    event["event"] as? String == "lost" && event["text"] as? String == "hello"
  }

  @Test func withNoServerTwoShellsFindEachOtherAndLoseItAfterCtrlC() async throws {
    let (folder, environment, _) = try CLIEnvironment.make()
    defer { try? FileManager.default.removeItem(at: folder) }
    // A key of this test's own: another test's processes on lo are another project.
    let options = Self.loopback() + ["--api-key", "cli-test-\(UUID().uuidString)"]
    // The subscriber loses by silence only after 300 s, past all the waits below: the lost it
    // reports can only be the owner's notice, however slowly this machine runs.
    let subscriber = try CLIProcess(
      ["subscribe", "--lost-after", "300"] + options, environment: environment)
    defer { subscriber.kill() }
    let connected = await subscriber.waitForEvent(timeout: .seconds(30)) {
      ($0["detail"] as? String)?.hasPrefix("connected to peers (no server)") == true
    }
    try #require(connected != nil, "subscribe did not start: \(subscriber.errors)")
    #expect((connected?["detail"] as? String)?.contains("project key: --api-key") == true)
    let publisher = try CLIProcess(["publish", "hello"] + options, environment: environment)
    defer { publisher.kill() }
    let found = await subscriber.waitForEvent(timeout: .seconds(30), Self.isFound)
    #expect(found?["mediums"] as? [String] == ["lan"], "\(subscriber.lines) \(publisher.errors)")
    #expect(
      await publisher.waitForEvent(timeout: .seconds(10)) { $0["status"] as? String == "active" }
        != nil)

    // Ctrl-C unpublishes and the owner tells its hearers at once: lost well before lostAfter.
    publisher.signal(SIGINT)
    #expect(await publisher.exitStatus() == 0, "\(publisher.errors)")
    let lost = await subscriber.waitForEvent(timeout: .seconds(60), Self.isLost)
    #expect(lost != nil, "not lost before the subscriber's lostAfter: \(subscriber.lines)")
    subscriber.signal(SIGINT)
    #expect(await subscriber.exitStatus() == 0, "\(subscriber.errors)")
    // Nothing started a server.
    for process in [subscriber, publisher] {
      #expect(Self.serverPID(in: process) == nil)
      #expect(!process.errors.contains("server"), "\(process.errors)")
    }
  }

  /// Two projects on one segment: the open default key and a project key do not see each
  /// other's messages.
  @Test func anotherProjectSeesNothing() async throws {
    let (folder, environment, _) = try CLIEnvironment.make()
    defer { try? FileManager.default.removeItem(at: folder) }
    let options = Self.loopback()
    let outsider = try CLIProcess(["subscribe"] + options, environment: environment)
    let member = try CLIProcess(
      ["subscribe", "--api-key", "project b"] + options, environment: environment)
    let publisher = try CLIProcess(
      ["publish", "hello", "--api-key", "project b"] + options, environment: environment)
    defer { for process in [outsider, member, publisher] { process.kill() } }
    #expect(
      await member.waitForEvent(timeout: .seconds(30), Self.isFound) != nil, "\(member.errors)")
    // The outsider says which key it runs with; it may say so after the member has found
    // (peer resolution finds in a fraction of a second): wait for it, bounded.
    #expect(
      await outsider.waitForEvent(timeout: .seconds(10)) {
        ($0["detail"] as? String)?.contains("project key: the open default key") == true
      } != nil, "\(outsider.lines)")
    // Well past the member's found: the outsider hears the token and still finds nothing.
    try await Task.sleep(for: .seconds(3))
    #expect(!outsider.events.contains(where: Self.isFound), "\(outsider.lines)")
    for process in [publisher, member, outsider] {
      process.signal(SIGINT)
      #expect(await process.exitStatus() == 0, "\(process.errors)")
    }
  }

  static func serverPID(in process: CLIProcess) -> Int32? {
    for event in process.events where event["event"] as? String == "note" {
      guard let detail = event["detail"] as? String, detail.contains("started a local resolver"),
        let range = detail.range(of: #"pid (\d+)"#, options: .regularExpression)
      else { continue }
      return Int32(detail[range].dropFirst(4))
    }
    return nil
  }

  @Test func withTheLocalServerTwoShellsFindEachOtherAndLoseItAfterCtrlC() async throws {
    let (folder, environment, _) = try CLIEnvironment.make()
    defer { try? FileManager.default.removeItem(at: folder) }
    let lanPort = String(freeUDPPort())
    let lan = ["--resolver", "local", "--lan-interface", "lo", "--lan-port", lanPort, "--json"]
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
    #expect(await publisher.exitStatus() == 0, "\(publisher.errors)")
    // The lost comes from the unpublish at once, or else from the server's silence sweep
    // after its lostAfter (10 s): either is a lost after Ctrl-C. 60 s bounds a hang only,
    // so how loaded the machine is cannot change the verdict.
    let lost = await subscriber.waitForEvent(timeout: .seconds(60)) {
      $0["event"] as? String == "lost" && $0["text"] as? String == "hello"
    }
    #expect(lost != nil, "\(subscriber.lines)")

    subscriber.signal(SIGINT)
    #expect(await subscriber.exitStatus() == 0, "\(subscriber.errors)")
    // The server started in the background survives both commands, for the next one.
    if let server { #expect(kill(server, 0) == 0) }
  }

  @Test func aSecondCommandUsesTheRunningServer() async throws {
    let (folder, environment, _) = try CLIEnvironment.make()
    defer { try? FileManager.default.removeItem(at: folder) }
    let lan = [
      "--resolver", "local", "--lan-interface", "lo", "--lan-port",
      String(freeUDPPort()),
    ]
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
    #expect(await second.exitStatus() == 0)
    #expect(await first.exitStatus() == 0)
  }
}
