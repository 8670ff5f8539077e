import Core
import DesktopNotifications
import Foundation
import Testing

@Suite("DesktopNotification")
struct DesktopNotificationTests {
  @Test("text content is shown as is, long text cut at the limit with an ellipsis")
  func textPreview() {
    #expect(DesktopNotification.preview(of: Data("10% off today".utf8)) == "10% off today")
    #expect(
      DesktopNotification.preview(of: Data("line one\nline two".utf8)) == "line one\nline two")
    let long = String(repeating: "é", count: 200)
    let preview = DesktopNotification.preview(of: Data(long.utf8), maxCharacters: 50)
    #expect(preview.count == 50)
    #expect(preview.hasSuffix("…"))
    #expect(preview.hasPrefix("éééé"))
  }

  @Test("binary content, invalid UTF-8 or control characters, reads as its size")
  func binaryPreview() {
    #expect(DesktopNotification.preview(of: Data([0xff, 0xfe, 0x00])) == "3 bytes")
    #expect(DesktopNotification.preview(of: Data([0x41, 0x00, 0x42])) == "3 bytes")
    #expect(DesktopNotification.preview(of: Data([0x80])) == "1 byte")
    #expect(DesktopNotification.preview(of: Data()) == "empty message")
  }

  @Test("a found message's notification names its namespace and type and previews it")
  func foundMessage() {
    let message = Message(text: "10% off", type: "offer", namespace: "shop")
    let notification = DesktopNotification(found: message, appName: "com.example.kiosk")
    #expect(notification.appName == "com.example.kiosk")
    #expect(notification.summary == "Nearby message found: shop/offer")
    #expect(notification.body == "10% off")
    let plain = DesktopNotification(found: Message(content: Data([1, 2])), appName: "a")
    #expect(plain.summary == "Nearby message found")
    #expect(plain.body == "2 bytes")
  }
}
