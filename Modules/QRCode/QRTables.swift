/// The standard's tables and the data's encoding: capacities, the byte-mode segment, its
/// padding, the Reed–Solomon error correction per block and the blocks' interleaving.
enum QRTables {
  static let maximumVersion = 10
  /// Error correction codewords per block, by level then version (index 0 unused).
  static let eccPerBlock: [QRCode.Level: [Int]] = [
    .low: [0, 7, 10, 15, 20, 26, 18, 20, 24, 30, 18],
    .medium: [0, 10, 16, 26, 18, 24, 16, 18, 22, 22, 26],
  ]
  /// Error correction blocks, by level then version.
  static let blocks: [QRCode.Level: [Int]] = [
    .low: [0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 4],
    .medium: [0, 1, 1, 1, 2, 2, 4, 4, 4, 5, 5],
  ]

  /// Modules that carry codewords (not function patterns or format and version bits).
  static func rawDataModules(version: Int) -> Int {
    var result = (16 * version + 128) * version + 64
    if version >= 2 {
      let alignments = version / 7 + 2
      result -= (25 * alignments - 10) * alignments - 55
      if version >= 7 { result -= 36 }
    }
    return result
  }

  static func dataCodewords(version: Int, level: QRCode.Level) -> Int {
    rawDataModules(version: version) / 8 - (eccPerBlock[level]?[version] ?? 0)
      * (blocks[level]?[version] ?? 0)
  }

  /// The byte-mode segment, terminated and padded to the version's data codewords.
  static func dataCodewords(for bytes: [UInt8], version: Int, level: QRCode.Level) -> [UInt8] {
    var bits: [Bool] = []
    func append(_ value: Int, _ count: Int) {
      for shift in stride(from: count - 1, through: 0, by: -1) {
        bits.append((value >> shift) & 1 == 1)
      }
    }
    let capacity = dataCodewords(version: version, level: level) * 8
    append(0b0100, 4)
    append(bytes.count, version < 10 ? 8 : 16)
    for byte in bytes { append(Int(byte), 8) }
    append(0, min(4, capacity - bits.count))
    append(0, (8 - bits.count % 8) % 8)
    var codewords = stride(from: 0, to: bits.count, by: 8).map { start in
      bits[start..<start + 8].reduce(UInt8(0)) { $0 << 1 | ($1 ? 1 : 0) }
    }
    var pad: UInt8 = 0xEC
    while codewords.count < capacity / 8 {
      codewords.append(pad)
      pad = pad == 0xEC ? 0x11 : 0xEC
    }
    return codewords
  }

  /// The data split into blocks, each with its error correction, interleaved as the symbol
  /// carries them.
  static func interleaved(_ data: [UInt8], version: Int, level: QRCode.Level) -> [UInt8] {
    let count = blocks[level]?[version] ?? 1
    let eccLength = eccPerBlock[level]?[version] ?? 0
    let raw = rawDataModules(version: version) / 8
    let shortBlocks = count - raw % count
    let shortLength = raw / count
    let divisor = ReedSolomon.divisor(degree: eccLength)
    var blocks: [[UInt8]] = []
    var start = 0
    for index in 0..<count {
      let length = shortLength - eccLength + (index < shortBlocks ? 0 : 1)
      var block = Array(data[start..<start + length])
      start += length
      let ecc = ReedSolomon.remainder(block, divisor: divisor)
      if index < shortBlocks { block.append(0) }
      blocks.append(block + ecc)
    }
    var result: [UInt8] = []
    for column in 0..<blocks[0].count {
      for (index, block) in blocks.enumerated()
      where column != shortLength - eccLength || index >= shortBlocks {
        result.append(block[column])
      }
    }
    return result
  }
}

/// Reed–Solomon over GF(2⁸) with the polynomial x⁸ + x⁴ + x³ + x² + 1 (0x11D), as QR codes use.
enum ReedSolomon {
  static func multiply(_ x: UInt8, _ y: UInt8) -> UInt8 {
    var z = 0
    for shift in stride(from: 7, through: 0, by: -1) {
      z = (z << 1) ^ ((z >> 7) * 0x11D)
      z ^= Int((y >> UInt8(shift)) & 1) * Int(x)
    }
    return UInt8(z)
  }

  /// The generator polynomial of `degree`, highest coefficient (1) left out.
  static func divisor(degree: Int) -> [UInt8] {
    var result = [UInt8](repeating: 0, count: degree)
    result[degree - 1] = 1
    var root: UInt8 = 1
    for _ in 0..<degree {
      for index in 0..<degree {
        result[index] = multiply(result[index], root)
        if index + 1 < degree { result[index] ^= result[index + 1] }
      }
      root = multiply(root, 0x02)
    }
    return result
  }

  static func remainder(_ data: [UInt8], divisor: [UInt8]) -> [UInt8] {
    var result = [UInt8](repeating: 0, count: divisor.count)
    for byte in data {
      let factor = byte ^ result.removeFirst()
      result.append(0)
      for index in result.indices { result[index] ^= multiply(divisor[index], factor) }
    }
    return result
  }
}
