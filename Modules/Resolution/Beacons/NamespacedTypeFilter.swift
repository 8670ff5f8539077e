/// The namespaced-type filters of beacon look-ups (`beaconinfo:getforobserved` and the
/// `Resolver` SPI's `beaconInfo(for:namespacedTypes:from:)`): `*` matches every attachment,
/// `ns/*` every type of namespace `ns`, `ns/type` one type.
///
/// A request's filters are parsed once into sets, so matching an attachment costs two hash
/// look-ups however many filters there are.
public struct NamespacedTypeFilter: Sendable, Hashable {
  /// Whether `*` is among the filters.
  public let matchesEverything: Bool
  /// The namespaces of `ns/*` filters.
  public let namespaces: Set<String>
  /// The `ns/type` filters, as written.
  public let namespacedTypes: Set<String>

  /// The filter set of `filters`.
  public init(_ filters: some Sequence<String>) {
    var everything = false
    var namespaces = Set<String>()
    var types = Set<String>()
    for filter in filters {
      if filter == "*" {
        everything = true
      } else if filter.hasSuffix("/*") {
        namespaces.insert(String(filter.dropLast(2)))
      } else {
        types.insert(filter)
      }
    }
    matchesEverything = everything
    self.namespaces = namespaces
    namespacedTypes = types
  }

  /// The namespaces the filters name (`ns/*` and `ns/type`); `*` names none.
  public var namedNamespaces: Set<String> {
    namespaces.union(
      namespacedTypes.compactMap { filter in
        filter.firstIndex(of: "/").map { String(filter[..<$0]) }
      })
  }

  /// Whether an attachment of `namespace` and `type` matches one of the filters.
  public func matches(namespace: String, type: String) -> Bool {
    matchesEverything || namespaces.contains(namespace)
      || (!namespacedTypes.isEmpty && namespacedTypes.contains("\(namespace)/\(type)"))
  }

  /// Whether an attachment of `namespace` and `type` matches `filter`.
  public static func matches(namespace: String, type: String, filter: String) -> Bool {
    NamespacedTypeFilter([filter]).matches(namespace: namespace, type: type)
  }
}
