@_spi(Resolver) public import Core
public import Foundation
public import Logging

extension ResolverChoice {
  /// The resolver server at `url` (`nearby server`), with credentials kept in `store`.
  /// - Parameters:
  ///   - url: the server's base URL, such as `https://resolver.example.com`.
  ///   - credentialStore: where the device's id and secret are kept between runs.
  ///   - allowsInsecureHTTP: send the API key and device secret over plain `http://` to a
  ///     host that is not loopback (refused otherwise; see
  ///     ``ResolverClient/Configuration/allowsInsecureHTTP``).
  ///   - logger: the client's logger.
  public static func server(
    _ url: URL, credentialStore: any CredentialStore = FileCredentialStore(),
    allowsInsecureHTTP: Bool = false,
    logger: Logger = Logger(label: "nearby.server-client")
  ) -> ResolverChoice {
    var configuration = ResolverClient.Configuration(url: url, credentialStore: credentialStore)
    configuration.allowsInsecureHTTP = allowsInsecureHTTP
    configuration.logger = logger
    return .server(configuration)
  }

  /// The resolver server, configured in full.
  public static func server(_ configuration: ResolverClient.Configuration) -> ResolverChoice {
    ResolverChoice(name: "server \(configuration.url.absoluteString)") {
      ResolverClient(configuration: configuration)
    }
  }
}
