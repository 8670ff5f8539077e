public import Core

extension DesktopNotification {
  /// The notification for a message found in background: the title names what was found
  /// (its type, and namespace when it has one), the body previews the content (see
  /// ``preview(of:maxCharacters:)``).
  /// - Parameters:
  ///   - message: the found message.
  ///   - appName: the app whose background subscription found it.
  public init(found message: Message, appName: String) {
    let kind = message.namespace.isEmpty ? message.type : "\(message.namespace)/\(message.type)"
    self.init(
      appName: appName,
      summary: kind.isEmpty ? "Nearby message found" : "Nearby message found: \(kind)",
      body: Self.preview(of: message.content), icon: "network-wireless")
  }
}
