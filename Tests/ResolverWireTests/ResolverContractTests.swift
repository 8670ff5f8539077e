import Foundation
import ResolverWire
import Testing
import Yams

/// `ResolverContract` (the code's one source of the HTTP contract's header names and limits)
/// against `openapi.yaml` (the document's): a change to one without the other fails here.
@Suite("The contract's constants against openapi.yaml")
struct ResolverContractTests {
  /// The OpenAPI document, parsed.
  static func document() throws -> [String: Any] {
    let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .appendingPathComponent("../../Modules/ResolverAPI/openapi.yaml").standardized
    let text = try String(contentsOf: url, encoding: .utf8)
    return try #require(try Yams.load(yaml: text) as? [String: Any])
  }

  /// The value at `path` (keys of nested mappings) in `node`.
  static func value(_ node: Any, _ path: String...) -> Any? {
    var node: Any? = node
    for key in path { node = (node as? [String: Any])?[key] }
    return node
  }

  /// The parameter `name` of the operation `operationID`.
  static func parameter(_ document: [String: Any], operation operationID: String, _ name: String)
    -> [String: Any]?
  {
    let paths = document["paths"] as? [String: Any] ?? [:]
    for case let item as [String: Any] in paths.values {
      for case let operation as [String: Any] in item.values
      where operation["operationId"] as? String == operationID {
        let parameters = operation["parameters"] as? [[String: Any]] ?? []
        return parameters.first { $0["name"] as? String == name }
      }
    }
    return nil
  }

  @Test("the header names are the security schemes'")
  func headers() throws {
    let document = try Self.document()
    #expect(
      Self.value(document, "components", "securitySchemes", "apiKey", "name") as? String
        == ResolverContract.apiKeyHeader)
    #expect(
      Self.value(document, "components", "securitySchemes", "deviceSecret", "name") as? String
        == ResolverContract.deviceSecretHeader)
  }

  @Test("a report's limits")
  func reportLimits() throws {
    let report = try #require(Self.value(try Self.document(), "components", "schemas", "Report"))
    #expect(
      Self.value(report, "properties", "sightings", "maxItems") as? Int
        == ResolverContract.maximumSightingsPerReport)
    for list in ["publish", "unpublish", "subscribe", "unsubscribe"] {
      #expect(
        Self.value(report, "properties", list, "maxItems") as? Int
          == ResolverContract.maximumHandleChangesPerReport, "\(list)")
    }
  }

  @Test("the beacon API's limits")
  func beaconLimits() throws {
    let document = try Self.document()
    let schemas = try #require(Self.value(document, "components", "schemas"))
    #expect(
      Self.value(schemas, "GetForObservedRequest", "properties", "observations", "maxItems")
        as? Int == ResolverContract.maximumObservations)
    #expect(
      Self.value(schemas, "GetForObservedRequest", "properties", "namespacedTypes", "maxItems")
        as? Int == ResolverContract.maximumNamespacedTypes)
    #expect(
      Self.value(
        schemas, "GetForObservedRequest", "properties", "namespacedTypes", "items", "maxLength")
        as? Int == ResolverContract.maximumNamespacedTypeBytes)
    #expect(
      Self.value(schemas, "BeaconRegistration", "properties", "attachments", "maxItems") as? Int
        == ResolverContract.maximumAttachmentsPerRegistration)
    #expect(
      Self.value(schemas, "BeaconRegistration", "properties", "description", "maxLength") as? Int
        == ResolverContract.maximumDescriptionBytes)
    for operation in ["listBeacons", "listDiagnostics"] {
      let pageSize = try #require(
        Self.parameter(document, operation: operation, "pageSize"), "\(operation)")
      #expect(
        Self.value(pageSize, "schema", "maximum") as? Int == ResolverContract.maximumPageSize,
        "\(operation)")
      #expect(
        Self.value(pageSize, "schema", "default") as? Int == ResolverContract.maximumPageSize,
        "\(operation)")
    }
  }
}
