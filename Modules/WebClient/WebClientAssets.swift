public import NIOCore

/// The phone's page as served under `/web`, by `nearby-server` and by `nearby --web` alike:
/// which file a path names, with which headers, and whether the phone's copy is current. The
/// servers only map the answer onto their HTTP types.
public struct WebClientAssets: Sendable {
  /// An answer: 200 with a body, or 304 without.
  public struct Answer: Sendable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: ByteBuffer?
  }

  public let files: [String: WebClientFile]

  /// - Throws: ``WebClientError/brokenFile(_:)`` when an embedded file is not base64.
  public init() throws(WebClientError) {
    var files: [String: WebClientFile] = [:]
    for source in WebClientFiles.sources {
      guard let file = WebClientFile(source) else { throw .brokenFile(source.name) }
      files[file.name] = file
    }
    self.files = files
  }

  /// The file a request path names (`/web`, `/web/`, `/web/app.js`…), or nil.
  public func file(forPath path: String) -> WebClientFile? {
    let name = path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? path
    switch name {
    case "/web", "/web/": return files["index.html"]
    case let other where other.hasPrefix("/web/"):
      let rest = String(other.dropFirst("/web/".count))
      return rest == "index.html" || rest.contains("/") ? nil : files[rest]
    default: return nil
    }
  }

  /// The answer for `file`: 304 when `ifNoneMatch` names its tag, else its bytes (gzipped
  /// when the phone accepts gzip and that is smaller).
  public func answer(_ file: WebClientFile, ifNoneMatch: [String], acceptEncoding: [String])
    -> Answer
  {
    var headers = Self.securityHeaders
    headers.append(("ETag", file.entityTag))
    // Revalidated on every load (a 304 costs a round trip, not the bytes): a page from an
    // old server must never run against a new one.
    headers.append(("Cache-Control", "no-cache"))
    headers.append(("Vary", "Accept-Encoding"))
    if ifNoneMatch.contains(where: { $0.contains(file.entityTag) }) {
      return Answer(status: 304, headers: headers, body: nil)
    }
    headers.append(("Content-Type", file.contentType))
    if acceptEncoding.contains(where: { $0.lowercased().contains("gzip") }),
      let gzipped = file.gzipped
    {
      headers.append(("Content-Encoding", "gzip"))
      return Answer(status: 200, headers: headers, body: gzipped)
    }
    return Answer(status: 200, headers: headers, body: file.bytes)
  }

  /// On every answer under /web: only our own files load (the modem's WebAssembly compiled
  /// by our script: 'wasm-unsafe-eval', not 'unsafe-eval'), calls go to this origin only, no
  /// framing, the microphone and camera for this origin only, no referrer (the link's
  /// fragment never leaves the phone; a referrer would carry the rest).
  public static let securityHeaders: [(name: String, value: String)] = [
    (
      "Content-Security-Policy",
      "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; "
        + "connect-src 'self'; img-src 'self' data:; media-src 'self'; worker-src 'self'; "
        + "form-action 'none'; frame-ancestors 'none'; base-uri 'none'"
    ),
    ("Permissions-Policy", "microphone=(self), camera=(self)"),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
    ("Cross-Origin-Opener-Policy", "same-origin"),
  ]
}

/// Why the page's files cannot be served.
public enum WebClientError: Error, Sendable, CustomStringConvertible {
  case brokenFile(String)

  public var description: String {
    switch self {
    case .brokenFile(let name):
      "the web page's embedded \(name) is not base64: run Tools/scripts/build-web-client.sh"
    }
  }
}
