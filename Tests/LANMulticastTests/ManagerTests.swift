import TestSupport
import Core
import LANMulticast
import Logging
import MediumTestKit
import Resolution
import Strategy
import Testing
import NearbyTesting

/// Two managers in one process with LAN mediums on loopback and one in-process resolver:
/// the medium as the manager drives it, from publish to found to lost.
@Suite("LAN medium under a manager")
struct ManagerTests {
  @Test func twoManagersFindAndLoseEachOtherOverLAN() async throws {
    // lostAfter is long: the lost expected comes from the cancel, and a stall of a loaded
    // machine longer than a short lostAfter would make "hello" flap between found and lost.
    let resolver = try InProcessResolver(
      configuration: ResolutionConfiguration(lostAfter: .seconds(10)),
      logger: Logger(label: "test"))
    let configuration = Loopback.configuration()
    func manager() async throws -> MessageManager {
      try await MessageManager(
        apiKey: "lan-test",
        configuration: .init(resolver: .inProcess(resolver), mediums: [.lan(configuration)]))
    }
    let alice = try await manager()
    let bob = try await manager()
    let seen = Watched<[String]>([])
    var publication: Publication? = try await alice.publish(Message(text: "hello")) {
      $0.strategy = Strategy(mediums: .lan)
    }
    let subscription = try await bob.subscribe(
      onFound: { message in seen.withLock { $0.append("found \(message.text ?? "")") } },
      onLost: { message in seen.withLock { $0.append("lost \(message.text ?? "")") } }
    ) { $0.strategy = Strategy(mediums: .lan) }
    #expect(await seen.until(timeout: .seconds(10)) { $0 == ["found hello"] })
    // Publishing with the default strategy (BLE and audio) does not use LAN.
    let other = try await alice.publish(Message(text: "not on lan"))
    await publication?.cancel()
    publication = nil
    #expect(await seen.until(timeout: .seconds(10)) { $0 == ["found hello", "lost hello"] })
    withExtendedLifetime((subscription, other)) {}
    await alice.shutdown()
    await bob.shutdown()
  }
}
