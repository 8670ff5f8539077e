import Crypto
import Foundation
public import NIOCore

/// One file of the phone's page, ready to serve: its bytes, gzipped when that is smaller, and
/// an entity tag (a digest of its bytes) so that a phone revalidates rather than downloads.
public struct WebClientFile: Sendable {
  /// A file as Tools/scripts/build-web-client.sh embeds it (base64, lines of 96).
  public struct Source: Sendable {
    public let name: String
    public let contentType: String
    public let base64: String
    public let gzipBase64: String

    public init(name: String, contentType: String, base64: String, gzipBase64: String) {
      self.name = name
      self.contentType = contentType
      self.base64 = base64
      self.gzipBase64 = gzipBase64
    }
  }

  public let name: String
  public let contentType: String
  public let bytes: ByteBuffer
  /// The gzipped bytes, only when smaller than ``bytes``.
  public let gzipped: ByteBuffer?
  /// A strong entity tag, quoted.
  public let entityTag: String

  /// - Returns: nil when the embedded text is not base64 (a broken generated file).
  public init?(_ source: Source) {
    guard let data = Data(base64Encoded: source.base64, options: .ignoreUnknownCharacters),
      let packed = Data(base64Encoded: source.gzipBase64, options: .ignoreUnknownCharacters)
    else { return nil }
    name = source.name
    contentType = source.contentType
    bytes = ByteBuffer(bytes: data)
    gzipped = packed.count < data.count ? ByteBuffer(bytes: packed) : nil
    let digest = SHA256.hash(data: data).prefix(12).map { String(format: "%02x", $0) }.joined()
    entityTag = "\"\(digest)\""
  }
}
