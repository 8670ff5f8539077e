/// The namespaced-type filters of beacon look-ups (`beaconinfo:getforobserved` and
/// ``Core/Resolver/beaconInfo(for:namespacedTypes:from:)``): `*` matches every attachment,
/// `ns/*` every type of namespace `ns`, `ns/type` one type.
public enum NamespacedTypeFilter {
  /// Whether an attachment of `namespace` and `type` matches `filter`.
  public static func matches(namespace: String, type: String, filter: String) -> Bool {
    if filter == "*" { return true }
    if filter.hasSuffix("/*") { return namespace == filter.dropLast(2) }
    return filter == "\(namespace)/\(type)"
  }

  /// Whether an attachment of `namespace` and `type` matches any of `filters`.
  public static func matches(namespace: String, type: String, anyOf filters: [String]) -> Bool {
    filters.contains { matches(namespace: namespace, type: type, filter: $0) }
  }
}
