/// A symbol being drawn: its modules, and which of them are function patterns (finders,
/// timing, alignment, format and version bits) that the data and the mask leave alone.
struct QRGrid {
  let version: Int
  let size: Int
  var modules: [Bool]
  var isFunction: [Bool]

  init(version: Int) {
    self.version = version
    size = 17 + 4 * version
    modules = [Bool](repeating: false, count: size * size)
    isFunction = modules
  }

  mutating func set(_ x: Int, _ y: Int, _ dark: Bool, function: Bool = true) {
    modules[y * size + x] = dark
    if function { isFunction[y * size + x] = true }
  }

  mutating func drawFunctionPatterns() {
    for index in 0..<size {
      set(6, index, index % 2 == 0)
      set(index, 6, index % 2 == 0)
    }
    for (x, y) in [(3, 3), (size - 4, 3), (3, size - 4)] {
      for dy in -4...4 {
        for dx in -4...4 where (0..<size).contains(x + dx) && (0..<size).contains(y + dy) {
          let distance = max(abs(dx), abs(dy))
          set(x + dx, y + dy, distance != 2 && distance != 4)
        }
      }
    }
    let positions = alignmentPositions()
    let last = positions.count - 1
    for (i, x) in positions.enumerated() {
      for (j, y) in positions.enumerated()
      where !((i == 0 && j == 0) || (i == 0 && j == last) || (i == last && j == 0)) {
        for dy in -2...2 {
          for dx in -2...2 { set(x + dx, y + dy, max(abs(dx), abs(dy)) != 1) }
        }
      }
    }
    drawFormatBits(level: .medium, mask: 0)  // reserves the modules; drawn again at the end
    if version >= 7 {
      var remainder = version
      for _ in 0..<12 { remainder = (remainder << 1) ^ ((remainder >> 11) * 0x1F25) }
      let bits = version << 12 | remainder
      for index in 0..<18 {
        let dark = (bits >> index) & 1 == 1
        let (a, b) = (size - 11 + index % 3, index / 3)
        set(a, b, dark)
        set(b, a, dark)
      }
    }
  }

  func alignmentPositions() -> [Int] {
    guard version > 1 else { return [] }
    let count = version / 7 + 2
    let step = (version * 4 + count * 2 + 1) / (count * 2 - 2) * 2
    var result = [6]
    var position = size - 7
    for _ in 0..<(count - 1) {
      result.insert(position, at: 1)
      position -= step
    }
    return result
  }

  mutating func drawFormatBits(level: QRCode.Level, mask: Int) {
    let data = level.formatBits << 3 | mask
    var remainder = data
    for _ in 0..<10 { remainder = (remainder << 1) ^ ((remainder >> 9) * 0x537) }
    let bits = (data << 10 | remainder) ^ 0x5412
    func bit(_ index: Int) -> Bool { (bits >> index) & 1 == 1 }
    for index in 0...5 { set(8, index, bit(index)) }
    set(8, 7, bit(6))
    set(8, 8, bit(7))
    set(7, 8, bit(8))
    for index in 9..<15 { set(14 - index, 8, bit(index)) }
    for index in 0..<8 { set(size - 1 - index, 8, bit(index)) }
    for index in 8..<15 { set(8, size - 15 + index, bit(index)) }
    set(8, size - 8, true)
  }

  /// The codewords in the standard's zigzag, two columns at a time from the right.
  mutating func drawCodewords(_ codewords: [UInt8]) {
    var index = 0
    var right = size - 1
    while right >= 1 {
      if right == 6 { right = 5 }
      for vertical in 0..<size {
        for offset in 0..<2 {
          let x = right - offset
          let upward = (right + 1) & 2 == 0
          let y = upward ? size - 1 - vertical : vertical
          if !isFunction[y * size + x], index < codewords.count * 8 {
            let dark = (codewords[index >> 3] >> UInt8(7 - index & 7)) & 1 == 1
            set(x, y, dark, function: false)
            index += 1
          }
        }
      }
      right -= 2
    }
  }

  mutating func apply(mask: Int) {
    for y in 0..<size {
      for x in 0..<size where !isFunction[y * size + x] {
        let flip: Bool
        switch mask {
        case 0: flip = (x + y) % 2 == 0
        case 1: flip = y % 2 == 0
        case 2: flip = x % 3 == 0
        case 3: flip = (x + y) % 3 == 0
        case 4: flip = (x / 3 + y / 2) % 2 == 0
        case 5: flip = x * y % 2 + x * y % 3 == 0
        case 6: flip = (x * y % 2 + x * y % 3) % 2 == 0
        default: flip = ((x + y) % 2 + x * y % 3) % 2 == 0
        }
        if flip { modules[y * size + x].toggle() }
      }
    }
  }

  /// The standard's penalty: runs of five or more, 2×2 blocks, finder-like patterns and the
  /// imbalance of dark and light.
  func penalty() -> Int {
    var result = 0
    func dark(_ x: Int, _ y: Int) -> Bool { modules[y * size + x] }
    for horizontal in [true, false] {
      for line in 0..<size {
        var run = 1
        var window: [Bool] = []
        for position in 0..<size {
          let value = horizontal ? dark(position, line) : dark(line, position)
          if position > 0 {
            let previous = horizontal ? dark(position - 1, line) : dark(line, position - 1)
            if value == previous {
              run += 1
              if run == 5 { result += 3 } else if run > 5 { result += 1 }
            } else {
              run = 1
            }
          }
          window.append(value)
          if window.count > 11 { window.removeFirst() }
          if window.count == 11,
            window == [true, false, true, true, true, false, true, false, false, false, false]
              || window == [false, false, false, false, true, false, true, true, true, false, true]
          {
            result += 40
          }
        }
      }
    }
    for y in 0..<(size - 1) {
      for x in 0..<(size - 1) {
        let value = dark(x, y)
        if value == dark(x + 1, y), value == dark(x, y + 1), value == dark(x + 1, y + 1) {
          result += 3
        }
      }
    }
    let darkCount = modules.filter { $0 }.count
    let total = size * size
    let k = (abs(darkCount * 20 - total * 10) + total - 1) / total - 1
    result += max(0, k) * 10
    return result
  }
}
