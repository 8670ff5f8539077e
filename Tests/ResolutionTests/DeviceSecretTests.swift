@_spi(Resolver) import Core
import Foundation
@_spi(Resolver) import Resolution
import Testing

/// A device's secret is kept as its SHA-256 digest, never as itself, and checked in
/// constant time; a secret kept before digests still works and is replaced by its digest.
@Suite("Device secrets")
struct DeviceSecretTests {
  @Test func onlyTheDigestIsKept() throws {
    let fixture = EngineFixture()
    let device = try fixture.device()
    let record = try #require(fixture.engine.store.devices.device(device.id))
    #expect(record.secretDigest == DeviceRecord.digest(ofSecret: device.secret))
    #expect(record.secretDigest.hasPrefix("sha256:"))
    #expect(!record.secretDigest.contains(device.secret))
    #expect(record.accepts(secret: device.secret))
    #expect(!record.accepts(secret: device.secret + "x"))
    #expect(!record.accepts(secret: ""))
    #expect(throws: ResolverError.wrongSecret(device.id)) {
      try fixture.engine.authenticate(DeviceCredentials(id: device.id, secret: "guess"))
    }
  }

  @Test func aSecretKeptBeforeDigestsWorksAndIsReplacedByItsDigest() throws {
    let fixture = EngineFixture()
    let device = try fixture.device()
    var record = try #require(fixture.engine.store.devices.device(device.id))
    record.secretDigest = device.secret  // as a database written before digests holds it
    fixture.engine.store.devices.saveDevice(record)
    #expect(try fixture.engine.authenticate(device).holdsPlainSecret)
    try fixture.report(Report(), from: device)
    let after = try #require(fixture.engine.store.devices.device(device.id))
    #expect(after.secretDigest == DeviceRecord.digest(ofSecret: device.secret))
    #expect(try fixture.engine.authenticate(device).id == device.id)
  }
}
