@_spi(Resolver) import Core

/// The constants of the resolver's HTTP contract that the server and its clients both use:
/// header names and the limits `openapi.yaml` states. The one source for the code: the server
/// enforces these, the client splits its requests by them, and `ResolverContractTests` fails
/// when the document and these disagree.
public enum ResolverContract {
  /// The header that carries the project API key (security scheme `apiKey`).
  public static let apiKeyHeader = "X-Nearby-API-Key"
  /// The header that carries a device's secret (security scheme `deviceSecret`).
  public static let deviceSecretHeader = "X-Nearby-Device-Secret"

  /// The most sightings one report carries (`Report.sightings`).
  public static let maximumSightingsPerReport = Report.maximumSightings
  /// The most items of each list of handles one report carries (`Report.publish`, …).
  public static let maximumHandleChangesPerReport = Report.maximumHandleChanges

  /// The most observations one `beaconinfo:getforobserved` carries
  /// (`GetForObservedRequest.observations`).
  public static let maximumObservations = 1000
  /// The most namespaced-type filters one `beaconinfo:getforobserved` carries
  /// (`GetForObservedRequest.namespacedTypes`).
  public static let maximumNamespacedTypes = 100
  /// The longest namespaced-type filter: a namespace (64 bytes), `/` and a type (32).
  public static let maximumNamespacedTypeBytes = 97
  /// The most attachments one beacon registration carries (`BeaconRegistration.attachments`).
  public static let maximumAttachmentsPerRegistration = 100
  /// The longest beacon description, in UTF-8 bytes (`BeaconRegistration.description`).
  public static let maximumDescriptionBytes = 256
  /// The largest page of a beacon or diagnostics listing (`pageSize`), and its default.
  public static let maximumPageSize = 1000
}
