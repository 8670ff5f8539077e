import Foundation
import Testing

/// Runs the built `nearby audio encode` and `nearby audio decode` on real WAV files.
@Suite("nearby audio")
struct AudioCommandTests {
  private static func temporaryFile(_ name: String) -> String {
    FileManager.default.temporaryDirectory
      .appendingPathComponent("nearby-audio-\(UUID().uuidString)-\(name)").path
  }

  @Test(
    "encode then decode recovers the token, at both rates and formats",
    arguments: [("48000", "s16"), ("44100", "f32")])
  func roundTrip(rate: String, format: String) async throws {
    let file = Self.temporaryFile("token.wav")
    defer { try? FileManager.default.removeItem(atPath: file) }
    let encoded = try await DemoCommandTests.run([
      "audio", "encode", "--token", "F00DFEEDCAFE0001", "--rate", rate, "--format", format,
      "--out", file,
    ])
    #expect(encoded.status == 0)
    let text = try await DemoCommandTests.run(["audio", "decode", file])
    #expect(text.status == 0)
    let line = String(decoding: text.out, as: UTF8.self)
    #expect(line.hasPrefix("f00dfeedcafe0001  0.250 s  "), "\(line)")

    let json = try await DemoCommandTests.run(["audio", "decode", "--json", file])
    #expect(json.status == 0)
    let object = try #require(
      JSONSerialization.jsonObject(with: json.out) as? [String: Any], "\(json.out)")
    #expect(object["token"] as? String == "f00dfeedcafe0001")
    #expect(abs((object["offset"] as? Double ?? -1) - 0.25) < 0.002)
    #expect(object["snr_db"] is Double)
  }

  @Test("a file without a token prints nothing and exits 0")
  func silence() async throws {
    let file = Self.temporaryFile("silence.wav")
    defer { try? FileManager.default.removeItem(atPath: file) }
    // A valid header and one second of 16-bit silence.
    var bytes = Array("RIFF".utf8) + le32(36 + 96_000) + Array("WAVEfmt ".utf8)
    bytes += le32(16) + [1, 0, 1, 0] + le32(48_000) + le32(96_000) + [2, 0, 16, 0]
    bytes += Array("data".utf8) + le32(96_000) + [UInt8](repeating: 0, count: 96_000)
    try Data(bytes).write(to: URL(fileURLWithPath: file))
    let result = try await DemoCommandTests.run(["audio", "decode", "--json", file])
    #expect(result.status == 0)
    #expect(result.out.isEmpty)
  }

  @Test("a file that is not WAV fails with a message saying so")
  func notWAV() async throws {
    let file = Self.temporaryFile("text.wav")
    defer { try? FileManager.default.removeItem(atPath: file) }
    try Data("hello".utf8).write(to: URL(fileURLWithPath: file))
    let result = try await DemoCommandTests.run(["audio", "decode", file])
    #expect(result.status == 1)
    #expect(String(decoding: result.err, as: UTF8.self).contains("not a WAV file"))
  }

  @Test("a bad token is refused with the expected form")
  func badToken() async throws {
    let result = try await DemoCommandTests.run([
      "audio", "encode", "--token", "12", "--out", Self.temporaryFile("x.wav"),
    ])
    #expect(result.status == 64)
    #expect(String(decoding: result.err, as: UTF8.self).contains("16 hex digits"))
  }

  private func le32(_ value: Int) -> [UInt8] {
    (0..<4).map { UInt8(value >> (8 * $0) & 0xff) }
  }
}
