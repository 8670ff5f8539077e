import Foundation
import Glibc
import Logging
import QRCode

/// `--web` beside `nearby publish` and `nearby subscribe`: the link phones open, printed (and
/// as a QR code on a terminal), and in peer mode the box's front (``WebFront``) serving it.
enum WebSession {
  /// Starts what `--web` asks for; the task serves phones until cancelled (cancel and await
  /// it before the session shuts down: the phones leave first).
  /// - Throws: ``ExitFailure`` when the page cannot be served.
  static func start(
    _ options: DiscoveryOptions, session: DiscoverySession, logger: Logger
  ) async throws -> Task<Void, Never>? {
    guard options.web.web else { return nil }
    let output = session.output
    if let server = session.serverURL {
      // With a server, phones are the server's devices: its page, the project's key.
      let link = server.appendingPathComponent("web").absoluteString + "#key=\(session.projectKey)"
      output.web(link)
      if server.scheme != "https" {
        output.note(
          "phones need HTTPS for the microphone: serve the server with --tls-certificate and "
            + "--tls-key (docs/server-operators-guide.md, HTTPS)")
      }
      return nil
    }
    guard let resolver = session.peerResolver else { return nil }
    let addresses = WebCertificate.addresses(interface: options.lanInterface)
    let certificate = try WebCertificate.files(options: options.web, addresses: addresses)
    let front = try await WebFront(
      host: options.web.webHost, port: options.web.webPort, certificate: certificate,
      resolver: resolver, projectKey: session.projectKey, logger: logger)
    let host =
      options.web.webHost == "0.0.0.0" ? addresses.first ?? "127.0.0.1" : options.web.webHost
    output.web("https://\(host):\(front.port)/web#key=\(front.invitation.text)")
    if certificate.selfSigned {
      output.note(
        "the page's certificate is self-signed (\(certificate.certificate)): a phone's browser "
          + "warns once; accept it, or give --web-certificate and --web-key")
    }
    return Task { await front.run() }
  }
}

extension EventOutput {
  /// The link phones open: a `web` JSON line, or a note (with its QR code on a terminal).
  func web(_ link: String) {
    if json {
      emit(Line(event: "web", time: Self.now(), url: link))
      return
    }
    // The code first, the link under it: a phone's camera opens it, a person can type it.
    if isatty(STDERR_FILENO) == 1, let code = try? QRCode(text: link, level: .low) {
      FileHandle.standardError.write(Data((code.terminalText() + "\n").utf8))
    }
    note("phones join at \(link)")
  }
}
