/// Client side of `org.freedesktop.DBus.Properties` and `org.freedesktop.DBus.ObjectManager`.
extension DBusConnection {
  /// Objects as `GetManagedObjects` returns them: path → interface → property → value.
  public typealias ManagedObjects = [DBusObjectPath: [String: [String: DBusValue]]]

  private static let propertiesInterface = "org.freedesktop.DBus.Properties"

  /// Reads one property of a remote object (the value unwrapped from its variant).
  /// - Throws: ``DBusError`` from the peer (such as ``DBusError/Name-swift.struct/unknownProperty``)
  ///   or the call (see ``call(_:timeout:)``).
  public func property(
    _ name: String, interface: String, of destination: String, at path: DBusObjectPath,
    timeout: Duration = defaultTimeout
  ) async throws(DBusError) -> DBusValue {
    let reply = try await call(
      destination: destination, path: path, interface: Self.propertiesInterface, member: "Get",
      [.string(interface), .string(name)], timeout: timeout)
    guard reply.count == 1, case .variant(let value) = reply[0] else {
      throw DBusError(.invalidArgs, "Properties.Get of \(interface).\(name) answered \(reply)")
    }
    return value
  }

  /// Reads all properties of an interface of a remote object.
  public func allProperties(
    interface: String, of destination: String, at path: DBusObjectPath,
    timeout: Duration = defaultTimeout
  ) async throws(DBusError) -> [String: DBusValue] {
    let reply = try await call(
      destination: destination, path: path, interface: Self.propertiesInterface,
      member: "GetAll", [.string(interface)], timeout: timeout)
    guard reply.count == 1, let map = reply[0].stringDictionary else {
      throw DBusError(.invalidArgs, "Properties.GetAll of \(interface) answered \(reply)")
    }
    return map
  }

  /// Writes a property of a remote object.
  public func setProperty(
    _ name: String, to value: DBusValue, interface: String, of destination: String,
    at path: DBusObjectPath, timeout: Duration = defaultTimeout
  ) async throws(DBusError) {
    _ = try await call(
      destination: destination, path: path, interface: Self.propertiesInterface, member: "Set",
      [.string(interface), .string(name), .variant(value)], timeout: timeout)
  }

  /// Calls `GetManagedObjects` on a remote object manager.
  /// - Throws: ``DBusError`` from the call, or ``DBusError/Name-swift.struct/invalidArgs`` when
  ///   the reply is not `a{oa{sa{sv}}}`.
  public func managedObjects(
    of destination: String, at path: DBusObjectPath = .root, timeout: Duration = defaultTimeout
  ) async throws(DBusError) -> ManagedObjects {
    let reply = try await call(
      destination: destination, path: path, interface: "org.freedesktop.DBus.ObjectManager",
      member: "GetManagedObjects", timeout: timeout)
    guard reply.count == 1, let entries = reply[0].entries else {
      throw DBusError(.invalidArgs, "GetManagedObjects answered \(reply.map(\.type))")
    }
    var objects: ManagedObjects = [:]
    for entry in entries {
      guard let path = entry.key.objectPath, let interfaces = Self.interfaceMap(entry.value) else {
        throw DBusError(.invalidArgs, "GetManagedObjects answered a malformed entry")
      }
      objects[path] = interfaces
    }
    return objects
  }

  /// Reads an `a{sa{sv}}` (interface → properties), as in `InterfacesAdded`.
  public static func interfaceMap(_ value: DBusValue) -> [String: [String: DBusValue]]? {
    guard let entries = value.entries else { return nil }
    var out: [String: [String: DBusValue]] = [:]
    for entry in entries {
      guard let name = entry.key.string, let properties = entry.value.stringDictionary else {
        return nil
      }
      out[name] = properties
    }
    return out
  }
}
