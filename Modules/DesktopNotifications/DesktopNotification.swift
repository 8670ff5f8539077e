public import Foundation

/// One desktop notification as `org.freedesktop.Notifications.Notify` takes it: the title
/// (`summary`), the text under it (`body`) and the app it speaks for.
public struct DesktopNotification: Sendable, Hashable {
  /// The app name the notification server shows and groups by (`app_name`).
  public var appName: String
  /// The title line (`summary`).
  public var summary: String
  /// The text under the title (`body`); may be empty.
  public var body: String
  /// An icon name from the icon theme or a `file://` URI (`app_icon`); empty for none.
  public var icon: String
  /// How long the server shows it: `nil` leaves it to the server (`expire_timeout` -1).
  public var expireAfter: Duration?

  /// A notification; see the properties for what each part is.
  public init(
    appName: String, summary: String, body: String = "", icon: String = "",
    expireAfter: Duration? = nil
  ) {
    self.appName = appName
    self.summary = summary
    self.body = body
    self.icon = icon
    self.expireAfter = expireAfter
  }

  /// A one-look preview of message content for a notification body: the content as text when
  /// it is valid UTF-8 without control characters other than tab and newline, cut at
  /// `maxCharacters` characters (ending in "…"); otherwise "N bytes" (so binary content never
  /// reaches the screen as garbage). Empty content reads "empty message".
  public static func preview(of content: Data, maxCharacters: Int = 120) -> String {
    if content.isEmpty { return "empty message" }
    guard let text = String(data: content, encoding: .utf8),
      !text.unicodeScalars.contains(where: {
        $0.properties.generalCategory == .control && $0 != "\n" && $0 != "\t"
      })
    else {
      return content.count == 1 ? "1 byte" : "\(content.count) bytes"
    }
    let limit = max(1, maxCharacters)
    guard text.count > limit else { return text }
    return String(text.prefix(limit - 1)) + "…"
  }
}
