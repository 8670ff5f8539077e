/// The `org.freedesktop.DBus.Introspectable` XML of an exported object.
enum Introspection {
  static func xml(interfaces: [DBusInterface], isManager: Bool, children: [String]) -> String {
    var out = """
      <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
       "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
      <node>
       <interface name="org.freedesktop.DBus.Introspectable">
        <method name="Introspect"><arg name="xml" type="s" direction="out"/></method>
       </interface>
       <interface name="org.freedesktop.DBus.Peer"><method name="Ping"/></interface>

      """
    if !interfaces.isEmpty {
      out += """
         <interface name="org.freedesktop.DBus.Properties">
          <method name="Get"><arg name="interface" type="s" direction="in"/><arg name="name" type="s" direction="in"/><arg name="value" type="v" direction="out"/></method>
          <method name="GetAll"><arg name="interface" type="s" direction="in"/><arg name="properties" type="a{sv}" direction="out"/></method>
          <method name="Set"><arg name="interface" type="s" direction="in"/><arg name="name" type="s" direction="in"/><arg name="value" type="v" direction="in"/></method>
          <signal name="PropertiesChanged"><arg name="interface" type="s"/><arg name="changed" type="a{sv}"/><arg name="invalidated" type="as"/></signal>
         </interface>

        """
    }
    if isManager {
      out += """
         <interface name="org.freedesktop.DBus.ObjectManager">
          <method name="GetManagedObjects"><arg name="objects" type="a{oa{sa{sv}}}" direction="out"/></method>
          <signal name="InterfacesAdded"><arg name="object" type="o"/><arg name="interfaces" type="a{sa{sv}}"/></signal>
          <signal name="InterfacesRemoved"><arg name="object" type="o"/><arg name="interfaces" type="as"/></signal>
         </interface>

        """
    }
    for interface in interfaces.sorted(by: { $0.name < $1.name }) {
      out += " <interface name=\"\(interface.name)\">\n"
      for method in interface.methods.values.sorted(by: { $0.name < $1.name }) {
        out += "  <method name=\"\(method.name)\">"
        out += arguments(method.inputSignature, direction: "in")
        out += arguments(method.outputSignature, direction: "out")
        out += "</method>\n"
      }
      for signal in interface.signals.sorted(by: { $0.name < $1.name }) {
        out += "  <signal name=\"\(signal.name)\">\(arguments(signal.signature, direction: nil))"
        out += "</signal>\n"
      }
      for property in interface.properties.values.sorted(by: { $0.name < $1.name }) {
        let access =
          switch property.access {
          case .read: "read"
          case .readWrite: "readwrite"
          case .write: "write"
          }
        out +=
          "  <property name=\"\(property.name)\" type=\"\(escape(property.value.type.signature))\""
        out += " access=\"\(access)\"/>\n"
      }
      out += " </interface>\n"
    }
    for child in children { out += " <node name=\"\(child)\"/>\n" }
    return out + "</node>\n"
  }

  private static func arguments(_ signature: String, direction: String?) -> String {
    let types = (try? DBusType.list(signature: signature)) ?? []
    return types.map { type in
      "<arg type=\"\(escape(type.signature))\"" + (direction.map { " direction=\"\($0)\"" } ?? "")
        + "/>"
    }.joined()
  }

  /// Signatures may hold `{` and `}` only; nothing needs escaping but `&`, `<`, `"` in general.
  private static func escape(_ text: String) -> String {
    text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
      .replacingOccurrences(of: "\"", with: "&quot;")
  }
}
