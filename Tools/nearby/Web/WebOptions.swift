import ArgumentParser

/// `--web`: phones join through a page this box serves (peer mode), or, with a server, the
/// server's page.
struct WebOptions: ParsableArguments {
  @Flag(
    help: ArgumentHelp(
      "Let phones join: serve the web page over HTTPS and print its link and QR code.",
      discussion: """
        In peer mode (no server) this box serves the page and is the phones' resolver: they \
        become devices of this box, meeting it and every peer on the LAN. With a server, the \
        link is the server's page with the client key.
        """))
  var web = false

  @Option(help: ArgumentHelp("The address the page is served on with --web.", valueName: "ip"))
  var webHost = "0.0.0.0"

  @Option(
    help: ArgumentHelp(
      "The HTTPS port of the page with --web (0: any free port; the link names it).",
      valueName: "port"))
  var webPort = 7443

  @Option(
    help: ArgumentHelp(
      "The PEM certificate chain for --web (default: a self-signed one made with openssl).",
      valueName: "file"))
  var webCertificate: String?

  @Option(help: ArgumentHelp("The PEM key of --web-certificate.", valueName: "file"))
  var webKey: String?

  func validate() throws {
    guard (0...65_535).contains(webPort) else {
      throw ValidationError("--web-port must be between 0 and 65535, got \(webPort)")
    }
    guard (webCertificate == nil) == (webKey == nil) else {
      throw ValidationError("--web-certificate and --web-key go together: give both, or neither")
    }
  }
}
