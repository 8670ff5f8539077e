import Foundation
import Testing
import TestSupport

/// Runs the built `nearby demo` the way the README does.
@Suite("nearby demo")
struct DemoCommandTests {
  /// The `nearby` executable next to this test bundle (SwiftPM puts both in the build folder).
  static var nearbyExecutable: URL? { try? ChildProcess.built("nearby") }

  /// Runs `nearby` with `arguments` on a thread of its own (waiting for a process must not
  /// block the tests' cooperative threads); returns its exit status, stdout and stderr.
  static func run(_ arguments: [String]) async throws -> (status: Int32, out: Data, err: Data) {
    let executable = try #require(
      nearbyExecutable, "build the nearby product first: swift build --build-tests")
    let result = try await ChildProcess.run(executable, arguments)
    return (result.status, result.out, result.err)
  }

  @Test("prints found and lost as JSON lines and exits 0")
  func demoJSON() async throws {
    let (status, output, _) = try await Self.run(["demo", "--json"])
    #expect(status == 0)
    let lines = String(decoding: output, as: UTF8.self).split(separator: "\n")
    let events = try lines.map {
      try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
    }
    let kinds = events.compactMap { $0["event"] as? String }
    #expect(kinds.contains("found"))
    #expect(kinds.contains("lost"))
    #expect(
      events.contains {
        $0["device"] as? String == "Carol" && $0["text"] as? String == "Bob"
          && $0["event"] as? String == "lost"
      })
  }

  @Test("rejects a bad --lost-after with a message naming the range")
  func badArgument() async throws {
    let (status, _, errors) = try await Self.run(["demo", "--lost-after", "99"])
    #expect(status == 64)
    #expect(String(decoding: errors, as: UTF8.self).contains("between 0.2 and 10"))
  }
}
