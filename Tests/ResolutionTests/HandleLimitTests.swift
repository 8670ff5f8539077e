@_spi(Resolver) import Core
import Foundation
@_spi(Resolver) import Resolution
import Testing

/// A device keeps at most `maximumHandlesPerDevice` publications and as many subscriptions.
@Suite("Handles per device")
struct HandleLimitTests {
  @Test func aReportPastTheLimitIsRefusedAndOneThatMakesRoomIsNot() throws {
    let fixture = EngineFixture(maximumHandlesPerDevice: 3)
    let device = try fixture.device()
    let published = try (1...3).map { try fixture.publish("m\($0)", on: device) }
    #expect {
      try fixture.publish("m4", on: device)
    } throws: { error in
      guard case ResolverError.invalidReport(let why) = error else { return false }
      return why.contains("4 publications; the limit is 3")
    }
    // Unpublishing one in the same report makes room.
    let spec = PublicationSpec(
      id: .random(), message: Message(text: "m5", type: "name"), strategy: .default)
    try fixture.report(Report(publish: [spec], unpublish: [published[0]]), from: device)
    for _ in 1...3 { _ = try fixture.subscribe(on: device) }
    #expect(throws: ResolverError.self) { try fixture.subscribe(on: device) }
    // Another device has its own count.
    _ = try fixture.publish("other", on: try fixture.device())
  }

  @Test func theLimitMustBePositive() {
    #expect(throws: ResolutionConfigurationError.self) {
      try ResolutionConfiguration(maximumHandlesPerDevice: 0).validate()
    }
  }
}
