/// An in-place iterative radix-2 complex FFT of one power-of-two size, with its twiddle
/// factors and bit-reversal table computed once. The decoder uses it; the channel simulator
/// convolves with it. Immutable: share it between threads.
public struct FFT: Sendable {
  /// The transform length.
  public let size: Int
  private let cosines: [Float]
  private let sines: [Float]
  private let reversed: [Int]

  /// - Precondition: `size` is a power of two ≥ 2.
  public init(size: Int) {
    precondition(size >= 2 && size & (size - 1) == 0, "FFT size must be a power of two")
    self.size = size
    var cosines = [Float](repeating: 0, count: size / 2)
    var sines = [Float](repeating: 0, count: size / 2)
    for index in 0..<(size / 2) {
      let angle = -2 * Double.pi * Double(index) / Double(size)
      cosines[index] = Float(ModemMath.cos(angle))
      sines[index] = Float(ModemMath.sin(angle))
    }
    self.cosines = cosines
    self.sines = sines
    let bits = size.trailingZeroBitCount
    reversed = (0..<size).map { index in
      var value = 0
      for bit in 0..<bits where index & (1 << bit) != 0 { value |= 1 << (bits - 1 - bit) }
      return value
    }
  }

  /// Replaces (`real`, `imaginary`) by its forward transform X[k] = Σ x[n] e^(−2πikn/N).
  /// - Precondition: both buffers hold `size` elements.
  public func forward(
    real: UnsafeMutableBufferPointer<Float>, imaginary: UnsafeMutableBufferPointer<Float>
  ) {
    precondition(real.count == size && imaginary.count == size)
    for index in 0..<size {
      let other = reversed[index]
      if other > index {
        real.swapAt(index, other)
        imaginary.swapAt(index, other)
      }
    }
    cosines.withUnsafeBufferPointer { cosines in
      sines.withUnsafeBufferPointer { sines in
        var half = 1
        while half < size {
          let stride = size / (2 * half)
          var start = 0
          while start < size {
            for offset in 0..<half {
              let wr = cosines[offset * stride]
              let wi = sines[offset * stride]
              let top = start + offset
              let bottom = top + half
              let br = real[bottom] * wr - imaginary[bottom] * wi
              let bi = real[bottom] * wi + imaginary[bottom] * wr
              real[bottom] = real[top] - br
              imaginary[bottom] = imaginary[top] - bi
              real[top] += br
              imaginary[top] += bi
            }
            start += 2 * half
          }
          half *= 2
        }
      }
    }
  }

  /// Forward transform of two arrays of ``size`` elements.
  public func forward(real: inout [Float], imaginary: inout [Float]) {
    real.withUnsafeMutableBufferPointer { real in
      imaginary.withUnsafeMutableBufferPointer { imaginary in
        forward(real: real, imaginary: imaginary)
      }
    }
  }

  /// Inverse transform x[n] = (1/N) Σ X[k] e^(2πikn/N) of two arrays of ``size`` elements.
  public func inverse(real: inout [Float], imaginary: inout [Float]) {
    // conj(FFT(conj(X))) / N
    let scale = 1 / Float(size)
    for index in 0..<size { imaginary[index] = -imaginary[index] }
    forward(real: &real, imaginary: &imaginary)
    for index in 0..<size {
      real[index] *= scale
      imaginary[index] = -imaginary[index] * scale
    }
  }
}
