/// Which bus a ``DBusConnection`` connects to.
public enum DBusBus: Sendable, Hashable {
  /// The system bus: `$DBUS_SYSTEM_BUS_ADDRESS`, else `unix:path=/var/run/dbus/system_bus_socket`.
  case system
  /// The session bus: `$DBUS_SESSION_BUS_ADDRESS`, else libdbus's lookup
  /// (`$XDG_RUNTIME_DIR/bus`).
  case session
  /// A bus at a D-Bus address such as `unix:path=/run/my-bus`. The connection registers with
  /// it as with any message bus (peer-to-peer connections without a bus are not supported).
  case address(String)
}

extension DBusBus: CustomStringConvertible {
  public var description: String {
    switch self {
    case .system: "system bus"
    case .session: "session bus"
    case .address(let address): "bus at \(address)"
    }
  }
}
