import ArgumentParser
import Core
import Foundation
import Logging
import MediumTestKit
import Resolution
import Strategy

struct DemoCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "demo",
    abstract: "Simulated devices publish and subscribe on an in-memory air; found and lost print.",
    discussion: """
      Alice and Bob publish their names; Carol and Alice subscribe to names. Bob walks out of \
      range and is lost. A phone casts to a set-top box that only broadcasts audio, while a \
      speaker that only scans audio hears nothing. Alice stops publishing and is lost. \
      Everything runs in this process (in-process resolver, in-memory air); it exits 0 when \
      every expected event happened, 1 otherwise.
      """)

  @Flag(name: .long, help: "Print one JSON object a line instead of text.")
  var json = false

  @Option(name: .long, help: "Seconds without a sighting before a message is lost (0.2–10).")
  var lostAfter: Double = 1.5

  func validate() throws {
    guard (0.2...10).contains(lostAfter) else {
      throw ValidationError("--lost-after must be between 0.2 and 10 seconds, got \(lostAfter)")
    }
  }

  func run() async throws {
    let log = DemoLog(json: json)
    var logger = Logger(label: "nearby.demo")
    logger.logLevel = .error
    let air = Air()
    let resolver = try InProcessResolver(
      configuration: ResolutionConfiguration(lostAfter: .seconds(lostAfter)), logger: logger)
    let key = "demo-project"

    func device(_ name: String, at x: Double) async throws -> MessageManager {
      await air.place(name, at: Air.Position(x: x))
      return try await MessageManager(
        apiKey: key,
        configuration: .init(
          resolver: .inProcess(resolver), mediums: MediumProvider.air(air, device: name),
          logger: logger))
    }
    func watch(
      _ manager: MessageManager, as name: String, configure: (inout SubscriptionParams) -> Void
    )
      async throws -> Subscription
    {
      try await manager.subscribe(
        onFound: { log.event("found", device: name, message: $0) },
        onLost: { log.event("lost", device: name, message: $0) },
        configure: configure)
    }
    let settle = Duration.seconds(lostAfter + 1)

    log.step("Alice (0 m), Bob (3 m) and Carol (6 m) stand together")
    let alice = try await device("Alice", at: 0)
    let bob = try await device("Bob", at: 3)
    let carol = try await device("Carol", at: 6)
    var alicePublication: Publication? = try await alice.publish(
      Message(text: "Alice", type: "name"))
    let bobPublication = try await bob.publish(Message(text: "Bob", type: "name"))
    log.step("Alice and Bob publish their names; Carol and Alice subscribe to names")
    let carolSubscription = try await watch(carol, as: "Carol") { $0.type = "name" }
    let aliceSubscription = try await watch(alice, as: "Alice") { $0.type = "name" }
    try await Task.sleep(for: .milliseconds(500))

    log.step("Bob walks 30 m away")
    await air.place("Bob", at: Air.Position(x: 30))
    try await Task.sleep(for: settle)

    log.step("A phone casts to a set-top box: the phone only scans audio, the box only broadcasts")
    let box = try await device("TV box", at: 100)
    let phone = try await device("Phone", at: 102)
    let speaker = try await device("Speaker", at: 101)
    let boxSubscription = try await watch(box, as: "TV box") {
      $0.type = "cast"
      $0.strategy = Strategy(mediums: .audio, mode: .broadcast)
    }
    let speakerSubscription = try await watch(speaker, as: "Speaker") {
      $0.type = "cast"
      $0.strategy = Strategy(mediums: .audio, mode: .scan)
    }
    let cast = try await phone.publish(Message(text: "Play: Big Buck Bunny", type: "cast")) {
      $0.strategy = Strategy(mediums: .audio, mode: .scan)
    }
    try await Task.sleep(for: .milliseconds(800))

    log.step("Alice stops publishing")
    await alicePublication?.cancel()
    alicePublication = nil
    try await Task.sleep(for: .milliseconds(300))

    withExtendedLifetime(
      (
        bobPublication, carolSubscription, aliceSubscription, boxSubscription, speakerSubscription,
        cast
      )
    ) {}
    for manager in [alice, bob, carol, box, phone, speaker] { await manager.shutdown() }

    let expectations: [(String, Bool)] = [
      ("Carol found Alice", log.count("found", device: "Carol", text: "Alice") >= 1),
      ("Carol found Bob", log.count("found", device: "Carol", text: "Bob") >= 1),
      ("Alice found Bob", log.count("found", device: "Alice", text: "Bob") >= 1),
      ("Alice did not find herself", log.count("found", device: "Alice", text: "Alice") == 0),
      ("Carol lost Bob", log.count("lost", device: "Carol", text: "Bob") >= 1),
      ("Alice lost Bob", log.count("lost", device: "Alice", text: "Bob") >= 1),
      (
        "the TV box found the cast",
        log.count("found", device: "TV box", text: "Play: Big Buck Bunny") == 1
      ),
      (
        "the speaker heard no cast",
        log.count("found", device: "Speaker", text: "Play: Big Buck Bunny") == 0
      ),
      ("Carol lost Alice", log.count("lost", device: "Carol", text: "Alice") >= 1),
    ]
    let failed = expectations.filter { !$0.1 }.map(\.0)
    log.step(
      "\(log.count("found")) found, \(log.count("lost")) lost; "
        + (failed.isEmpty
          ? "every expected event happened" : "missing: \(failed.joined(separator: ", "))"))
    if !failed.isEmpty { throw ExitCode(1) }
  }
}
