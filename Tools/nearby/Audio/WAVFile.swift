import Foundation

/// Mono audio read from or written to a RIFF/WAVE file.
///
/// Reads PCM 16/24/32-bit integer and IEEE float 32/64-bit (plain or WAVE_FORMAT_EXTENSIBLE),
/// any channel count (channels are averaged to mono). Writes mono PCM s16 or float32.
struct WAVFile {
  enum SampleFormat: String, CaseIterable {
    case s16
    case f32
  }

  var sampleRate: Int
  var samples: [Float]

  /// Why a file could not be read as WAV.
  enum ReadError: Error, CustomStringConvertible {
    case notRIFF
    case notWAVE
    case missingChunk(String)
    case truncated(String)
    case unsupported(String)

    var description: String {
      switch self {
      case .notRIFF: "not a WAV file: it does not start with a RIFF header"
      case .notWAVE: "not a WAV file: the RIFF form is not WAVE"
      case .missingChunk(let name): "not a usable WAV file: it has no '\(name)' chunk"
      case .truncated(let what): "the WAV file is truncated: \(what)"
      case .unsupported(let what):
        "unsupported WAV encoding: \(what) (supported: PCM 16/24/32-bit, float 32/64-bit)"
      }
    }
  }

  init(sampleRate: Int, samples: [Float]) {
    self.sampleRate = sampleRate
    self.samples = samples
  }

  /// Parses a whole WAV file.
  /// - Throws: ``ReadError`` naming what is wrong with the data.
  init(data: Data) throws(ReadError) {
    let bytes = [UInt8](data)
    func u16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
    func u32(_ at: Int) -> Int { u16(at) | u16(at + 2) << 16 }
    func tag(_ at: Int) -> String { String(decoding: bytes[at..<(at + 4)], as: UTF8.self) }
    guard bytes.count >= 12, tag(0) == "RIFF" else { throw .notRIFF }
    guard tag(8) == "WAVE" else { throw .notWAVE }

    var format: (code: Int, channels: Int, rate: Int, bits: Int)?
    var dataRange: Range<Int>?
    var position = 12
    while position + 8 <= bytes.count {
      let name = tag(position)
      let size = u32(position + 4)
      let body = position + 8
      let available = min(size, bytes.count - body)
      if name == "fmt " {
        guard available >= 16 else { throw .truncated("the 'fmt ' chunk is \(available) bytes") }
        var code = u16(body)
        if code == 0xfffe {
          guard available >= 26 else { throw .truncated("the extensible 'fmt ' chunk") }
          code = u16(body + 24)
        }
        format = (code, u16(body + 2), u32(body + 4), u16(body + 14))
      } else if name == "data" {
        dataRange = body..<(body + available)
        if available < size && format != nil { break }
      }
      position = body + size + (size & 1)
    }
    guard let format else { throw .missingChunk("fmt ") }
    guard let dataRange else { throw .missingChunk("data") }
    guard format.channels > 0 else { throw .unsupported("0 channels") }
    guard format.rate > 0 else { throw .unsupported("sample rate 0") }
    let width = format.bits / 8
    let decode: (Int) -> Float
    switch (format.code, format.bits) {
    case (1, 16):
      decode = { Float(Int16(bitPattern: UInt16(u16($0)))) / 32_768 }
    case (1, 24):
      decode = { at in
        let value = Int32(bitPattern: UInt32(u16(at)) << 8 | UInt32(bytes[at + 2]) << 24) >> 8
        return Float(value) / 8_388_608
      }
    case (1, 32):
      decode = { Float(Int32(bitPattern: UInt32(u32($0)))) / 2_147_483_648 }
    case (3, 32):
      decode = { Float(bitPattern: UInt32(u32($0))) }
    case (3, 64):
      decode = { at in
        Float(Double(bitPattern: UInt64(u32(at)) | UInt64(u32(at + 4)) << 32))
      }
    default:
      throw .unsupported("format code \(format.code) with \(format.bits) bits a sample")
    }
    let frameWidth = width * format.channels
    let frames = dataRange.count / frameWidth
    var samples = [Float](repeating: 0, count: frames)
    for frame in 0..<frames {
      var sum: Float = 0
      for channel in 0..<format.channels {
        sum += decode(dataRange.lowerBound + frame * frameWidth + channel * width)
      }
      samples[frame] = sum / Float(format.channels)
    }
    self.sampleRate = format.rate
    self.samples = samples
  }

  /// The file's bytes: mono, the given sample format.
  func data(format: SampleFormat) -> Data {
    let width = format == .s16 ? 2 : 4
    var out = [UInt8]()
    out.reserveCapacity(44 + samples.count * width)
    func put16(_ value: Int) { out += [UInt8(value & 0xff), UInt8(value >> 8 & 0xff)] }
    func put32(_ value: Int) {
      put16(value & 0xffff)
      put16(value >> 16 & 0xffff)
    }
    let dataSize = samples.count * width
    out += Array("RIFF".utf8)
    put32(36 + dataSize)
    out += Array("WAVEfmt ".utf8)
    put32(16)
    put16(format == .s16 ? 1 : 3)
    put16(1)
    put32(sampleRate)
    put32(sampleRate * width)
    put16(width)
    put16(width * 8)
    out += Array("data".utf8)
    put32(dataSize)
    for sample in samples {
      switch format {
      case .s16:
        let value = Int((min(max(sample, -1), 1) * 32_767).rounded())
        put16(Int(UInt16(bitPattern: Int16(value))))
      case .f32:
        put32(Int(sample.bitPattern))
      }
    }
    return Data(out)
  }
}
