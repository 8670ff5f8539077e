import TestSupport
import Foundation
import MediumTestKit
import PermissionStore
import Testing
import NearbyTesting

/// The store shared with other processes (the `nearby-store-probe` helper).
@Suite("DefaultsStore across processes", .serialized)
struct CrossProcessTests {
  @Test("two processes incrementing one counter 1 000 times each end at 2 000")
  func twoProcessesIncrement() async throws {
    let folder = try TemporaryFolder()
    defer { folder.remove() }
    let arguments = ["increment", folder.url.path, "counter", "n", "1000"]
    async let first = Probe.run(arguments)
    async let second = Probe.run(arguments)
    let results = try await [first, second]
    for result in results { #expect(result.status == 0, "\(result.err)") }
    let store = try await DefaultsStore(appID: "counter", directory: folder.url)
    #expect(store.integer(forKey: "n") == 2_000)
  }

  @Test("a change made by another process reaches a subscriber's stream within 1 s")
  func changeSeenFromAnotherProcess() async throws {
    let folder = try TemporaryFolder()
    defer { folder.remove() }
    let store = try await DefaultsStore(appID: "shared", directory: folder.url)
    let events = StreamRecorder(store.events())
    let result = try await Probe.run(["set", folder.url.path, "shared", "mode", "7"])
    #expect(result.status == 0, "\(result.err)")
    let written = ContinuousClock.now
    #expect(
      await events.until() { elements in
        events.elements(since: written).contains(.changed(keys: ["mode"], origin: .elsewhere))
          || elements.contains(.changed(keys: ["mode"], origin: .elsewhere))
      })
    #expect(store.integer(forKey: "mode") == 7)
  }

  @Test("a writer killed with SIGKILL at random moments never leaves a torn file (200 kills)")
  func crashSafety() async throws {
    let folder = try TemporaryFolder()
    defer { folder.remove() }
    let file = folder.url.appendingPathComponent("crash.json")
    var failures: [String] = []
    var killedMidWrite = 0
    for round in 0..<200 {
      let delay = Duration.microseconds(Int.random(in: 0...20_000))
      let (acknowledged, _) = try await Probe.killWhileWriting(
        ["write-loop", folder.url.path, "crash", "value"], after: delay)
      let data = try Data(contentsOf: file)
      guard
        let values = try? JSONDecoder().decode([String: StoreValue].self, from: data),
        case .int(let stored) = values["value"]
      else {
        failures.append(
          "round \(round): the file does not parse: \(String(decoding: data, as: UTF8.self))")
        continue
      }
      let last = acknowledged ?? 0
      if stored == last + 1 { killedMidWrite += 1 }
      if stored != last && stored != last + 1 {
        failures.append("round \(round): acknowledged \(last), file holds \(stored)")
      }
    }
    #expect(failures.isEmpty, "\(failures.prefix(5))")
    // The kills did land between acknowledgements sometimes (the test exercised a write).
    #expect(killedMidWrite > 0)
  }
}
