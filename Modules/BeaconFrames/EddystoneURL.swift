/// An Eddystone-URL frame: a compressed URL.
///
/// Layout: frame type 0x10 ‖ TX power at 0 m (signed dBm) ‖ scheme prefix (1) ‖ encoded URL
/// (0…17). The scheme byte stands for ``schemes``[byte]; in the encoded URL, bytes
/// 0x00…0x0D stand for ``expansions``[byte] and 0x21…0x7E for themselves; 0x0E…0x20 and
/// 0x7F…0xFF are reserved.
///
/// Building encodes greedily (the longest scheme, then at each position the longest
/// expansion), which gives the shortest encoding, so `EddystoneURL(frame:)` of
/// ``frame`` is always the same value.
public struct EddystoneURL: Sendable, Hashable {
  /// The frame type byte.
  public static let frameType: UInt8 = 0x10
  /// The most encoded URL bytes a frame holds after the scheme byte.
  public static let maximumEncodedLength = 17
  /// The scheme prefixes, indexed by the scheme byte.
  public static let schemes = ["http://www.", "https://www.", "http://", "https://"]
  /// The expansion codes, indexed by the byte that stands for them.
  public static let expansions = [
    ".com/", ".org/", ".edu/", ".net/", ".info/", ".biz/", ".gov/",
    ".com", ".org", ".edu", ".net", ".info", ".biz", ".gov",
  ]
  private static let schemeBytes = schemes.map { Array($0.utf8) }
  private static let expansionBytes = expansions.map { Array($0.utf8) }
  /// Scheme bytes tried longest first, so `https://www.` wins over `https://`.
  private static let schemeOrder: [UInt8] = [1, 0, 3, 2]
  /// Expansion bytes tried longest first.
  private static let expansionOrder: [UInt8] = (0..<14).sorted {
    (expansions[Int($0)].utf8.count, -Int($0)) > (expansions[Int($1)].utf8.count, -Int($1))
  }

  /// The calibrated TX power at 0 m, in dBm.
  public var txPower: Int8
  /// The decoded URL.
  public let url: String

  /// A frame for `url`.
  /// - Throws: ``BeaconFrameError/unsupportedURLScheme(_:)``,
  ///   ``BeaconFrameError/unencodableURLCharacter(_:)`` or
  ///   ``BeaconFrameError/urlTooLong(encodedLength:maximum:)`` when `url` cannot be sent.
  public init(url: String, txPower: Int8) throws(BeaconFrameError) {
    _ = try Self.encode(url)
    self.url = url
    self.txPower = txPower
  }

  /// Reads a frame (the Eddystone service data, starting with the frame type).
  /// - Throws: ``BeaconFrameError/urlFrameLength(count:)`` outside 3…20 bytes,
  ///   ``BeaconFrameError/unknownURLScheme(_:)``, ``BeaconFrameError/reservedURLByte(_:offset:)``,
  ///   ``BeaconFrameError/unknownEddystoneFrameType(_:)`` for another frame type.
  @inlinable
  public init(frame: some Collection<UInt8>) throws(BeaconFrameError) {
    self = try withBuffer(frame) { buffer in
      capture { () throws(BeaconFrameError) in try Self(buffer) }
    }
  }

  @usableFromInline
  init(_ frame: UnsafeBufferPointer<UInt8>) throws(BeaconFrameError) {
    try frame.checkEddystoneHeader(
      .within(3...(3 + Self.maximumEncodedLength)), frameType: Self.frameType)
    let scheme = frame[2]
    guard scheme < 4 else { throw .unknownURLScheme(scheme) }
    for offset in 3..<frame.count {
      let byte = frame[offset]
      guard byte <= 0x0d || (byte >= 0x21 && byte <= 0x7e) else {
        throw .reservedURLByte(byte, offset: offset)
      }
    }
    txPower = frame.int8(at: 1)
    // 12 (longest scheme) + 17 × 6 (longest expansion).
    url = String(unsafeUninitializedCapacity: 114) { out in
      var written = 0
      func copy(_ text: StaticString) {
        let bytes = UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount)
        for byte in bytes {
          out[written] = byte
          written += 1
        }
      }
      copy(Self.scheme(scheme))
      for offset in 3..<frame.count {
        let byte = frame[offset]
        if byte <= 0x0d {
          copy(Self.expansion(byte))
        } else {
          out[written] = byte
          written += 1
        }
      }
      return written
    }
  }

  /// The text of a scheme byte (0…3); a switch rather than ``schemes`` keeps parsing free of
  /// reference counting.
  private static func scheme(_ byte: UInt8) -> StaticString {
    switch byte {
    case 0: "http://www."
    case 1: "https://www."
    case 2: "http://"
    default: "https://"
    }
  }

  /// The text of an expansion byte (0…13), as in ``expansions``.
  private static func expansion(_ byte: UInt8) -> StaticString {
    switch byte {
    case 0: ".com/"
    case 1: ".org/"
    case 2: ".edu/"
    case 3: ".net/"
    case 4: ".info/"
    case 5: ".biz/"
    case 6: ".gov/"
    case 7: ".com"
    case 8: ".org"
    case 9: ".edu"
    case 10: ".net"
    case 11: ".info"
    case 12: ".biz"
    default: ".gov"
    }
  }

  /// The frame's bytes (3…20).
  public var frame: [UInt8] {
    // `init(url:txPower:)` checked that the URL encodes.
    let encoded = (try? Self.encode(url)) ?? [0]
    return [Self.frameType, UInt8(bitPattern: txPower)] + encoded
  }

  /// The scheme byte followed by the encoded URL.
  static func encode(_ url: String) throws(BeaconFrameError) -> [UInt8] {
    let text = Array(url.utf8)
    guard
      let scheme = schemeOrder.first(where: { text.starts(with: schemeBytes[Int($0)]) })
    else { throw .unsupportedURLScheme(url) }
    var out: [UInt8] = [scheme]
    var position = schemeBytes[Int(scheme)].count
    while position < text.count {
      let rest = text[position...]
      if let code = expansionOrder.first(where: { rest.starts(with: expansionBytes[Int($0)]) }) {
        out.append(code)
        position += expansionBytes[Int(code)].count
        continue
      }
      let byte = text[position]
      guard byte >= 0x21, byte <= 0x7e else {
        let scalar = String(decoding: text[position...], as: UTF8.self).unicodeScalars.first
        let character = Character(scalar ?? Unicode.Scalar(byte))
        throw .unencodableURLCharacter(character)
      }
      out.append(byte)
      position += 1
    }
    guard out.count - 1 <= maximumEncodedLength else {
      throw .urlTooLong(encodedLength: out.count - 1, maximum: maximumEncodedLength)
    }
    return out
  }
}
