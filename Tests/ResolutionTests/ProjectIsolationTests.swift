@_spi(Resolver) import Core
import Foundation
@_spi(Resolver) import Resolution
import Testing

/// Nothing crosses projects: a token of another project heard by a device names nothing, and
/// leaves no row about that device.
@Suite("Project isolation")
struct ProjectIsolationTests {
  @Test func aTokenOfAnotherProjectIsIgnored() throws {
    let fixture = EngineFixture()
    let alice = try fixture.device(project: "a")
    let bob = try fixture.device(project: "b")
    _ = try fixture.publish("Alice", on: alice)
    _ = try fixture.subscribe(on: bob)
    #expect(try fixture.sighting(by: bob, of: alice).isEmpty)
    #expect(try fixture.sighting(by: alice, of: bob).isEmpty)
    #expect(fixture.counts.sightings == 0)
    #expect(fixture.counts.deliveries == 0)
    // The same two in one project find each other.
    let carol = try fixture.device(project: "a")
    _ = try fixture.subscribe(on: carol)
    #expect(try fixture.sighting(by: carol, of: alice).count == 1)
  }
}
