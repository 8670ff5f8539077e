import Tokens

/// The data part of a frame: token ‖ CRC-16 (80 bits) as 16 five-bit symbols, Reed–Solomon
/// RS(31, 16) encoded, then scrambled so that no token makes a run of equal chirps.
enum FrameCodec {
  /// The scrambling sequence: five bits at a time from the LFSR x⁹ + x⁵ + 1 seeded with 0x1AB.
  static let scrambler: [UInt8] = {
    var state: UInt16 = 0x1ab
    return (0..<ReedSolomon.length).map { _ in
      var symbol: UInt8 = 0
      for _ in 0..<5 {
        let bit = ((state >> 8) ^ (state >> 4)) & 1
        state = ((state << 1) | bit) & 0x1ff
        symbol = (symbol << 1) | UInt8(bit)
      }
      return symbol
    }
  }()

  /// The 31 chirp symbols (0…31) that carry `token`.
  static func symbols(for token: Token) -> [UInt8] {
    let bytes = token.bytes
    let crc = CRC16.checksum(bytes)
    let payload = bytes + [UInt8(crc >> 8), UInt8(crc & 0xff)]
    var message: [UInt8] = []
    var accumulator: UInt32 = 0
    var bits = 0
    for byte in payload {
      accumulator = (accumulator << 8) | UInt32(byte)
      bits += 8
      while bits >= 5 {
        bits -= 5
        message.append(UInt8((accumulator >> UInt32(bits)) & 0x1f))
      }
    }
    return zip(ReedSolomon.encode(message), scrambler).map { $0 ^ $1 }
  }

  /// The token in 31 received symbols, trying errors-only decoding first and then erasing
  /// more and more of the least confident symbols (up to 8). Nil when no attempt yields a
  /// code word whose CRC matches.
  /// - Parameters:
  ///   - symbols: the 31 demodulated symbols.
  ///   - confidence: one value a symbol, larger is surer (the order is what counts).
  static func token(from symbols: [UInt8], confidence: [Float]) -> (token: Token, corrected: Int)? {
    guard symbols.count == ReedSolomon.length, confidence.count == symbols.count else { return nil }
    let received = zip(symbols, scrambler).map { ($0 & 0x1f) ^ $1 }
    let leastConfident = confidence.indices.sorted { confidence[$0] < confidence[$1] }
    for erasureCount in [0, 2, 4, 6, 8] {
      var word = received
      guard
        let corrected = ReedSolomon.decode(
          &word, erasures: Array(leastConfident.prefix(erasureCount)))
      else { continue }
      if let token = token(fromMessage: Array(word.prefix(ReedSolomon.messageLength))) {
        return (token, corrected)
      }
    }
    return nil
  }

  private static func token(fromMessage message: [UInt8]) -> Token? {
    var bytes: [UInt8] = []
    var accumulator: UInt32 = 0
    var bits = 0
    for symbol in message {
      accumulator = (accumulator << 5) | UInt32(symbol)
      bits += 5
      if bits >= 8 {
        bits -= 8
        bytes.append(UInt8((accumulator >> UInt32(bits)) & 0xff))
      }
    }
    guard bytes.count == 10 else { return nil }
    let crc = UInt16(bytes[8]) << 8 | UInt16(bytes[9])
    guard CRC16.checksum(bytes.prefix(8)) == crc else { return nil }
    return try? Token(bytes: bytes.prefix(8))
  }
}
