import AudioModem
import AudioModemTestKit
import Testing
import Tokens

@Suite("Encode and decode")
struct RoundTripTests {
  @Test(
    "a clean frame decodes at 44.1 and 48 kHz, with its offset", arguments: [44_100.0, 48_000.0])
  func roundTrip(sampleRate: Double) async throws {
    let token = try Token(hex: "f00dfeedcafe0001")
    let encoder = try AudioModemEncoder(sampleRate: sampleRate)
    let frame = encoder.samples(for: token)
    #expect(Double(frame.count) / sampleRate <= 1.0)
    let lead = Int(0.3 * sampleRate)
    var audio = [Float](repeating: 0, count: lead)
    audio += frame
    audio += [Float](repeating: 0, count: Int(0.2 * sampleRate))
    let found = try await Scenario(sampleRate: sampleRate).decode(audio)
    #expect(found.map(\.token) == [token])
    let first = try #require(found.first)
    #expect(abs(first.offset - 0.3) < 0.002)
    #expect(abs(first.frequencyOffset) < 5)
    #expect(first.snrDB > 8)
  }
}
