/// Reed–Solomon RS(31, 16) over GF(32): 15 parity symbols correct e errors and f erasures
/// whenever 2e + f ≤ 15. Code words are arrays of 31 symbols (0…31), message first; the
/// generator's roots are α¹…α¹⁵.
enum ReedSolomon {
  static let length = 31
  static let messageLength = 16
  static let parityCount = length - messageLength

  /// g(x) = Π (x − αʲ), j = 1…15, highest degree first (monic).
  private static let generator: [UInt8] = {
    var poly: [UInt8] = [1]
    for root in 1...parityCount {
      var next = [UInt8](repeating: 0, count: poly.count + 1)
      let alpha = GaloisField32.power(root)
      for (index, coefficient) in poly.enumerated() {
        next[index] ^= coefficient
        next[index + 1] ^= GaloisField32.multiply(coefficient, alpha)
      }
      poly = next
    }
    return poly
  }()

  /// The code word of 16 message symbols (each < 32): the message, then 15 parity symbols.
  static func encode(_ message: [UInt8]) -> [UInt8] {
    precondition(message.count == messageLength && message.allSatisfy { $0 < 32 })
    var remainder = [UInt8](repeating: 0, count: parityCount)
    for symbol in message {
      let feedback = symbol ^ remainder[0]
      remainder.removeFirst()
      remainder.append(0)
      if feedback != 0 {
        for index in 0..<parityCount {
          remainder[index] ^= GaloisField32.multiply(generator[index + 1], feedback)
        }
      }
    }
    return message + remainder
  }

  /// The 15 syndromes Sⱼ = r(αʲ), j = 1…15.
  private static func syndromes(_ word: [UInt8]) -> [UInt8] {
    (1...parityCount).map { root in
      let x = GaloisField32.power(root)
      var value: UInt8 = 0
      for symbol in word { value = GaloisField32.multiply(value, x) ^ symbol }
      return value
    }
  }

  /// Corrects `word` in place, treating the symbols at `erasures` (indices, distinct) as
  /// unknown. Returns the number of symbols changed, or nil when the word is not within
  /// reach of a code word (2e + f > 15 or an inconsistent result).
  static func decode(_ word: inout [UInt8], erasures: [Int] = []) -> Int? {
    guard word.count == length, erasures.count <= parityCount,
      Set(erasures).count == erasures.count, erasures.allSatisfy({ (0..<length).contains($0) })
    else { return nil }
    for index in word.indices { word[index] &= 0x1f }
    let syndromes = syndromes(word)
    if syndromes.allSatisfy({ $0 == 0 }) { return 0 }

    // Erasure locator Γ(x) = Π (1 − Xᵢ x), lowest degree first; Xᵢ = α^(n−1−index).
    var locator: [UInt8] = [1]
    for index in erasures {
      let x = GaloisField32.power(length - 1 - index)
      var next = locator + [0]
      for degree in 0..<locator.count {
        next[degree + 1] ^= GaloisField32.multiply(locator[degree], x)
      }
      locator = next
    }

    // Berlekamp–Massey started from the erasure locator.
    let erasureCount = erasures.count
    var previous = locator
    var degree = erasureCount
    var shift = 1
    var lastDiscrepancy: UInt8 = 1
    for step in erasureCount..<parityCount {
      var discrepancy: UInt8 = 0
      for index in 0...min(degree, locator.count - 1) where step - index >= 0 {
        discrepancy ^= GaloisField32.multiply(locator[index], syndromes[step - index])
      }
      if discrepancy == 0 {
        shift += 1
        continue
      }
      let factor = GaloisField32.multiply(discrepancy, GaloisField32.inverse(lastDiscrepancy))
      var next = locator
      if next.count < previous.count + shift {
        next += [UInt8](repeating: 0, count: previous.count + shift - next.count)
      }
      for (index, coefficient) in previous.enumerated() {
        next[index + shift] ^= GaloisField32.multiply(factor, coefficient)
      }
      if 2 * degree <= step + erasureCount {
        previous = locator
        degree = step + 1 + erasureCount - degree
        lastDiscrepancy = discrepancy
        shift = 1
      } else {
        shift += 1
      }
      locator = next
    }
    while locator.count > 1 && locator.last == 0 { locator.removeLast() }
    guard locator.count - 1 == degree, 2 * degree - erasureCount <= parityCount else { return nil }

    // Chien search: positions whose X⁻¹ is a root.
    var positions: [Int] = []
    for index in 0..<length {
      let inverse = GaloisField32.power(-(length - 1 - index))
      if GaloisField32.evaluate(locator, at: inverse) == 0 { positions.append(index) }
    }
    guard positions.count == degree else { return nil }

    // Forney: eᵢ = Ω(Xᵢ⁻¹) / Λ′(Xᵢ⁻¹), Ω = S·Λ mod x¹⁵ (first root α¹).
    var evaluator = [UInt8](repeating: 0, count: parityCount)
    for (i, s) in syndromes.enumerated() {
      for (j, l) in locator.enumerated() where i + j < parityCount {
        evaluator[i + j] ^= GaloisField32.multiply(s, l)
      }
    }
    // Formal derivative: odd-degree terms shift down.
    var derivative = [UInt8](repeating: 0, count: max(1, locator.count - 1))
    for index in stride(from: 1, to: locator.count, by: 2) {
      derivative[index - 1] = locator[index]
    }
    var changed = 0
    for index in positions {
      let inverse = GaloisField32.power(-(length - 1 - index))
      let denominator = GaloisField32.evaluate(derivative, at: inverse)
      guard denominator != 0 else { return nil }
      let value = GaloisField32.multiply(
        GaloisField32.evaluate(evaluator, at: inverse), GaloisField32.inverse(denominator))
      if value != 0 { changed += 1 }
      word[index] ^= value
    }
    guard self.syndromes(word).allSatisfy({ $0 == 0 }) else { return nil }
    return changed
  }
}
