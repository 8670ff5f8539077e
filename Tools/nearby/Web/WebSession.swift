import CommandLineSupport
import AsyncHTTPClient
import Core
import Foundation
import Glibc
import Logging
import QRCode
import ResolverWire
import Tokens

/// `--web` beside `nearby publish` and `nearby subscribe`: the link phones open, printed (and
/// as a QR code on a terminal), and in peer mode the box's front (``WebFront``) serving it.
enum WebSession {
  /// Starts what `--web` asks for; the task serves phones until cancelled (cancel and await
  /// it before the session shuts down: the phones leave first).
  /// - Throws: ``ExitFailure`` when the page cannot be served.
  /// - Parameter banner: where a live screen shows the link and the code (nil: they are
  ///   written to stderr).
  static func start(
    _ options: DiscoveryOptions, session: DiscoverySession, logger: Logger,
    banner: ScreenBanner? = nil
  ) async throws -> Task<Void, Never>? {
    guard options.web.web else { return nil }
    let output = session.output
    let manager = session.manager
    if let server = session.serverURL {
      // With a server, phones are the server's devices: its page, the project's key, which
      // must be a client key (the link goes to every phone that scans it).
      try await checkClientKey(session.projectKey, server: server)
      let link = server.appendingPathComponent("web").absoluteString + "#key=\(session.projectKey)"
      output.web(link)
      if server.scheme != "https" {
        output.note(
          "phones need HTTPS for the microphone: serve the server with --tls-certificate and "
            + "--tls-key (docs/server-operators-guide.md, HTTPS)")
      }
      return Task { await showCodes(of: manager, link: link, output: output, banner: banner) }
    }
    guard let resolver = session.peerResolver else { return nil }
    let addresses = WebCertificate.addresses(interface: options.lanInterface)
    let certificate = try WebCertificate.files(options: options.web, addresses: addresses)
    let front = try await WebFront(
      host: options.web.webHost, port: options.web.webPort, certificate: certificate,
      resolver: resolver, projectKey: session.projectKey, logger: logger)
    let listening = options.web.webHost
    let host =
      ["0.0.0.0", "::"].contains(listening)
      ? addresses.first ?? "127.0.0.1" : listening.contains(":") ? "[\(listening)]" : listening
    let link = "https://\(host):\(front.port)/web#key=\(front.invitation.text)"
    output.web(link)
    if certificate.selfSigned {
      output.note(
        "the page's certificate is self-signed (\(certificate.certificate)): a phone's browser "
          + "warns once; accept it, or give --web-certificate and --web-key")
    }
    return Task {
      await withDiscardingTaskGroup { group in
        group.addTask { await front.run() }
        group.addTask {
          await showCodes(of: manager, link: link, output: output, banner: banner)
        }
      }
    }
  }

  /// Asks the server's `/web/key` whether `key` may go in a phone's link.
  /// - Throws: ``ExitFailure`` for an admin key (the link would hand it to every phone), or
  ///   when the server cannot say (no link is printed unchecked).
  static func checkClientKey(_ key: String, server: URL) async throws {
    var request = HTTPClientRequest(url: server.appendingPathComponent("web/key").absoluteString)
    request.headers.add(name: ResolverContract.apiKeyHeader, value: key)
    let status: UInt
    do {
      let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
      status = response.status.code
      _ = try await response.body.collect(upTo: 64 * 1024)
    } catch {
      throw ExitFailure(
        "--web: cannot ask \(server.absoluteString) whether the key may go in a phone's link: "
          + "\(error)", code: ExitCodes.unavailable)
    }
    switch status {
    case 200: return
    case 403:
      throw ExitFailure(
        "--web: this is an admin key, and the link would hand it to every phone that scans it; "
          + "run with a client key (`nearby server keys create --project P --role client`)",
        code: ExitCodes.noPermission)
    default:
      throw ExitFailure(
        "--web: \(server.absoluteString)/web/key answered \(status) for this key",
        code: ExitCodes.unavailable)
    }
  }

  /// The box's current token for the `optical` medium, shown again at each rotation: its short
  /// code (a phone's user types it) and the page's link carrying it (a phone's camera opens
  /// the page with it), until cancelled.
  static func showCodes(
    of manager: MessageManager, link: String, output: EventOutput, banner: ScreenBanner?
  ) async {
    var shown: Token?
    while !Task.isCancelled {
      if let token = await manager.currentToken, token != shown {
        shown = token
        let coded = link + "&code=\(token.shortCode)"
        if let banner {
          banner.set(opticalLines(token.shortCode, link: coded))
        } else {
          output.optical(token.shortCode, link: coded)
        }
      }
      do { try await Task.sleep(for: .seconds(1)) } catch { return }
    }
  }
}

/// The QR code of the link that carries the box's code, the link, and the code, for a live
/// screen.
func opticalLines(_ code: String, link: String) -> String {
  let qr = (try? QRCode(text: link, level: .low)).map { $0.terminalText() + "\n" } ?? ""
  return qr + "phones join at \(link)\n"
    + "this box's code, for a phone that cannot hear it: \(code) (a new one every 2 minutes)"
}

extension EventOutput {
  /// The box's code for the `optical` medium: an `optical` JSON line, or a note (with the
  /// link that carries it as a QR code on a terminal).
  func optical(_ code: String, link: String) {
    if json {
      emit(Line(event: "optical", time: Self.now(), text: code, url: link))
      return
    }
    if isatty(STDERR_FILENO) == 1, let qr = try? QRCode(text: link, level: .low) {
      StandardStreams.error(qr.terminalText() + "\n")
    }
    note(
      "this box's code, for a phone that cannot hear it: \(code) (type it on the page, or "
        + "scan the code above; a new one every token rotation)")
  }

  /// The link phones open: a `web` JSON line, or a note.
  func web(_ link: String) {
    if json {
      emit(Line(event: "web", time: Self.now(), url: link))
      return
    }
    // Its QR code comes with the box's code (``optical(_:link:)``), which it carries.
    note("phones join at \(link)")
  }
}
