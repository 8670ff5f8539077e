import Testing
import Tokens

@testable import AudioModem

@Suite("Reed–Solomon, CRC and frame coding")
struct CodingTests {
  @Test("CRC-16/CCITT-FALSE check value")
  func crcCheckValue() {
    #expect(CRC16.checksum(Array("123456789".utf8)) == 0x29b1)
  }

  @Test("RS(31,16) corrects every mix of e errors and f erasures with 2e + f ≤ 15")
  func reedSolomonCorrects() {
    var generator = SystemRandomNumberGenerator()
    for errors in 0...7 {
      for erasures in stride(from: 0, through: 15 - 2 * errors, by: 1) {
        for _ in 0..<20 {
          let message = (0..<16).map { _ in UInt8.random(in: 0..<32, using: &generator) }
          let codeword = ReedSolomon.encode(message)
          var word = codeword
          let positions = Array((0..<31).shuffled(using: &generator).prefix(errors + erasures))
          for position in positions {
            word[position] ^= UInt8.random(in: 1..<32, using: &generator)
          }
          let erased = Array(positions.suffix(erasures))
          let corrected = ReedSolomon.decode(&word, erasures: erased)
          #expect(corrected != nil, "e=\(errors) f=\(erasures)")
          #expect(word == codeword, "e=\(errors) f=\(erasures)")
        }
      }
    }
  }

  @Test("RS(31,16) refuses most words with 8 errors instead of miscorrecting")
  func reedSolomonBeyondReach() {
    var generator = SystemRandomNumberGenerator()
    var refused = 0
    for _ in 0..<200 {
      let message = (0..<16).map { _ in UInt8.random(in: 0..<32, using: &generator) }
      var word = ReedSolomon.encode(message)
      for position in (0..<31).shuffled(using: &generator).prefix(8) {
        word[position] ^= UInt8.random(in: 1..<32, using: &generator)
      }
      if ReedSolomon.decode(&word) == nil { refused += 1 }
    }
    #expect(refused > 150)
  }

  @Test("frame symbols round trip and a CRC mismatch yields nothing")
  func frameCodec() throws {
    let token = try Token(hex: "0123456789abcdef")
    let symbols = FrameCodec.symbols(for: token)
    #expect(symbols.count == 31)
    let confidence = [Float](repeating: 1, count: 31)
    #expect(FrameCodec.token(from: symbols, confidence: confidence)?.token == token)
    var damaged = symbols
    for index in [0, 5, 9, 20, 30] { damaged[index] ^= 7 }
    #expect(FrameCodec.token(from: damaged, confidence: confidence)?.token == token)
    let zero = FrameCodec.token(from: [UInt8](repeating: 0, count: 31), confidence: confidence)
    #expect(zero == nil)
  }
}
