@_spi(Resolver) import Core
import Foundation
@_spi(Resolver) import Resolution
import Synchronization
import Testing
import Tokens
import BeaconFrames

/// A clock tests move by hand.
private final class TestClock: Sendable {
  private let current = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
  var now: Date { current.withLock { $0 } }
  func advance(_ seconds: TimeInterval) { current.withLock { $0 += seconds } }
}

@Suite("In-process resolver beacons")
struct InProcessBeaconTests {
  let menu = BeaconAttachment(name: "m", namespace: "cafe", type: "menu", data: Data("soup".utf8))
  let hours = BeaconAttachment(name: "h", namespace: "cafe", type: "hours", data: Data("9-5".utf8))
  let other = BeaconAttachment(name: "o", namespace: "shop", type: "menu", data: Data("x".utf8))

  @Test func registeredBeaconsAnswerWithTheirFilteredAttachments() async throws {
    let resolver = try InProcessResolver()
    let device = try await resolver.register(apiKey: "p")
    let uid = BeaconID.eddystoneUID(
      namespace: try BeaconBytes(hexBytes("00112233445566778899")),
      instance: try BeaconBytes(hexBytes("aabbccddeeff")))
    let name = try await resolver.registerBeacon(
      apiKey: "p", id: uid, attachments: [menu, hours, other])
    #expect(name == "eddystone!00112233445566778899aabbccddeeff")
    let unknown = BeaconID.altBeacon(try BeaconBytes([UInt8](repeating: 1, count: 20)))
    let all = try await resolver.beaconInfo(
      for: [uid, unknown, uid], namespacedTypes: ["*"], from: device)
    #expect(
      all == [BeaconInfo(observed: uid, beaconName: name, attachments: [menu, hours, other])])
    let cafe = try await resolver.beaconInfo(for: [uid], namespacedTypes: ["cafe/*"], from: device)
    #expect(cafe.first?.attachments == [menu, hours])
    let one = try await resolver.beaconInfo(
      for: [uid], namespacedTypes: ["cafe/hours"], from: device)
    #expect(one.first?.attachments == [hours])
    // Another project does not see it.
    let stranger = try await resolver.register(apiKey: "q")
    #expect(
      try await resolver.beaconInfo(for: [uid], namespacedTypes: ["*"], from: stranger).isEmpty)
    await #expect(throws: BeaconRegistrationError.alreadyRegistered(name)) {
      try await resolver.registerBeacon(apiKey: "p", id: uid)
    }
    #expect(await resolver.removeBeacon(apiKey: "p", name: name))
    #expect(try await resolver.beaconInfo(for: [uid], namespacedTypes: ["*"], from: device).isEmpty)
  }

  @Test func eidBeaconsAreFoundByTheIdsTheyBroadcastAsTimeGoesOn() async throws {
    let clock = TestClock()
    let resolver = try InProcessResolver(now: { clock.now })
    let device = try await resolver.register(apiKey: "p")
    let key = hexBytes("000102030405060708090a0b0c0d0e0f")
    let registered = BeaconID.eddystoneEID(try BeaconBytes(hexBytes("3439c83a6564bfdf")))
    let parameters = EddystoneEIDParameters(
      identityKey: key, rotationExponent: 10, clockValue: 65280)
    let name = try await resolver.registerBeacon(
      apiKey: "p", id: registered, eid: parameters, attachments: [menu])
    #expect(name == "eddystone-eid!3439c83a6564bfdf")

    clock.advance(2 * 1024)
    let generator = try EddystoneEIDGenerator(identityKey: key, rotationExponent: 10)
    let beaconTime = UInt32(65280 + 2 * 1024)
    let current = BeaconID.eddystoneEID(try BeaconBytes(generator.eid(beaconTime: beaconTime)))
    let previous = BeaconID.eddystoneEID(
      try BeaconBytes(generator.eid(beaconTime: beaconTime - 1024)))
    let far = BeaconID.eddystoneEID(try BeaconBytes(generator.eid(beaconTime: beaconTime + 8192)))
    let answers = try await resolver.beaconInfo(
      for: [current, previous, far], namespacedTypes: ["cafe/menu"], from: device)
    #expect(answers.map(\.observed) == [current, previous])
    #expect(answers.allSatisfy { $0.beaconName == name && $0.attachments == [menu] })

    await #expect(throws: BeaconRegistrationError.self) {
      try await resolver.registerBeacon(
        apiKey: "p", id: registered,
        eid: EddystoneEIDParameters(identityKey: key, rotationExponent: 9, clockValue: 65280))
    }
    await #expect(throws: BeaconRegistrationError.self) {
      try await resolver.registerBeacon(apiKey: "p", id: current)
    }
  }
}
