import ServerTestSupport
import Foundation
import Resolution
import ServerStorage
import TestSupport
import Testing
import Tokens

/// Eddystone-EID key exchange against vectors computed independently of our code, with
/// Python's `cryptography` package (X25519, HKDF-SHA256, AES-128-ECB) from the Eddystone-EID
/// specification's text:
///
///     s = X25519PrivateKey.from_private_bytes(bytes(range(1, 33)))        # the service
///     b = X25519PrivateKey.from_private_bytes(bytes(range(0x41, 0x61)))   # the beacon
///     S, B = public bytes of s and b
///     ik = HKDF(SHA256, length=32, salt=S+B, info=b"").derive(b.exchange(S))[:16]
///     tk = AES(ik, 00*11 ‖ ff ‖ 00 00 ‖ clock >> 16 as 2 bytes)
///     eid = AES(tk, 00*11 ‖ K ‖ (clock with K low bits cleared) as 4 bytes)[:8]
@Suite("Eddystone-EID key exchange")
struct EIDKeyExchangeTests {
  let servicePrivate = Array(UInt8(1)...32)
  let beaconPrivate = Array(UInt8(0x41)...0x60)

  @Test func bothSidesDeriveTheVectorsIdentityKeyAndEID() throws {
    let servicePublic = try EIDKeyExchange.publicKey(of: servicePrivate)
    let beaconPublic = try EIDKeyExchange.publicKey(of: beaconPrivate)
    #expect(
      Hex.encode(servicePublic)
        == "07a37cbc142093c8b755dc1b10e86cb426374ad16aa853ed0bdfc0b2b86d1c7c")
    #expect(
      Hex.encode(beaconPublic) == "64b101b1d0be5a8704bd078f9895001fc03e8e9f9522f188dd128d9846d48466"
    )
    let serverSide = try EIDKeyExchange.identityKey(
      servicePrivateKey: servicePrivate, beaconPublicKey: beaconPublic)
    let beaconSide = try EIDKeyExchange.identityKey(
      beaconPrivateKey: beaconPrivate, servicePublicKey: servicePublic)
    #expect(Hex.encode(serverSide) == "53d21ab5c6abf33f027fbea035f0ae32")
    #expect(beaconSide == serverSide)
    let generator = try EddystoneEIDGenerator(identityKey: serverSide, rotationExponent: 10)
    #expect(Hex.encode(generator.eid(beaconTime: 65280)) == "ccf87c94475ea625")
  }

  @Test func lowOrderAndMalformedKeysAreRefused() {
    #expect(throws: EIDKeyExchangeError.zeroSharedSecret) {
      try EIDKeyExchange.identityKey(
        servicePrivateKey: servicePrivate, beaconPublicKey: [UInt8](repeating: 0, count: 32))
    }
    #expect(throws: EIDKeyExchangeError.self) {
      try EIDKeyExchange.identityKey(
        servicePrivateKey: servicePrivate, beaconPublicKey: [1, 2, 3])
    }
  }

  @Test(.requires(.postgres), arguments: StorageKind.allCases)
  func theServiceKeyIsMadeOnceAndKept(_ kind: StorageKind) async throws {
    let storage = try await StorageFixture.make(kind)
    let first = try await storage.transaction { store in
      try store.beacons.eidServiceKey(project: "a", now: Date())
    }
    let second = try await storage.transaction { store in
      try store.beacons.eidServiceKey(project: "a", now: Date())
    }
    #expect(first.publicKey == second.publicKey)
    #expect(first.privateKey == second.privateKey)
    #expect(try EIDKeyExchange.publicKey(of: first.privateKey) == first.publicKey)
    await storage.shutdown()
  }

  /// Issue 29, finding 1: one pair per project, so a beacon's public key alone derives a
  /// different identity key in each project.
  @Test(.requires(.postgres), arguments: StorageKind.allCases)
  func eachProjectHasItsOwnServiceKey(_ kind: StorageKind) async throws {
    let storage = try await StorageFixture.make(kind)
    let a = try await storage.transaction { store in
      try store.beacons.eidServiceKey(project: "a", now: Date())
    }
    let b = try await storage.transaction { store in
      try store.beacons.eidServiceKey(project: "b", now: Date())
    }
    #expect(a.publicKey != b.publicKey)
    let beacon = EIDKeyExchange.newServiceKey()
    #expect(
      try EIDKeyExchange.identityKey(
        servicePrivateKey: a.privateKey, beaconPublicKey: beacon.publicKey)
        != EIDKeyExchange.identityKey(
          servicePrivateKey: b.privateKey, beaconPublicKey: beacon.publicKey))
    await storage.shutdown()
  }
}
