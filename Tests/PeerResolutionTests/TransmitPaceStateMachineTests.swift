@_spi(Resolver) import Core
import Foundation
@_spi(Resolver) import PeerResolution
import Strategy
import Testing
import Tokens

/// The owner's side of "transmit less often once answered", on plain instants: a question
/// that names a medium slows it, the same question again says nothing new, silence for twice
/// `lostAfter` brings it back to seeking, a new token starts over.
@Suite("Transmit pace: answered once asked, seeking after silence (on plain instants)")
struct TransmitPaceStateMachineTests {
  let start = Date(timeIntervalSince1970: 1_800_000_000)
  let device = DeviceID.random()
  let token = Token(value: 0x0a0b)

  func at(_ seconds: Double) -> Date { start.addingTimeInterval(seconds) }

  func machine() -> TransmitPaceStateMachine {
    TransmitPaceStateMachine(configuration: .init(lostAfter: .seconds(10)))
  }

  @Test("a question naming audio slows audio once; a later question on it says nothing more")
  func questionSlowsOnce() {
    var machine = machine()
    let first = machine.asked(device: device, token: token, mediums: .audio, now: at(0))
    #expect(
      first.map(\.change) == [
        TransmitPaceChange(
          token: token, mediums: .audio, pace: .answered(refreshWithin: .seconds(10)))
      ])
    #expect(first.map(\.device) == [device])
    #expect(machine.asked(device: device, token: token, mediums: .audio, now: at(5)).isEmpty)
    // BLE named for the first time: only BLE is new.
    let both = machine.asked(device: device, token: token, mediums: [.audio, .ble], now: at(6))
    #expect(both.map(\.change.mediums) == [.ble])
    #expect(machine.asked(device: device, token: token, mediums: [], now: at(7)).isEmpty)
  }

  @Test("twenty seconds without a question on a medium: seeking again, that medium only")
  func silenceBringsSeekingBack() {
    var machine = machine()
    _ = machine.asked(device: device, token: token, mediums: .audio, now: at(0))
    _ = machine.asked(device: device, token: token, mediums: .ble, now: at(12))
    #expect(machine.tick(now: at(19.9)).isEmpty)
    // A hearer refreshing every lostAfter keeps it answered.
    _ = machine.asked(device: device, token: token, mediums: .audio, now: at(10))
    #expect(machine.tick(now: at(29.9)).isEmpty)
    let back = machine.tick(now: at(30))
    #expect(
      back.map(\.change) == [TransmitPaceChange(token: token, mediums: .audio, pace: .seeking)])
    #expect(machine.tick(now: at(31)).isEmpty)
    #expect(machine.tick(now: at(32)).map(\.change.mediums) == [.ble])
    // Asked again after that: answered again.
    #expect(machine.asked(device: device, token: token, mediums: .audio, now: at(33)).count == 1)
  }

  @Test("a question about a new token answers the new token; the old one's record is gone")
  func newTokenStartsOver() {
    var machine = machine()
    _ = machine.asked(device: device, token: token, mediums: .audio, now: at(0))
    let rotated = Token(value: 0x0c0d)
    let changes = machine.asked(device: device, token: rotated, mediums: .audio, now: at(1))
    #expect(changes.map(\.change.token) == [rotated])
    // Only the new token's medium returns to seeking, and only once.
    #expect(machine.tick(now: at(21)).map(\.change.token) == [rotated])
    #expect(machine.tick(now: at(60)).isEmpty)
  }

  @Test("a removed device is forgotten: nothing said about it after")
  func removedDeviceIsForgotten() {
    var machine = machine()
    _ = machine.asked(device: device, token: token, mediums: .audio, now: at(0))
    machine.remove(device)
    #expect(machine.tick(now: at(100)).isEmpty)
  }
}
