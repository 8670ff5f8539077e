/// Objects this process exports on the connection.
extension DBusConnection {
  /// Exports an interface at a path. Peers can then call its methods and read (and, where
  /// allowed, write) its properties through `org.freedesktop.DBus.Properties`; the object
  /// also answers `Introspect` and `Ping`. When an object manager covers the path (see
  /// ``addObjectManager(at:)``) it emits `InterfacesAdded`.
  /// - Throws: ``DBusError`` for invalid names or values, or when the interface is already
  ///   exported at that path.
  public func export(_ interface: DBusInterface, at path: DBusObjectPath) async throws(DBusError) {
    try await registry.export(interface, at: path)
  }

  /// Stops exporting interfaces at a path (all of them when `interfaces` is `nil`); emits
  /// `InterfacesRemoved` when an object manager covers the path.
  public func unexport(interfaces: [String]? = nil, at path: DBusObjectPath) async {
    await registry.unexport(interfaces: interfaces, at: path)
  }

  /// Serves `org.freedesktop.DBus.ObjectManager` at `path` for every exported object below it.
  public func addObjectManager(at path: DBusObjectPath) async {
    await registry.addObjectManager(at: path)
  }

  /// Changes an exported property; emits `PropertiesChanged` when the value changed and the
  /// property emits changes.
  /// - Throws: ``DBusError``: ``DBusError/Name-swift.struct/unknownProperty``, or
  ///   ``DBusError/Name-swift.struct/invalidArgs`` when the value's type differs.
  public func setProperty(
    _ name: String, to value: DBusValue, interface: String, at path: DBusObjectPath
  ) async throws(DBusError) {
    try await registry.setProperty(name, to: value, interface: interface, at: path)
  }

  /// The current value of an exported property (as peers last set it, or the owner did).
  public func exportedProperty(_ name: String, interface: String, at path: DBusObjectPath) async
    -> DBusValue?
  {
    await registry.property(name, interface: interface, at: path)
  }

  /// Decides whether an incoming call may reach the exported objects: returns `nil` to let it
  /// through or the error to answer instead (a service's own access check, such as answering
  /// ``DBusError/Name-swift.struct/accessDenied``). Runs on the connection's object actor for
  /// every call, including `Properties`, `ObjectManager` and `Introspect` calls.
  public typealias CallFilter = @Sendable (DBusMessage) -> DBusError?

  /// Sets (or removes, with `nil`) the ``CallFilter``.
  public func setCallFilter(_ filter: CallFilter?) async {
    await registry.setFilter(filter)
  }
}
