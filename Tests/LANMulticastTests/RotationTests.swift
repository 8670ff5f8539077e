import Synchronization
import TestSupport
import Testing
import Tokens

@testable import LANMulticast
import NearbyTesting

/// Issue 16: the sender id and counter survived token rotation, so a listener could link a
/// device's old token to its new one and follow it across rotations.
@Suite("Token rotation")
struct RotationTests {
  @Test func aNewTokenGetsANewSenderAndARestartedCounter() {
    var announcer = Announcer()
    let old = Token(value: 1)
    let new = Token(value: 2)
    let first = (1...3).map { announcer.datagram(announcing: old, sentAt: UInt64($0)) }
    #expect(Set(first.map(\.sender)).count == 1)
    #expect(first.map(\.counter) == [1, 2, 3])
    let second = (1...3).map { announcer.datagram(announcing: new, sentAt: UInt64($0)) }
    #expect(Set(second.map(\.sender)).count == 1)
    #expect(second[0].sender != first[0].sender)
    #expect(second.map(\.counter) == [1, 2, 3])
    // Back to the first token: a sender id of its own again, not the old one.
    let third = announcer.datagram(announcing: old, sentAt: 9)
    #expect(third.sender != first[0].sender && third.sender != second[0].sender)
    #expect(third.counter == 1)
    // A datagram of an earlier token still in flight is recognised as ours.
    #expect(announcer.isOwn(first[0].sender) && announcer.isOwn(third.sender))
    #expect(!announcer.isOwn(0))
  }

  /// What a listener on the segment captures as a medium moves from one token to the next:
  /// nothing in the new token's datagrams repeats the old sender id, and the counter starts
  /// again at 1.
  @Test func nothingInTheDatagramsLinksTheOldTokenToTheNew() async throws {
    let configuration = Loopback.configuration()
    let medium = try LANMulticastMedium(configuration: configuration)
    let tap = try MulticastSocket.open(configuration)
    defer { tap.close() }
    var captured: [(bytes: [UInt8], datagram: Datagram)] = []
    var buffer = [UInt8](repeating: 0, count: 2048)
    func capture(_ token: Token) -> Int {
      while let (count, _) = tap.receive(into: &buffer) {
        let bytes = Array(buffer[0..<count])
        if let datagram = try? Datagram(checking: bytes, key: nil) {
          captured.append((bytes, datagram))
        }
      }
      return captured.filter { $0.datagram.token == token }.count
    }
    let old = Token.random()
    let new = Token.random()
    try await medium.transmit(old)
    #expect(await eventually() { capture(old) >= 3 })
    try await medium.transmit(new)
    #expect(await eventually() { capture(new) >= 3 })
    await medium.shutdown()

    let before = captured.filter { $0.datagram.token == old }
    let after = captured.filter { $0.datagram.token == new }
    let oldSenders = Set(before.map(\.datagram.sender))
    try #require(oldSenders.count == 1 && !after.isEmpty)
    let oldSender = oldSenders.first!
    let oldSenderBytes = (0..<4).map { UInt8(truncatingIfNeeded: oldSender >> (24 - 8 * $0)) }
    for (bytes, datagram) in after {
      #expect(datagram.sender != oldSender)
      #expect(!bytes.indices.dropLast(3).contains { Array(bytes[$0..<$0 + 4]) == oldSenderBytes })
    }
    #expect(after.map(\.datagram.counter) == Array(1...UInt32(after.count)))
  }
}
