import Foundation
import Logging
import Systemd
import Testing

@Suite("Journal log handler and log destination")
struct JournalLogHandlerTests {
  @Test(
    "metadata keys become journal field names",
    arguments: [
      ("nearby.device", "NEARBY_DEVICE"), ("status", "STATUS"), ("_secret", "F_SECRET"),
      ("1st", "F1ST"), ("a-b c", "A_B_C"), ("", "F"),
    ])
  func fieldNames(_ key: String, _ field: String) {
    #expect(JournalLogHandler.fieldName(key) == field)
  }

  @Test("levels map to syslog priorities")
  func priorities() {
    #expect(JournalLogHandler.priority(.error) == 3)
    #expect(JournalLogHandler.priority(.warning) == 4)
    #expect(JournalLogHandler.priority(.info) == 6)
    #expect(JournalLogHandler.priority(.debug) == 7)
    #expect(JournalLogHandler.priority(.critical) == 2)
  }

  @Test("the journal is used only when JOURNAL_STREAM names stderr")
  func detection() {
    let identity: (device: UInt64, inode: UInt64) = (device: 64, inode: 1234)
    #expect(
      LogDestination.detect(environment: ["JOURNAL_STREAM": "64:1234"], stderrIdentity: identity)
        == .journal)
    #expect(
      LogDestination.detect(environment: ["JOURNAL_STREAM": "64:99"], stderrIdentity: identity)
        == .stderr)
    #expect(LogDestination.detect(environment: [:], stderrIdentity: identity) == .stderr)
    #expect(
      LogDestination.detect(environment: ["JOURNAL_STREAM": "garbage"], stderrIdentity: identity)
        == .stderr)
  }

  @Test("the systemd notifier does nothing outside systemd")
  func notifierOutsideSystemd() throws {
    try #require(
      ProcessInfo.processInfo.environment["NOTIFY_SOCKET"] == nil,
      "the test runner itself runs under systemd notify")
    #expect(SystemdNotifier().ready(status: "x") == false)
  }
}
