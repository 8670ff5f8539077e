import TestSupport
import Core
import Crypto
import Foundation
import MediumTestKit
import Testing
import Tokens

@testable import LANMulticast
import NearbyTesting

@Suite("LAN medium on loopback")
struct MediumTests {
  /// Without a site key a datagram carries a checksum: a corrupted one (here, a guessed
  /// check) never becomes a sighting; the intact one sent next does.
  @Test func corruptedDatagramsInjectNoSighting() async throws {
    let configuration = Loopback.configuration()
    let listener = try LANMulticastMedium(configuration: configuration)
    let heard = StreamRecorder(listener.sightings)
    try await listener.startScanning()
    let forger = try MulticastSocket.open(configuration)
    defer { forger.close() }
    let victim = Token.random()
    let now = UInt64(Date().timeIntervalSince1970 * 1000)
    var forged = Datagram(token: victim, sentAt: now, sender: 5, counter: 1).encoded(key: nil)
    forged.replaceSubrange(32..<40, with: (0..<8).map { _ in UInt8.random(in: 0...255) })
    for _ in 0..<20 { #expect(forger.send(forged) == 0) }
    // An intact datagram of another token, sent after the corrupted ones, shows they arrived.
    let genuine = Token.random()
    #expect(
      forger.send(Datagram(token: genuine, sentAt: now, sender: 5, counter: 2).encoded(key: nil))
        == 0)
    #expect(await heard.first() { $0.token == genuine } != nil)
    #expect(!heard.elements.contains { $0.token == victim })
    await listener.shutdown()
  }

  /// Issue 16: with version 1's MAC keyed by the token, whoever heard a datagram could make
  /// new ones. With a site key, an eavesdropper who captured a genuine datagram of a token
  /// and lacks the key cannot make one the deployment's mediums accept: unkeyed, tagged by
  /// the version 1 rule, or the captured one with a new counter. Genuine datagrams sent
  /// after the forged ones are heard.
  @Test func aHearerWithoutTheSiteKeyInjectsNoSighting() async throws {
    var configuration = Loopback.configuration()
    configuration.sharedKey = LANMulticastKey.random()
    let eavesdropper = try MulticastSocket.open(configuration)
    defer { eavesdropper.close() }
    let speaker = try LANMulticastMedium(configuration: configuration)
    let victim = Token.random()
    try await speaker.transmit(victim)
    var buffer = [UInt8](repeating: 0, count: 2048)
    var captured: [UInt8]?
    #expect(
      await eventually() {
        while let (count, _) = eavesdropper.receive(into: &buffer) {
          // Sealed: the token is not in the clear; the speaker is the only sender.
          if count == Datagram.sealedSize {
            captured = Array(buffer[0..<count])
          }
        }
        return captured != nil
      })
    await speaker.shutdown()  // nothing of the victim's token is in flight any more
    let heardBytes = try #require(captured)
    #expect(heardBytes[5] == 1)
    // A listener of the deployment that has not heard the victim's token itself.
    let listener = try LANMulticastMedium(configuration: configuration)
    let heard = StreamRecorder(listener.sightings)
    try await listener.startScanning()
    let now = UInt64(Date().timeIntervalSince1970 * 1000)
    let forged = Datagram(token: victim, sentAt: now, sender: 9, counter: 1)
    var tokenKeyed = forged.encoded(key: nil)
    tokenKeyed[5] = 1
    tokenKeyed.replaceSubrange(
      32..<40,
      with: Array(
        HMAC<SHA256>.authenticationCode(
          for: Array(tokenKeyed[0..<32]), using: SymmetricKey(data: victim.bytes))
      ).prefix(8))
    var recounted = heardBytes
    recounted[31] &+= 1
    for bytes in [forged.encoded(key: nil), tokenKeyed, recounted] {
      for _ in 0..<5 { #expect(eavesdropper.send(bytes) == 0) }
    }
    let marker = Token.random()
    let member = try LANMulticastMedium(configuration: configuration)
    try await member.transmit(marker)
    #expect(await heard.first() { $0.token == marker } != nil)
    #expect(!heard.elements.contains { $0.token == victim })
    await member.shutdown()
    await listener.shutdown()
  }

  /// A datagram captured and sent again later is dropped, as is one outside the clock window.
  @Test func replayedAndStaleDatagramsAreDropped() async throws {
    let configuration = Loopback.configuration()
    let listener = try LANMulticastMedium(configuration: configuration)
    let heard = StreamRecorder(listener.sightings)
    try await listener.startScanning()
    let sender = try MulticastSocket.open(configuration)
    defer { sender.close() }
    let now = UInt64(Date().timeIntervalSince1970 * 1000)
    let stale = Token.random()
    #expect(
      sender.send(
        Datagram(token: stale, sentAt: now - 60_000, sender: 8, counter: 1).encoded(key: nil))
        == 0)
    let captured = Datagram(token: Token.random(), sentAt: now, sender: 8, counter: 2)
    #expect(sender.send(captured.encoded(key: nil)) == 0)
    #expect(await heard.first() { $0.token == captured.token } != nil)
    // Scanning restarted forgets when tokens were last reported (the sighting interval would
    // otherwise hide the copy): only the replay guard can drop it now.
    await listener.stopScanning()
    try await listener.startScanning()
    #expect(sender.send(captured.encoded(key: nil)) == 0)
    let marker = Token.random()
    #expect(
      sender.send(Datagram(token: marker, sentAt: now, sender: 8, counter: 3).encoded(key: nil))
        == 0)
    #expect(await heard.first() { $0.token == marker } != nil)
    #expect(heard.elements.filter { $0.token == captured.token }.count == 1)
    #expect(!heard.elements.contains { $0.token == stale })
    await listener.shutdown()
  }

  /// A token heard many times a second is reported once per sighting interval.
  @Test func repeatedHearingsAreSpacedOut() async throws {
    var configuration = Loopback.configuration()
    configuration.announceInterval = .milliseconds(20)
    configuration.sightingInterval = .milliseconds(500)
    let speaker = try LANMulticastMedium(configuration: configuration)
    let listener = try LANMulticastMedium(configuration: configuration)
    let heard = StreamRecorder(listener.sightings)
    try await listener.startScanning()
    let token = Token.random()
    try await speaker.transmit(token)
    #expect(await heard.first() { $0.token == token } != nil)
    // About 25 datagrams a second arrive; the token is reported again only every 500 ms.
    #expect(
      await heard.until(timeout: .seconds(10)) { elements in
        elements.filter { $0.token == token }.count >= 3
      })
    let times = heard.elements.filter { $0.token == token }.map(\.time)
    for (earlier, later) in zip(times, times.dropFirst()) {
      #expect(later.timeIntervalSince(earlier) >= 0.49, "sightings \(times)")
    }
    #expect(heard.elements.allSatisfy { $0.medium == .lan && $0.rssi == nil })
    await speaker.shutdown()
    await listener.shutdown()
  }

  @Test func anUnknownInterfaceIsNamedWithTheAvailableOnes() {
    let error = #expect(throws: LANMulticastError.self) {
      try LANMulticastMedium(configuration: .init(interface: "nosuch0"))
    }
    guard case .noSuchInterface(let name, let available) = error else {
      Issue.record("wrong error \(String(describing: error))")
      return
    }
    #expect(name == "nosuch0")
    #expect(available.contains("lo"))
    #expect("\(error!)".contains("NEARBY_LAN_INTERFACE"))
  }

  @Test(arguments: ["192.168.1.1", "2001:db8::1", "not an address"])
  func aGroupThatIsNotMulticastIsRefused(_ group: String) {
    #expect(!LANMulticastConfiguration(group: group).hasMulticastGroup)
    #expect(LANMulticastConfiguration(group: "239.1.2.3").hasMulticastGroup)
    #expect(LANMulticastConfiguration(group: "ff02::1").hasMulticastGroup)
    #expect(throws: LANMulticastError.notAMulticastGroup(group)) {
      try LANMulticastMedium(configuration: .init(group: group, interface: "lo"))
    }
  }

  @Test func aZeroIntervalIsRefused() {
    #expect(throws: LANMulticastError.self) {
      try LANMulticastMedium(
        configuration: .init(interface: "lo", announceInterval: .zero))
    }
  }

  @Test func transmitAfterShutdownThrows() async throws {
    let medium = try LANMulticastMedium(configuration: Loopback.configuration())
    await medium.shutdown()
    await #expect(throws: LANMulticastError.shutDown) { try await medium.transmit(Token.random()) }
    await medium.shutdown()
  }

  /// IPv6 needs a multicast route, which loopback lacks: the medium says so in its status
  /// (rather than failing silently) when it cannot send.
  @Test func sendFailureIsReportedAsUnavailable() async throws {
    var configuration = Loopback.configuration()
    configuration.group = LANMulticastConfiguration.defaultIPv6Group
    let medium: LANMulticastMedium
    do {
      medium = try LANMulticastMedium(configuration: configuration)
    } catch {
      // Joining may already fail without IPv6 on loopback: that is reported too.
      #expect("\(error)".contains("failed"))
      return
    }
    let statuses = StreamRecorder(medium.statusUpdates)
    try await medium.transmit(Token.random())
    let status = await statuses.first() {
      if case .unavailable = $0 { true } else { false }
    }
    if case .unavailable(let reason) = status {
      #expect(reason.contains("cannot send"))
    } else {
      Issue.record("no unavailable status; got \(statuses.elements)")
    }
    await medium.shutdown()
  }

  @Test func theFactoryReadsTheInterfaceFromTheEnvironment() async throws {
    let provider = MediumProvider.lan(
      .init(port: Loopback.randomPort()), environment: ["NEARBY_LAN_INTERFACE": "lo"])
    #expect(provider.name == "lan lo")
    let explicit = MediumProvider.lan(
      .init(interface: "lo"), environment: ["NEARBY_LAN_INTERFACE": "eth9"])
    #expect(explicit.name == "lan lo")
    let missing = MediumProvider.lan(environment: ["NEARBY_LAN_INTERFACE": "nosuch0"])
    await #expect(throws: LANMulticastError.self) {
      _ = try await missing.make(MediumContext(deviceID: .random(), logger: .init(label: "t")))
    }
  }
}
