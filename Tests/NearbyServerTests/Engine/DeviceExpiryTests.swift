@_spi(Resolver) import Core
import ServerTestSupport
import Foundation
@_spi(Resolver) import Resolution
@_spi(Resolver) import NearbyServer
@_spi(Resolver) import ServerStorage
import Strategy
import Testing
import TestSupport
import Tokens

/// A device that stops reporting (an app uninstalled, a phone lost) does not stay forever:
/// after `deviceExpiry` the server removes it with its handles, and whoever had found its
/// messages gets `lost` (issue 16).
@Suite("Silent devices expire")
struct DeviceExpiryTests {
  static let configuration = ResolutionConfiguration(
    lostAfter: .seconds(3600), tokenLifetime: .seconds(900), deviceExpiry: .seconds(600))

  @Test(.requires(.postgres), arguments: StorageKind.allCases)
  func aSilentDeviceIsRemovedAndItsMessagesLost(_ kind: StorageKind) async throws {
    let storage = try await StorageFixture.make(kind)
    try await withShutdown(storage) { storage in
      let configuration = Self.configuration
      let t0 = Date(timeIntervalSince1970: 1_800_000_000)
      let silent = try await storage.register(project: "p", configuration: configuration, now: t0)
      let listener = try await storage.register(
        project: "p", configuration: configuration, now: t0)
      let subscription = SubscriptionID.random()
      let message = Message(text: "gone soon")
      let forever = Strategy(ttl: .infinite)
      let token = try await storage.report(
        Report(publish: [PublicationSpec(id: .random(), message: message, strategy: forever)]),
        from: silent, configuration: configuration, now: t0
      ).answer.directives.token
      let found = try await storage.report(
        Report(
          subscribe: [SubscriptionSpec(id: subscription, strategy: forever)],
          sightings: [Sighting(token: token, medium: .ble, time: t0)]),
        from: listener, configuration: configuration, now: t0)
      #expect(found.answer.events.map(\.event) == [.found(subscription, message)])

      // The listener keeps reporting; the other says nothing for 10 minutes.
      let later = t0.addingTimeInterval(601)
      _ = try await storage.report(
        Report(), from: listener, configuration: configuration, now: t0.addingTimeInterval(300))
      let expired = try await storage.expireSilentDevices(configuration: configuration, now: later)
      #expect(expired.removed == 1)
      #expect(expired.events.map(\.device) == [listener.id])
      #expect(expired.events.map(\.event) == [.lost(subscription, message)])
      let (gone, logged) = try await storage.read { store in
        (
          try store.resolution.devices.device(silent.id),
          try store.eventLog.events(for: listener.id, after: 0, limit: 10).map(\.event)
        )
      }
      #expect(gone == nil)
      #expect(logged.last == .lost(subscription, message))
      // Its credentials name no one now; the listener, silent 301 s, stays.
      await #expect(throws: ResolverError.self) {
        _ = try await storage.report(
          Report(), from: silent, configuration: configuration, now: later)
      }
      let again = try await storage.expireSilentDevices(configuration: configuration, now: later)
      #expect(again.removed == 0)
    }
  }

  @Test func devicesKeptWhenExpiryIsOff() throws {
    var configuration = Self.configuration
    configuration.deviceExpiry = nil
    let engine = ResolutionEngine(store: InMemoryResolutionStore(), configuration: configuration)
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    let device = try engine.register(project: "p", now: t0)
    let far = t0.addingTimeInterval(365 * 86_400)
    #expect(try engine.silentDevices(now: far, limit: 10).isEmpty)
    #expect(try engine.expire(device.id, now: far).isEmpty)
    #expect(engine.store.devices.device(device.id) != nil)
    configuration.deviceExpiry = .seconds(30)
    #expect(throws: ResolutionConfigurationError.self) { try configuration.validate() }
  }
}
