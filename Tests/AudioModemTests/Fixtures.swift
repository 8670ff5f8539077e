import AudioModem
import AudioModemTestKit
import Tokens

/// Builds test audio: silence, one frame at a given lead, silence; and decodes it.
struct Scenario {
  var sampleRate = 48_000.0
  var lead = 0.25
  var tail = 0.3

  func audio(for token: Token) throws -> (audio: [Float], power: Double) {
    let frame = try AudioModemEncoder(sampleRate: sampleRate).samples(for: token)
    let audio =
      [Float](repeating: 0, count: Int(lead * sampleRate)) + frame
      + [Float](repeating: 0, count: Int(tail * sampleRate))
    return (audio, Channel.power(of: frame))
  }

  func decode(_ audio: [Float]) throws -> [DecodedToken] {
    var decoder = try AudioModemDecoder(sampleRate: sampleRate)
    return decoder.process(audio) + decoder.finish()
  }
}
