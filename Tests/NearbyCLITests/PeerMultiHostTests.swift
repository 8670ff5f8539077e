import Foundation
import TestSupport
import Testing
import Tokens

@testable import PeerResolution
import NearbyTesting

extension MultiHostTests {
  /// Peer resolution across hosts with no server process anywhere: `nearby publish` and
  /// `nearby subscribe` in the namespaces a, b and c of `Tools/scripts/netns.sh` (one LAN
  /// segment, lan0), each with the default resolver (peer). Nested in ``MultiHostTests`` so it
  /// is serialized with the tests that cut the LAN.
  @Suite("Peer resolution across hosts, no server")
  struct Peer {
    /// The lost-after every process gets (`--lost-after`).
    static let lostAfter = 3.0

    /// One test's world: its project key, LAN ports and private XDG folders.
    struct World {
      var prefix: String
      var folder: URL
      var environment: [String: String]
      var key = "multihost-\(UUID().uuidString)"
      var lanPort = String(Int.random(in: 40_001...60_000))
      var groupPort = String(Int.random(in: 10_000...19_999))

      init() throws {
        prefix = try MultiHostTests.prefix()
        (folder, environment, _) = try CLIEnvironment.make()
      }

      /// `nearby ARGUMENTS` in `host`, peer mode, on lan0, with this world's ports.
      func nearby(
        in host: String, _ arguments: [String], key: String? = nil, mediums: String = "lan",
        environment extra: [String: String] = [:]
      ) throws -> CLIProcess {
        try CLIProcess(
          ["netns", "exec", "\(prefix)-\(host)", try CLIEnvironment.nearby().path] + arguments
            + [
              "--api-key", key ?? self.key, "--mediums", mediums, "--lan-interface", "lan0",
              "--lan-port", lanPort, "--peer-group-port", groupPort, "--lost-after",
              "\(Peer.lostAfter)", "--json",
            ], environment: environment.merging(extra) { $1 }, executable: MultiHostTests.ip)
      }

      func remove() { try? FileManager.default.removeItem(at: folder) }
    }

    static func isFound(_ text: String) -> ([String: Any]) -> Bool {
      { $0["event"] as? String == "found" && $0["text"] as? String == text }
    }

    static func count(_ event: String, _ text: String, in process: CLIProcess) -> Int {
      process.events.filter { $0["event"] as? String == event && $0["text"] as? String == text }
        .count
    }

    /// The counters a process notes at its end (`peer resolution: received …`), by name.
    static func counters(of process: CLIProcess) -> [String: Int] {
      guard
        let note = process.events.compactMap({ $0["detail"] as? String }).last(where: {
          $0.hasPrefix("peer resolution: received")
        })
      else { return [:] }
      var result: [String: Int] = [:]
      let names = [
        "received", "accepted", "ignored", "dropped", "malformed", "other project",
        "unauthenticated", "stale", "replayed", "rate limited", "oversized", "sent",
      ]
      for name in names {
        guard let range = note.range(of: "\(name) \\d+", options: .regularExpression) else {
          continue
        }
        result[name] = Int(note[range].split(separator: " ").last ?? "")
      }
      return result
    }

    /// Ctrl-C to each process; each must exit 0.
    static func interrupt(_ processes: [CLIProcess]) async {
      for process in processes { process.signal(SIGINT) }
      for process in processes {
        #expect(await process.exitStatus() == 0, "\(process.errors)")
      }
      // The reader threads may still be draining the last lines (the counters note).
      for process in processes { _ = await process.waitUntilDrained(timeout: .seconds(5)) }
    }

    @Test(.requires(.networkNamespaces)) func foundAndLostAcrossThreeHosts() async throws {
      let world = try World()
      defer { world.remove() }
      let onB = try world.nearby(in: "b", ["subscribe", "--mode", "scan"])
      let onC = try world.nearby(in: "c", ["subscribe", "--mode", "scan"])
      let fromA = try world.nearby(in: "a", ["publish", "hello", "--mode", "broadcast"])
      let fromC = try world.nearby(in: "c", ["publish", "from c", "--mode", "broadcast"])
      let all = [onB, onC, fromA, fromC]
      defer { for process in all { process.kill() } }

      #expect(
        await onB.waitForEvent(timeout: .seconds(30), Self.isFound("hello")) != nil,
        "b did not find a's message: \(onB.errors) \(fromA.errors)")
      #expect(
        await onB.waitForEvent(timeout: .seconds(30), Self.isFound("from c")) != nil,
        "b did not find c's message: \(onB.errors) \(fromC.errors)")
      #expect(
        await onC.waitForEvent(timeout: .seconds(30), Self.isFound("hello")) != nil,
        "c did not find a's message: \(onC.errors)")

      // a leaves the segment: b and c lose its message after lostAfter, b keeps c's.
      // Lost by silence: the waits only bound a hang (how soon after lostAfter depends on the
      // machine's load; the deadline itself is checked on a manual clock in the resolver's
      // tests). Each process signals its own output: one wait each (both counts only grow).
      try await MultiHostTests.ip(["-n", "\(world.prefix)-a", "link", "set", "lan0", "down"])
      let lostOnB = await onB.until(timeout: .seconds(Self.lostAfter + 60)) {
        Self.count("lost", "hello", in: onB) >= 1
      }
      let lostOnC = await onC.until(timeout: .seconds(Self.lostAfter + 60)) {
        Self.count("lost", "hello", in: onC) >= 1
      }
      #expect(lostOnB && lostOnC, "not lost after a left: \(onB.lines) \(onC.lines)")
      #expect(Self.count("lost", "from c", in: onB) == 0, "\(onB.lines)")

      // a comes back: found again.
      try await MultiHostTests.ip(["-n", "\(world.prefix)-a", "link", "set", "lan0", "up"])
      let againOnB = await onB.until(timeout: .seconds(30)) {
        Self.count("found", "hello", in: onB) >= 2
      }
      let againOnC = await onC.until(timeout: .seconds(30)) {
        Self.count("found", "hello", in: onC) >= 2
      }
      let again = againOnB && againOnC
      #expect(again, "not found again after a came back: \(onB.lines) \(onC.lines)")

      // c unpublishes (Ctrl-C): b loses c's message.
      fromC.signal(SIGINT)
      #expect(await fromC.exitStatus() == 0, "\(fromC.errors)")
      #expect(
        await onB.waitForEvent(timeout: .seconds(15)) {
          $0["event"] as? String == "lost" && $0["text"] as? String == "from c"
        } != nil, "\(onB.lines)")

      await Self.interrupt([onB, onC, fromA])
      #expect(Self.counters(of: onB)["accepted", default: 0] > 0, "\(onB.lines)")
    }

    @Test(.requires(.networkNamespaces)) func aHostOfAnotherProjectSeesNothing() async throws {
      let world = try World()
      defer { world.remove() }
      let member = try world.nearby(in: "b", ["subscribe", "--mode", "scan"])
      let outsider = try world.nearby(
        in: "c", ["subscribe", "--mode", "scan"], key: "another project")
      let publisher = try world.nearby(in: "a", ["publish", "hello", "--mode", "broadcast"])
      let all = [member, outsider, publisher]
      defer { for process in all { process.kill() } }
      #expect(
        await member.waitForEvent(timeout: .seconds(30), Self.isFound("hello")) != nil,
        "\(member.errors) \(publisher.errors)")
      // The project's announcements are sealed under a key from its project key: the outsider
      // cannot open them, so it hears no token and asks nothing.
      try await Task.sleep(for: .seconds(Self.lostAfter + 1))
      #expect(!outsider.events.contains(where: Self.isFound("hello")), "\(outsider.lines)")
      await Self.interrupt(all)
      #expect(Self.counters(of: outsider)["accepted", default: -1] == 0, "\(outsider.lines)")
      #expect(Self.counters(of: outsider)["sent", default: -1] == 0, "\(outsider.lines)")
    }

    /// Datagrams made to hurt, sent from c at b's peer port and at the who-has group.
    static func hostileDatagrams(key: String) throws -> [[UInt8]] {
      let sealer = PeerSealer(keys: PeerKeys(apiKey: key))
      let stranger = PeerSealer(keys: PeerKeys(apiKey: "another project"))
      let whoHas = PeerMessage.whoHas(queryID: 7, token: Token.random())
      let valid = try sealer.seal(kind: whoHas.kind, body: whoHas.body, now: Date())
      var forged = valid
      forged[PeerHeader.size + 2] ^= 0xff
      var list: [[UInt8]] = (0..<20).map { _ in
        (0..<Int.random(in: 1...1400)).map { _ in UInt8.random(in: 0...255) }
      }
      list += [
        Array(valid.prefix(20)),  // truncated inside the header: malformed
        Array(valid.dropLast(5)),  // truncated seal: unauthenticated
        forged,  // a flipped bit: unauthenticated
        try stranger.seal(kind: whoHas.kind, body: whoHas.body, now: Date()),  // other project
        try sealer.seal(kind: .query, body: [1, 2, 3], now: Date()),  // opens, body malformed
        try sealer.seal(kind: whoHas.kind, body: whoHas.body, now: Date() - 120),  // stale
        valid, valid,  // the second is a replay
      ]
      return list
    }

    @Test(.requires(.networkNamespaces))
    func hostileDatagramsAreDroppedAndTheSubscriberKeepsWorking() async throws {
      let world = try World()
      defer { world.remove() }
      let subscriber = try world.nearby(in: "b", ["subscribe", "--mode", "scan"])
      let publisher = try world.nearby(in: "a", ["publish", "hello", "--mode", "broadcast"])
      defer {
        subscriber.kill()
        publisher.kill()
      }
      #expect(
        await subscriber.waitForEvent(timeout: .seconds(30), Self.isFound("hello")) != nil,
        "\(subscriber.errors) \(publisher.errors)")
      let note = subscriber.events.compactMap { $0["detail"] as? String }.first {
        $0.hasPrefix("connected to peers")
      }
      let portRange = try #require(
        note?.range(of: #"answers to UDP port \d+"#, options: .regularExpression),
        "no port in \(String(describing: note))")
      let portText = String(note?[portRange].split(separator: " ").last ?? "")

      // Length-prefixed datagrams for the sender in c (Python: a few lines, any distro).
      let datagrams = try Self.hostileDatagrams(key: world.key)
      var file = Data()
      for datagram in datagrams {
        withUnsafeBytes(of: UInt32(datagram.count).bigEndian) { file.append(contentsOf: $0) }
        file.append(contentsOf: datagram)
      }
      let path = world.folder.appendingPathComponent("hostile.bin")
      try file.write(to: path)
      let script = """
        import socket, struct, sys, time
        data = open(sys.argv[1], 'rb').read()
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton('10.80.0.4'))
        i = 0
        while i < len(data):
            n = struct.unpack('>I', data[i:i + 4])[0]
            s.sendto(data[i + 4:i + 4 + n], (sys.argv[2], int(sys.argv[3])))
            i += 4 + n
            time.sleep(0.01)
        """
      for (address, port) in [("10.80.0.3", portText), ("239.255.77.77", world.groupPort)] {
        let sender = try CLIProcess(
          [
            "netns", "exec", "\(world.prefix)-c", "python3", "-c", script, path.path, address, port,
          ],
          environment: ProcessInfo.processInfo.environment, executable: MultiHostTests.ip)
        #expect(await sender.exitStatus() == 0, "\(sender.errors)")
      }

      // Still working: a new publication is found, the first one was never lost.
      let second = try world.nearby(in: "a", ["publish", "after", "--mode", "broadcast"])
      defer { second.kill() }
      #expect(
        await subscriber.waitForEvent(timeout: .seconds(30), Self.isFound("after")) != nil,
        "\(subscriber.lines)")
      #expect(Self.count("lost", "hello", in: subscriber) == 0, "\(subscriber.lines)")
      await Self.interrupt([second, publisher, subscriber])
      let counters = Self.counters(of: subscriber)
      for name in ["malformed", "unauthenticated", "other project", "stale", "replayed"] {
        #expect(counters[name, default: 0] >= 1, "\(name): \(counters)")
      }
      #expect(counters["malformed", default: 0] >= 20, "\(counters)")
    }

    /// The PulseAudio server of the test command, or nil.
    static let pulseServer = ProcessInfo.processInfo.environment["NEARBY_TEST_PULSE_SERVER"]

    /// a broadcasts on audio only, b scans audio only: b hears the token through the shared
    /// null sink (no way back), asks for it with a who-has on the LAN, and a answers.
    @Test(.requires(.pulseaudio))
    func aTokenHeardOnAudioIsResolvedOverTheLAN() async throws {
      let world = try World()
      defer { world.remove() }
      let pulse = [
        "PULSE_SERVER": try #require(Self.pulseServer), "PULSE_SINK": "nearby_multihost",
        "PULSE_SOURCE": "nearby_multihost.monitor",
      ]
      let subscriber = try world.nearby(
        in: "b", ["subscribe", "--mode", "scan"], mediums: "audio", environment: pulse)
      let publisher = try world.nearby(
        in: "a", ["publish", "hello", "--mode", "broadcast"], mediums: "audio",
        environment: pulse)
      defer {
        subscriber.kill()
        publisher.kill()
      }
      let found = await subscriber.waitForEvent(timeout: .seconds(60), Self.isFound("hello"))
      #expect(
        found?["mediums"] as? [String] == ["audio"],
        "\(subscriber.lines) \(subscriber.errors) \(publisher.errors)")
      publisher.signal(SIGINT)
      #expect(await publisher.exitStatus() == 0, "\(publisher.errors)")
      #expect(
        await subscriber.waitForEvent(timeout: .seconds(15)) {
          $0["event"] as? String == "lost" && $0["text"] as? String == "hello"
        } != nil, "\(subscriber.lines)")
      await Self.interrupt([subscriber])
      #expect(Self.counters(of: subscriber)["accepted", default: 0] > 0, "\(subscriber.lines)")
    }
  }
}
