import NIOSSL
import NIOConcurrencyHelpers

/// The certificate chain and private key the server presents over TLS, read from PEM files,
/// and read again by ``reload()`` (what `nearby-server` does on SIGHUP), so that a renewed
/// certificate (ACME every 60–90 days) is served with no restart. Every TLS handshake takes
/// the pair current at its start; open connections keep theirs.
///
/// Thread-safe: the pair is behind a lock, and a reload replaces it whole.
public final class ServerCertificates: Sendable {
  /// The PEM file of the certificate chain: the server's certificate first, then the
  /// intermediates.
  public let certificatePath: String
  /// The PEM file of the private key (unencrypted).
  public let keyPath: String
  private let current: NIOLockedValueBox<Pair>

  struct Pair: Sendable {
    var chain: [NIOSSLCertificate]
    var key: NIOSSLPrivateKey
  }

  /// Reads and checks both files.
  /// - Throws: ``ServerCertificatesError`` naming the file and what is wrong with it.
  public init(certificatePath: String, keyPath: String) throws(ServerCertificatesError) {
    self.certificatePath = certificatePath
    self.keyPath = keyPath
    current = NIOLockedValueBox(try Self.read(certificatePath: certificatePath, keyPath: keyPath))
  }

  /// Reads both files again; handshakes from then on present the new pair. On failure the
  /// pair served so far stays (a half-written renewal never takes the server off the air).
  /// - Throws: ``ServerCertificatesError`` naming the file and what is wrong with it.
  public func reload() throws(ServerCertificatesError) {
    let pair = try Self.read(certificatePath: certificatePath, keyPath: keyPath)
    current.withLockedValue { $0 = pair }
  }

  /// The served certificate's expiry, seconds since 1970 (for logs and checks).
  public var notValidAfter: Int {
    current.withLockedValue { Int($0.chain.first?.notValidAfter ?? 0) }
  }

  /// The server's TLS configuration: TLS 1.2 and later, HTTP/1.1 over ALPN, and the pair
  /// current at each handshake.
  func tlsConfiguration() -> TLSConfiguration {
    let pair = current.withLockedValue { $0 }
    var configuration = TLSConfiguration.makeServerConfiguration(
      certificateChain: pair.chain.map { .certificate($0) }, privateKey: .privateKey(pair.key))
    configuration.minimumTLSVersion = .tlsv12
    configuration.applicationProtocols = ["http/1.1"]
    configuration.sslContextCallback = { [current] _, promise in
      let pair = current.withLockedValue { $0 }
      var override = NIOSSLContextConfigurationOverride()
      override.certificateChain = pair.chain.map { .certificate($0) }
      override.privateKey = .privateKey(pair.key)
      promise.succeed(override)
    }
    return configuration
  }

  static func read(certificatePath: String, keyPath: String) throws(ServerCertificatesError)
    -> Pair
  {
    let chain: [NIOSSLCertificate]
    do {
      chain = try NIOSSLCertificate.fromPEMFile(certificatePath)
    } catch {
      throw .unreadable(certificatePath, "\(error)")
    }
    guard !chain.isEmpty else { throw .noCertificate(certificatePath) }
    let key: NIOSSLPrivateKey
    do {
      key = try NIOSSLPrivateKey(file: keyPath, format: .pem)
    } catch {
      throw .unreadable(keyPath, "\(error)")
    }
    // A context refuses a key that is not the certificate's: check now, not at a handshake.
    do {
      _ = try NIOSSLContext(
        configuration: .makeServerConfiguration(
          certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key)))
    } catch {
      throw .mismatch(certificatePath: certificatePath, keyPath: keyPath, "\(error)")
    }
    return Pair(chain: chain, key: key)
  }
}

/// Why the TLS files cannot be served.
public enum ServerCertificatesError: Error, Sendable, CustomStringConvertible {
  /// The file cannot be read, or is not PEM of what it should hold.
  case unreadable(String, String)
  /// The certificate file holds no certificate.
  case noCertificate(String)
  /// The key is not the certificate's.
  case mismatch(certificatePath: String, keyPath: String, String)

  public var description: String {
    switch self {
    case .unreadable(let path, let reason):
      "cannot read \(path) as PEM (\(reason)); give the certificate chain and its unencrypted "
        + "private key (for example Let's Encrypt's fullchain.pem and privkey.pem)"
    case .noCertificate(let path):
      "\(path) holds no certificate (PEM, the server's certificate first)"
    case .mismatch(let certificate, let key, let reason):
      "the private key \(key) is not the key of the certificate in \(certificate) (\(reason))"
    }
  }
}
