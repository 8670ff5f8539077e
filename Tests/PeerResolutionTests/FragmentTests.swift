@_spi(Resolver) import Core
import Foundation
import Testing

@testable import PeerResolution

@Suite("Fragments of messages larger than a datagram")
struct FragmentTests {
  let now = Date(timeIntervalSince1970: 1_800_000_000)
  let sender = PeerAddress(transport: "memory", bytes: [1])!
  let body = (0..<150_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }

  @Test("split then put back together, in any order, a repeated fragment changing nothing")
  func roundTrip() throws {
    let parts = try #require(Fragments.split(body, datagramLimit: 65_507, messageID: 9))
    #expect(parts.count == 3)
    #expect(parts.allSatisfy { $0.count + PeerHeader.overhead <= 65_507 })
    var reassembler = Reassembler()
    var results: [[UInt8]?] = []
    for part in [parts[2], parts[0], parts[2], parts[1]] {
      results.append(try reassembler.add(part, kind: .answer, from: sender, now: now))
    }
    #expect(results.prefix(3).allSatisfy { $0 == nil })
    #expect(results.last == body)
    #expect(reassembler.count == 0)
  }

  @Test("more fragments than the limit are neither made nor accepted")
  func limits() throws {
    #expect(Fragments.split(body, datagramLimit: 10_000, messageID: 1) == nil)
    var writer = ByteWriter()
    writer.u64(1)
    writer.u8(0)
    writer.u8(UInt8(PeerLimits.maximumFragments + 1))
    var reassembler = Reassembler()
    let tooMany = writer.bytes
    #expect(throws: PeerWireError.invalid("fragment count")) {
      try reassembler.add(tooMany, kind: .answer, from: sender, now: now)
    }
    #expect(throws: PeerWireError.truncated) {
      try reassembler.add([1, 2, 3], kind: .answer, from: sender, now: now)
    }
  }

  @Test("a fragment of another kind than its message's is refused")
  func kindsAgree() throws {
    let parts = try #require(Fragments.split(body, datagramLimit: 65_507, messageID: 9))
    var reassembler = Reassembler()
    _ = try reassembler.add(parts[0], kind: .answer, from: sender, now: now)
    #expect(throws: PeerWireError.invalid("fragment")) {
      try reassembler.add(parts[1], kind: .query, from: sender, now: now)
    }
  }

  @Test("waiting messages are bounded in number and in time")
  func bounded() throws {
    var reassembler = Reassembler()
    for id in 1...UInt64(PeerLimits.maximumReassemblies + 3) {
      let parts = try #require(Fragments.split(body, datagramLimit: 65_507, messageID: id))
      _ = try reassembler.add(
        parts[0], kind: .answer, from: sender, now: now.addingTimeInterval(Double(id) / 100))
    }
    #expect(reassembler.count == PeerLimits.maximumReassemblies)
    reassembler.expire(now: now.addingTimeInterval(PeerLimits.reassemblyTimeout + 1))
    #expect(reassembler.count == 0)
  }

  @Test("a message whose fragments keep arriving is kept past the timeout from its first")
  func slowButSteady() throws {
    var reassembler = Reassembler()
    let parts = try #require(Fragments.split(body, datagramLimit: 30_000, messageID: 42))
    #expect(parts.count >= 3)
    // One fragment every two thirds of the timeout: the whole spans more than the timeout.
    let step = PeerLimits.reassemblyTimeout * 2 / 3
    var whole: [UInt8]?
    for (index, part) in parts.enumerated() {
      whole = try reassembler.add(
        part, kind: .answer, from: sender, now: now.addingTimeInterval(Double(index) * step))
    }
    #expect(whole == body)
  }
}
